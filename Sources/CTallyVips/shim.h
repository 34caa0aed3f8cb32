// libvips from Debian's libvips-dev, for attachment thumbnails (`TallyImages.Thumbnailer`).
// Its operations take NULL-terminated option lists (C varargs), which Swift cannot call, so
// each use is one small function here.
#include <vips/vips.h>
#include <stddef.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

// For a thumbnail worker: killed when the server that started it dies (prctl is variadic,
// which Swift cannot call). 0 on success; -1 if the server is already gone.
static inline int tally_die_with_parent(pid_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    return getppid() == parent ? 0 : -1;
}

// Starts libvips for a server: no operation cache (a thumbnail is kept as a blob of its own,
// and a cached decode would hold its pixels after the request) and one worker thread per
// decode (the caller bounds how many decodes run at once, so threads and memory stay bounded).
static inline int tally_vips_start_bounded(void) {
    if (VIPS_INIT("tally") != 0) return -1;
    vips_cache_set_max(0);
    vips_concurrency_set(1);
    return 0;
}

// What an image's header says, read without decoding a pixel.
typedef struct {
    int width, height, bands, bytes_per_band;
    // The loader's name ("jpegload_buffer", "pngload_buffer", "heifload_buffer", ...) and
    // whether the file is interlaced (an Adam7 PNG, a progressive JPEG): such files are
    // decoded whole, not strip by strip.
    char loader[32];
    int interlaced;
} TallyImageHeader;

// Reads the header of the image in `input`; 0 on success, -1 if libvips cannot read it.
static inline int tally_vips_header(const void *input, size_t input_length, TallyImageHeader *header) {
    VipsImage *image = vips_image_new_from_buffer(input, input_length, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (image == NULL) return -1;
    header->width = vips_image_get_width(image);
    header->height = vips_image_get_height(image);
    header->bands = vips_image_get_bands(image);
    header->bytes_per_band = (int)vips_format_sizeof(vips_image_get_format(image));
    const char *loader = NULL;
    header->loader[0] = 0;
    if (vips_image_get_typeof(image, "vips-loader") && vips_image_get_string(image, "vips-loader", &loader) == 0 && loader) {
        g_strlcpy(header->loader, loader, sizeof header->loader);
    }
    header->interlaced = 0;
    if (vips_image_get_typeof(image, "interlaced")) vips_image_get_int(image, "interlaced", &header->interlaced);
    g_object_unref(image);
    return 0;
}

// A JPEG thumbnail of the image in `input` that fits in `size`×`size` pixels: decoded with
// shrink-on-load (JPEG, HEIC/HEIF, PNG, WebP, GIF), turned upright by its EXIF orientation,
// and saved without metadata (no EXIF, GPS or ICC left in it). The caller has checked the
// header (`tally_vips_header`) against its memory bound first.
//
// The thumbnail is pulled a row at a time, the deadline checked before each row: every row
// of a thumbnail shrinks an equal share of the source's rows, so a huge streaming image (a
// 150-megapixel PNG takes ~6 s) is stopped within a row of its deadline. (libvips's own
// "eval" progress signal fires once per saved buffer — once for a whole thumbnail — so it
// cannot stop one.) On success returns 0 and a g_malloc'ed buffer in *output (free with
// g_free); -3 if the deadline, `timeout_ms` from now, stopped it; otherwise -1
// (`vips_error_buffer` says why).
static inline int tally_vips_thumbnail_jpeg(const void *input, size_t input_length, int size, int quality, int timeout_ms,
                                            void **output, size_t *output_length) {
    gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
    VipsImage *image = NULL;
    if (vips_thumbnail_buffer((void *)input, input_length, &image, size, "height", size, NULL) != 0) return -1;
    VipsImage *pixels = vips_image_new_memory();
    VipsRegion *region = vips_region_new(image);
    int result = vips_image_pipelinev(pixels, VIPS_DEMAND_STYLE_THINSTRIP, image, NULL);
    for (int y = 0; result == 0 && y < image->Ysize; y++) {
        if (g_get_monotonic_time() > deadline) { result = -3; break; }
        VipsRect row = {0, y, image->Xsize, 1};
        result = vips_region_prepare(region, &row);
        if (result == 0) result = vips_image_write_line(pixels, y, VIPS_REGION_ADDR(region, 0, y));
    }
    if (result == 0) {
        result = vips_jpegsave_buffer(pixels, output, output_length, "Q", quality, "strip", TRUE, "optimize_coding", TRUE, NULL);
    }
    g_object_unref(region);
    g_object_unref(pixels);
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
