import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing
import TallyCore
@testable import TallyImages
import TallyLog
import TallyServer
import TallyTestSupport

/// Thumbnails (libvips): upright by the photo's EXIF orientation, without metadata, for JPEG
/// and HEIC, made once and kept as blobs.
@Suite struct ThumbnailTests {
    let folder = TemporaryDirectory("tally-thumbnails")

    /// A landscape photo (1200×800 pixels as stored) whose EXIF says "rotate 90° to show": shown
    /// upright it is portrait, 800×1200.
    @Test func aJPEGThumbnailIsUprightAndCarriesNoMetadata() throws {
        let photo = try Thumbnailer.fixture(width: 1200, height: 800, orientation: 6, heic: false)
        #expect(try Thumbnailer.hasEXIF(photo))
        #expect(try Thumbnailer.uprightSize(of: photo) == (800, 1200))
        let thumbnail = try Thumbnailer.jpegThumbnail(of: photo, size: 256)
        let size = try Thumbnailer.uprightSize(of: thumbnail)
        #expect(size.height == 256 && size.width < size.height, "portrait, as the photo is shown: \(size)")
        #expect(try !Thumbnailer.hasEXIF(thumbnail), "no EXIF (orientation, GPS) left")
        #expect(AttachmentType.sniff(thumbnail) == "image/jpeg")
    }

    @Test func aHEICPhotoGetsAThumbnail() throws {
        let photo = try Thumbnailer.fixture(width: 640, height: 480, orientation: 0, heic: true)
        #expect(AttachmentType.sniff(photo) == "image/heic" || AttachmentType.sniff(photo) == "image/heif")
        let thumbnail = try Thumbnailer.jpegThumbnail(of: photo, size: 128)
        let size = try Thumbnailer.uprightSize(of: thumbnail)
        #expect(size.width == 128 && size.height == 96, "\(size)")
    }

    @Test func theRouteMakesItOnceServesItAndRefusesWhatIsNoImage() async throws {
        let directory = try DataDirectory.create(path: folder.file("r"), name: "r")
        let service = try TallyService(directory: directory, logger: Logger(label: "test"))
        defer { service.close() }
        let token = try service.tokens.create(name: "phone", scopes: [.read, .write])
        let photo = try service.ledger.blobs.store(try Thumbnailer.fixture(width: 1200, height: 800, orientation: 6, heic: false))
        let pdf = try service.ledger.blobs.store(Data("%PDF-1.4\n%%EOF\n".utf8))
        try await Application(router: buildRouter(service)).test(.router) { client in
            let auth: HTTPFields = [.authorization: "Bearer \(token)"]
            let first = try await client.execute(uri: "/v1/attachments/\(photo.digest)/thumbnail?size=256", method: .get, headers: auth)
            #expect(first.status == .ok && first.headers[.contentType] == "image/jpeg")
            let size = try Thumbnailer.uprightSize(of: Data(first.body.readableBytesView))
            #expect(size.height == 256 && size.width < 256)
            let blobs = try service.ledger.blobs.all().count
            let second = try await client.execute(uri: "/v1/attachments/\(photo.digest)/thumbnail?size=256", method: .get, headers: auth)
            #expect(Array(second.body.readableBytesView) == Array(first.body.readableBytesView))
            #expect(try service.ledger.blobs.all().count == blobs, "made once, then served from its blob")
            #expect(try await client.execute(uri: "/v1/attachments/\(photo.digest)/thumbnail?size=300", method: .get, headers: auth).status == .badRequest)
            #expect(try await client.execute(uri: "/v1/attachments/\(photo.digest)/thumbnail?size=-1", method: .get, headers: auth).status == .badRequest)
            #expect(try await client.execute(uri: "/v1/attachments/\(pdf.digest)/thumbnail", method: .get, headers: auth).status == .unsupportedMediaType)
            #expect(
                try await client.execute(uri: "/v1/attachments/\(String(repeating: "1", count: 64))/thumbnail", method: .get, headers: auth).status == .notFound
            )
        }
    }

    /// A file that says it is a JPEG but is not one is an error, not a crash.
    @Test func aBrokenImageIsRefused() throws {
        #expect(throws: Thumbnailer.Failure.self) { try Thumbnailer.jpegThumbnail(of: Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3]), size: 128) }
    }

    /// A decompression bomb: a small PNG whose header claims 60,000 × 60,000 pixels is refused
    /// from its header, without decoding (or allocating) 3.6 gigapixels.
    @Test func anImageClaimingTooManyPixelsIsRefusedFromItsHeader() throws {
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ data: [UInt8]) {
            let body = Array(type.utf8) + data
            png += withUnsafeBytes(of: UInt32(data.count).bigEndian, Array.init) + body
            png += withUnsafeBytes(of: PNGFixture.crc32(body).bigEndian, Array.init)
        }
        let side = withUnsafeBytes(of: UInt32(60_000).bigEndian, Array.init)
        chunk("IHDR", side + side + [8, 2, 0, 0, 0])
        chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])
        chunk("IEND", [])
        #expect { try Thumbnailer.jpegThumbnail(of: Data(png), size: 128) } throws: { "\($0)".contains("megapixels") }
    }
}
