// libvips from Debian's libvips-dev, for attachment thumbnails (`TallyImages.Thumbnailer`).
// Its operations take NULL-terminated option lists (C varargs), which Swift cannot call, so
// each use is one small function here.
#include <vips/vips.h>
#include <stddef.h>

// Starts libvips once per process; 0 on success.
static inline int tally_vips_start(void) {
    return VIPS_INIT("tally");
}

// A JPEG thumbnail of the image in `input` that fits in `size`×`size` pixels: decoded with
// shrink-on-load (JPEG, HEIC/HEIF, PNG, WebP, GIF), turned upright by its EXIF orientation,
// and saved without metadata (no EXIF, GPS or ICC left in it). On success returns 0 and a
// g_malloc'ed buffer in *output (free with g_free); -2 if the image claims more than
// `max_pixels` (a decompression bomb is refused from its header, before any decoding);
// otherwise -1 (`vips_error_buffer` says why).
static inline int tally_vips_thumbnail_jpeg(const void *input, size_t input_length, int size, int quality, double max_pixels,
                                            void **output, size_t *output_length) {
    VipsImage *header = vips_image_new_from_buffer(input, input_length, "", NULL);
    if (header == NULL) return -1;
    double pixels = (double)vips_image_get_width(header) * (double)vips_image_get_height(header);
    g_object_unref(header);
    if (pixels > max_pixels) return -2;
    VipsImage *image = NULL;
    if (vips_thumbnail_buffer((void *)input, input_length, &image, size, "height", size, NULL) != 0) return -1;
    int result = vips_jpegsave_buffer(image, output, output_length, "Q", quality, "strip", TRUE, "optimize_coding", TRUE, NULL);
    g_object_unref(image);
    return result;
}

// Width and height of the image in `input` as it would be shown (orientation applied); 0 on success.
static inline int tally_vips_upright_size(const void *input, size_t input_length, int *width, int *height) {
    VipsImage *image = vips_image_new_from_buffer(input, input_length, "", NULL);
    if (image == NULL) return -1;
    VipsImage *upright = NULL;
    int result = vips_autorot(image, &upright, NULL);
    if (result == 0) {
        *width = vips_image_get_width(upright);
        *height = vips_image_get_height(upright);
        g_object_unref(upright);
    }
    g_object_unref(image);
    return result;
}

// Whether the image in `input` carries an EXIF block (a thumbnail must not).
static inline int tally_vips_has_exif(const void *input, size_t input_length) {
    VipsImage *image = vips_image_new_from_buffer(input, input_length, "", NULL);
    if (image == NULL) return -1;
    int found = vips_image_get_typeof(image, VIPS_META_EXIF_NAME) != 0;
    g_object_unref(image);
    return found;
}

// Test fixtures: a `width`×`height` gradient saved as JPEG (with EXIF orientation
// `orientation` and a GPS-bearing EXIF block when `orientation` > 0) or, with `heif` set, as
// HEIC. 0 on success, the g_malloc'ed bytes in *output.
static inline int tally_vips_fixture(int width, int height, int orientation, int heif, void **output, size_t *output_length) {
    VipsImage *x = NULL, *rgb = NULL, *image = NULL;
    if (vips_xyz(&x, width, height, NULL) != 0) return -1;
    VipsImage *bands[2];
    if (vips_extract_band(x, &bands[0], 0, NULL) != 0) { g_object_unref(x); return -1; }
    if (vips_extract_band(x, &bands[1], 1, NULL) != 0) { g_object_unref(bands[0]); g_object_unref(x); return -1; }
    VipsImage *three[3] = {bands[0], bands[1], bands[0]};
    int result = vips_bandjoin(three, &rgb, 3, NULL);
    if (result == 0) result = vips_cast_uchar(rgb, &image, NULL);
    if (result == 0) {
        if (orientation > 0) {
            vips_image_set_int(image, VIPS_META_ORIENTATION, orientation);
            vips_image_set_string(image, "exif-ifd3-GPSLatitude", "37/1 33/1 0/1");
        }
        result = heif ? vips_heifsave_buffer(image, output, output_length, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_HEVC, NULL)
                      : vips_jpegsave_buffer(image, output, output_length, NULL);
    }
    if (image) g_object_unref(image);
    if (rgb) g_object_unref(rgb);
    g_object_unref(bands[0]);
    g_object_unref(bands[1]);
    g_object_unref(x);
    return result;
}
