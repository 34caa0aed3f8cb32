import Foundation
import Synchronization
import Testing
import TallyCore
@testable import TallyImages
import TallyLog
import TallyTestSupport

/// Issue 29: a thumbnail's decode is bounded by memory (estimated from the header), by time,
/// and by how many run at once.
@Suite struct ThumbnailBoundTests {
    /// The PNG bomb of issue 29, 12,247² 16-bit RGBA, Adam7: libvips would decode it whole
    /// (1.2 GB); it is refused from its header.
    @Test func anInterlaced16BitBombIsRefusedByItsDecodeMemory() throws {
        let bomb = PNGFixture.zeros(width: 12_247, height: 12_247, bitDepth: 16, interlaced: true)
        #expect(bomb.count < 8 << 20, "a small file: \(bomb.count) bytes")
        let header = try #require(ImageHeader.read(bomb))
        #expect(header.isInterlaced && header.bands == 4 && header.bytesPerBand == 2 && header.loader.hasPrefix("pngload"))
        #expect(header.decodeBytes(size: 128) == (12_247 * 12_247 * 8, true))
        #expect { try Thumbnailer.jpegThumbnail(of: bomb, size: 128) } throws: { error in
            guard case .tooMuchMemory(let needs, let limit, true)? = error as? Thumbnailer.Failure else { return false }
            return needs > 1_000 << 20 && limit == ThumbnailLimits().maxDecodeBytes && "\(error)".contains("MiB")
        }
    }

    /// The same image not interlaced is read a strip at a time (a few MiB), but takes seconds
    /// of a core: the decode stops at its time limit.
    @Test func aHugeStreamingImageIsStoppedAtItsTimeLimit() throws {
        let huge = PNGFixture.zeros(width: 12_247, height: 12_247, bitDepth: 16, interlaced: false)
        let header = try #require(ImageHeader.read(huge))
        #expect(!header.isInterlaced && header.decodeBytes(size: 128).bytes < 32 << 20)
        let start = ContinuousClock.now
        #expect(throws: Thumbnailer.Failure.tookTooLong(.milliseconds(300))) {
            try Thumbnailer.jpegThumbnail(of: huge, size: 128, limits: ThumbnailLimits(decodeTimeout: .milliseconds(300)))
        }
        #expect(ContinuousClock.now - start < .seconds(4), "stopped near its limit, not after the whole image")
    }

    /// Interlaced images within the limit are made as before (the fixture is a real PNG).
    @Test func anInterlacedImageWithinTheLimitGetsAThumbnail() throws {
        let png = PNGFixture.zeros(width: 300, height: 200, bitDepth: 8, interlaced: true)
        let thumbnail = try Thumbnailer.jpegThumbnail(of: png, size: 128)
        #expect(try Thumbnailer.uprightSize(of: thumbnail) == (128, 85))
        #expect(throws: Thumbnailer.Failure.self) {
            try Thumbnailer.jpegThumbnail(of: png, size: 128, limits: ThumbnailLimits(maxDecodeBytes: 300 * 200 * 4 - 1))
        }
    }

    /// A progressive JPEG keeps every coefficient: it is counted whole, a plain one by strips.
    @Test func aProgressiveJPEGIsCountedWhole() {
        let plain = ImageHeader(width: 8_000, height: 6_000, bands: 3, bytesPerBand: 1, loader: "jpegload_buffer", isInterlaced: false)
        var progressive = plain
        progressive.isInterlaced = true
        #expect(plain.decodeBytes(size: 128).bytes < 4 << 20)
        #expect(progressive.decodeBytes(size: 128).bytes == 8_000 * 6_000 * 3 * 2)
        let iPhone48 = ImageHeader(width: 8_064, height: 6_048, bands: 3, bytesPerBand: 1, loader: "heifload_buffer", isInterlaced: false)
        #expect(iPhone48.decodeBytes(size: 128).bytes <= ThumbnailLimits().maxDecodeBytes, "a 48-megapixel iPhone HEIC is taken")
    }

    /// Issue 29's review: a wide strip of an image made into a one-row thumbnail holds every
    /// row of it (655,000 × 229 × 16-bit RGBA: 1.2 GB), and PNG text chunks inflate (100
    /// zTXt chunks of 8 MB in a 771 KB file): both are counted, and refused.
    @Test func wideStripsAndInflatingMetadataAreCounted() throws {
        let wide = ImageHeader(width: 655_000, height: 229, bands: 4, bytesPerBand: 2, loader: "pngload_buffer", isInterlaced: false)
        #expect(wide.decodeBytes(size: 256) == (655_000 * 8 * 229, false))
        let tall = ImageHeader(width: 300, height: 100_000, bands: 3, bytesPerBand: 1, loader: "pngload_buffer", isInterlaced: false)
        #expect(tall.decodeBytes(size: 128).bytes == 300 * 3 * (2 * (100_000 / 128 + 2)))
        func withTextChunks(_ count: Int, bytes: Int) -> Data {
            var png = PNGFixture.zeros(width: 64, height: 64, bitDepth: 8, interlaced: false)
            var chunks = Data()
            for _ in 0..<count {
                let body = Array("zTXtcomment".utf8) + [0, 0] + [UInt8](repeating: 0x41, count: bytes)  // counted, never inflated
                chunks +=
                    withUnsafeBytes(of: UInt32(body.count - 4).bigEndian, Array.init) + body + withUnsafeBytes(of: PNGFixture.crc32(body).bigEndian, Array.init)
            }
            png.insert(contentsOf: chunks, at: png.count - 12)  // before IEND
            return png
        }
        let heavy = withTextChunks(30, bytes: 8_000)
        #expect(PNGChunks.metadataBytes(heavy) == 30 * 2 * (9 + 8_000) * 1_032)  // keyword, its NUL, the method, the text
        #expect { try Thumbnailer.jpegThumbnail(of: heavy, size: 128) } throws: { error in
            guard case .tooMuchMemory(_, _, false)? = error as? Thumbnailer.Failure else { return false }
            return !"\(error)".contains("interlaced")
        }
        // Small text chunks cost little and are no reason to refuse (the review's false positive).
        #expect(PNGChunks.metadataBytes(withTextChunks(20, bytes: 8)) < 1 << 20)
    }

    /// Libvips's error text stays in the log: the answer names the problem.
    @Test func anUndecodableImageSaysSoWithoutLibraryInternals() {
        let broken = Data([0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 64))
        #expect { try Thumbnailer.jpegThumbnail(of: broken, size: 128) } throws: { error in
            let text = "\(error)"
            return text.contains("could not be read") && !text.lowercased().contains("vips") && !text.contains("seek")
        }
    }

    /// Eight photos asked at once are decoded at most `concurrentDecodes` at a time; requests
    /// for one photo share one decode; more waiting than `maxWaiting` are told to come back.
    @Test func theQueueBoundsDecodesAndSharesOne() async throws {
        let folder = TemporaryDirectory("tally-thumbnail-queue")
        let directory = try DataDirectory.create(path: folder.file("r"), name: "r")
        let store = BlobStore(directory: directory)
        let photos = try (0..<8).map { index in
            try store.store(PNGFixture.zeros(width: 600, height: 400, bitDepth: 8, interlaced: true, trailer: [UInt8(index)]))
        }
        let counter = DecodeCounter()
        // Each decode on a thread of its own (as the server's pool gives), held 200 ms.
        let queue = ThumbnailQueue(limits: ThumbnailLimits(concurrentDecodes: 2, maxWaiting: 32)) { work in
            try await offTheCooperativeThreads {
                counter.begin()
                defer { counter.end() }
                usleep(200_000)
                return try work()
            }
        }
        try await withThrowingTaskGroup(of: BlobInfo?.self) { group in
            for photo in photos { group.addTask { try await queue.thumbnail(of: photo.digest, size: 128, in: store) } }
            for _ in 0..<8 { group.addTask { try await queue.thumbnail(of: photos[0].digest, size: 256, in: store) } }
            var made = 0
            for try await info in group where info != nil { made += 1 }
            #expect(made == 16)
        }
        #expect((1...2).contains(counter.most), "never more than two decodes at once (two at a time unless the machine is loaded)")
        #expect(counter.total == 9, "eight photos at 128, and one decode for eight requests of one photo at 256")
        #expect(try await queue.thumbnail(of: photos[3].digest, size: 128, in: store) != nil)
        #expect(counter.total == 9, "made once, then read from its blob")

        let strict = ThumbnailQueue(limits: ThumbnailLimits(concurrentDecodes: 1, maxWaiting: 1)) { work in
            try await offTheCooperativeThreads {
                usleep(300_000); return try work()
            }
        }
        let others = try (0..<3).map { try store.store(PNGFixture.zeros(width: 64, height: 64, bitDepth: 8, interlaced: false, trailer: [0xA0 + UInt8($0)])) }
        let outcomes = await withTaskGroup(of: String.self) { group in
            for photo in others {
                group.addTask {
                    do { return try await strict.thumbnail(of: photo.digest, size: 128, in: store) == nil ? "missing" : "made" } catch { return "\(error)" }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == "made" }.count == 2 && outcomes.filter { $0.contains("already waiting") }.count == 1, "\(outcomes)")
    }
}

/// Found by review: a decode that failed was tried again at every request — a photo that
/// takes just past the time limit, asked for in a loop, kept both decoders busy for every
/// ledger of the process. A failure is remembered, and answered again without a decode.
@Suite struct ThumbnailFailureTests {
    @Test func aFailedDecodeIsAnsweredAgainWithoutAnother() async throws {
        let folder = TemporaryDirectory("tally-thumbnail-failure")
        let store = BlobStore(directory: try DataDirectory.create(path: folder.file("r"), name: "r"))
        let damaged = try store.store(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0x42, count: 500)))
        let counter = DecodeCounter()
        let queue = ThumbnailQueue(limits: ThumbnailLimits(concurrentDecodes: 2, maxWaiting: 32)) { work in
            try await offTheCooperativeThreads {
                counter.begin()
                defer { counter.end() }
                return try work()
            }
        }
        var failures: [String] = []
        for _ in 0..<3 {
            do { _ = try await queue.thumbnail(of: damaged.digest, size: 128, in: store) } catch { failures.append("\(error)") }
        }
        #expect(failures.count == 3 && Set(failures).count == 1, "\(failures)")
        #expect(counter.total == 1, "one decode, then its failure remembered")
    }
}

/// Counts decodes running at once (the queue's test).
final class DecodeCounter: Sendable {
    private let state = Mutex((running: 0, most: 0, total: 0))
    func begin() {
        state.withLock {
            $0.running += 1; $0.total += 1; $0.most = max($0.most, $0.running)
        }
    }
    func end() { state.withLock { $0.running -= 1 } }
    var most: Int { state.withLock { $0.most } }
    var total: Int { state.withLock { $0.total } }
}
