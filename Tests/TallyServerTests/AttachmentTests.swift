import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing
import TallyCore
import TallyImages
import TallyLedger
import TallyLog
@testable import TallyServer
import MultipartKit
import TallySync
import TallyTestSupport

/// Attachments over HTTP: upload (raw and multipart), download with ETag and Range, the
/// limits, and the rule that a local write references only blobs this replica holds.
@Suite struct AttachmentTests {
    let folder = TemporaryDirectory("tally-attachments")

    /// A minimal JPEG-looking file: the JPEG magic, then `size` bytes of a pattern.
    static func jpeg(_ size: Int, seed: UInt8 = 7) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xE0] + (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    func service(maxBytes: Int = 25 << 20) throws -> TallyService {
        let directory = try DataDirectory.create(path: folder.file("r-\(UUID().uuidString.prefix(6))"), name: "r")
        return try TallyService(
            directory: directory, logger: Logger(label: "test"),
            attachmentLimits: AttachmentLimits(maxBytes: maxBytes))
    }

    /// Issue 29: polyglots (a GIF, a JPEG or a PDF followed by HTML and script) are taken as
    /// their type, and served so that no browser runs them: `nosniff`, a policy that allows
    /// nothing and sandboxes, and a download for anything but the image types browsers show.
    @Test func polyglotsAreServedSoNoBrowserRunsThem() async throws {
        let service = try service()
        defer { service.close() }
        let token = try service.tokens.create(name: "phone", scopes: [.read, .write])
        let script = Array("<html><script>alert(document.domain)</script></html>".utf8)
        let polyglots: [(type: String, bytes: [UInt8], disposition: String)] = [
            ("image/gif", Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0, 0x3B] + script, "inline"),
            ("image/jpeg", [0xFF, 0xD8, 0xFF, 0xE0] + script, "inline"),
            ("application/pdf", Array("%PDF-1.4\n1 0 obj << /OpenAction << /S /JavaScript /JS (app.alert(1)) >> >> endobj\n".utf8) + script, "attachment"),
        ]
        try await Application(router: buildRouter(service)).test(.router) { client in
            for polyglot in polyglots {
                let upload = try await client.execute(
                    uri: "/v1/attachments", method: .post, headers: [.authorization: "Bearer \(token)"],
                    body: ByteBuffer(bytes: polyglot.bytes))
                #expect(upload.status == .created && String(buffer: upload.body).contains(polyglot.type))
                let digest = Hex.lowercase(SHA256Digest(polyglot.bytes))
                for method in [HTTPRequest.Method.get, .head] {
                    let served = try await client.execute(uri: "/v1/attachments/\(digest)", method: method, headers: [.authorization: "Bearer \(token)"])
                    #expect(served.status == .ok && served.headers[.contentType] == polyglot.type)
                    #expect(served.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                    #expect(served.headers[HTTPField.Name("Content-Security-Policy")!] == "default-src 'none'; sandbox")
                    let disposition = served.headers[.contentDisposition] ?? ""
                    #expect(disposition.hasPrefix(polyglot.disposition + "; filename=\"\(digest)."), "\(polyglot.type): \(disposition)")
                }
            }
        }
    }

    @Test func anUploadIsStoredOnceAndStreamsBackWithETagAndRanges() async throws {
        let service = try service()
        defer { service.close() }
        let token = try service.tokens.create(name: "phone", scopes: [.read, .write])
        let bytes = Self.jpeg(300_000)
        try await Application(router: buildRouter(service)).test(.router) { client in
            let headers: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "image/jpeg"]
            let first = try await client.execute(uri: "/v1/attachments", method: .post, headers: headers, body: ByteBuffer(bytes: bytes))
            #expect(first.status == .created)
            let answer = String(buffer: first.body)
            let digest = Hex.lowercase(SHA256Digest(bytes))
            #expect(answer.contains("\"digest\":\"\(digest)\"") && answer.contains("\"size\":\(bytes.count)") && answer.contains("image/jpeg"), "\(answer)")
            // The same bytes again: one blob.
            #expect(try await client.execute(uri: "/v1/attachments", method: .post, headers: headers, body: ByteBuffer(bytes: bytes)).status == .created)
            #expect(try service.ledger.blobs.all().map(\.digest) == [digest])

            let auth: HTTPFields = [.authorization: "Bearer \(token)"]
            let whole = try await client.execute(uri: "/v1/attachments/\(digest)", method: .get, headers: auth)
            #expect(whole.status == .ok && Array(whole.body.readableBytesView) == bytes)
            #expect(whole.headers[.eTag] == "\"\(digest)\"" && whole.headers[.contentType] == "image/jpeg")
            #expect(whole.headers[.contentLength] == "\(bytes.count)" && whole.headers[.cacheControl]?.contains("immutable") == true)
            var ranged = auth
            ranged[.range] = "bytes=10-19"
            let part = try await client.execute(uri: "/v1/attachments/\(digest)", method: .get, headers: ranged)
            #expect(part.status == .partialContent && Array(part.body.readableBytesView) == Array(bytes[10...19]))
            #expect(part.headers[.contentRange] == "bytes 10-19/\(bytes.count)")
            ranged[.range] = "bytes=-5"
            #expect(
                Array(try await client.execute(uri: "/v1/attachments/\(digest)", method: .get, headers: ranged).body.readableBytesView)
                    == Array(bytes.suffix(5)))
            for unsatisfiable in ["bytes=\(bytes.count)-", "bytes=-0"] {  // the second once answered with no body at all
                ranged[.range] = unsatisfiable
                let refused = try await client.execute(uri: "/v1/attachments/\(digest)", method: .get, headers: ranged)
                #expect(refused.status == .rangeNotSatisfiable && refused.headers[.contentRange] == "bytes */\(bytes.count)")
                #expect(String(buffer: refused.body).contains("range_not_satisfiable"), "\(unsatisfiable): a JSON error")
            }
            var cached = auth
            cached[.ifNoneMatch] = "\"\(digest)\""
            #expect(try await client.execute(uri: "/v1/attachments/\(digest)", method: .get, headers: cached).status == .notModified)
            let head = try await client.execute(uri: "/v1/attachments/\(digest)", method: .head, headers: auth)
            #expect(head.status == .ok && head.body.readableBytes == 0 && head.headers[.contentLength] == "\(bytes.count)")
            // Hostile or unknown digests.
            #expect(try await client.execute(uri: "/v1/attachments/\(String(repeating: "0", count: 64))", method: .get, headers: auth).status == .notFound)
            #expect(try await client.execute(uri: "/v1/attachments/..%2F..%2Freplica.key", method: .get, headers: auth).status == .badRequest)
            #expect(try await client.execute(uri: "/v1/attachments/ABC", method: .get, headers: auth).status == .badRequest)
        }
    }

    @Test func aMultipartFormFromAPhoneIsParsedAsItArrives() async throws {
        let service = try service()
        defer { service.close() }
        let token = try service.tokens.create(name: "phone", scopes: [.read, .write])
        let photo = Self.jpeg(100_000, seed: 3)
        let boundary = "----tally\(UUID().uuidString.prefix(8))"
        var body = Array(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nlunch\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"영수증 IMG_0001.JPG\"\r\nContent-Type: image/jpeg\r\n\r\n"
                .utf8)
        body += photo + Array("\r\n--\(boundary)--\r\n".utf8)
        let form = body
        try await Application(router: buildRouter(service)).test(.router) { client in
            let response = try await client.execute(
                uri: "/v1/attachments", method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=\(boundary)"],
                body: ByteBuffer(bytes: form))
            #expect(response.status == .created, "\(String(buffer: response.body))")
            #expect(try service.ledger.blobs.all().map(\.digest) == [Hex.lowercase(SHA256Digest(photo))])
            // Hostile forms: no boundary, an empty one, no file part, garbage.
            let typed = "multipart/form-data; boundary=\(boundary)"
            func text(_ string: String) -> [UInt8] { Array(string.utf8) }
            var hostile: [(String, [UInt8])] = [("multipart/form-data", form), ("multipart/form-data; boundary=", form)]
            hostile.append((typed, text("--\(boundary)\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n1\r\n--\(boundary)--\r\n")))
            hostile.append((typed, text("garbage")))
            // Found by schemathesis: a non-ASCII byte in a part's header name crashed MultipartKit 4.7.1.
            hostile.append((typed, text("--\(boundary)\r\n") + [0xF2, 0xBE, 0x82, 0xA9, 0xC3, 0x8A] + text("--\(boundary)--\r\n")))
            hostile.append((typed, text("--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\nX-\u{00e9}: 1\r\n\r\nx\r\n--\(boundary)--\r\n")))
            // Found by review: a delimiter mid-line in the preamble, and a bare LF before a closing one.
            hostile.append((typed, text("x--\(boundary)\r\n") + [0xFF] + text(": v\r\n\r\n")))
            let closing = text("--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\na\n--\(boundary)--\r\n--\(boundary)\r\n")
            hostile.append((typed, closing + [0xFF] + text(": v\r\n\r\n")))
            // Found by a hostile run: a 40 MiB header line cost MultipartKit a minute of CPU (it
            // copies the header it reads at every piece): a line over 8 KiB, or header lines over
            // 32 KiB together, are refused as they arrive.
            let longLine = text("--\(boundary)\r\nX-Junk: " + String(repeating: "a", count: 9_000) + "\r\n\r\nx\r\n--\(boundary)--\r\n")
            let manyLines = text(
                "--\(boundary)\r\n" + String(repeating: "X-Junk: " + String(repeating: "a", count: 1_000) + "\r\n", count: 40) + "\r\nx\r\n--\(boundary)--\r\n")
            hostile += [(typed, longLine), (typed, manyLines)]
            // Found by review: a bare LF inside a header value, then an empty-looking line — the
            // guard took them for the block's end, MultipartKit for a value's text and a new
            // header whose name began with 0x80: it read past its name table and trapped.
            hostile.append((typed, text("--\(boundary)\r\nX: a\n\r\n") + [0x80] + text(": v\r\n\r\nz\r\n--\(boundary)--\r\n")))
            // Found by review: a delimiter inside a header name (the guard took it for a new
            // block, MultipartKit for the name's text) and then 0x80 — the same trap.
            hostile.append((typed, text("--\(boundary)\r\n--\(boundary)") + [0x80]))
            hostile.append((typed, text("--\(boundary)\r\nX: --\(boundary)\r\n--\(boundary)") + [0x80] + text(": v\r\n\r\nz\r\n--\(boundary)--\r\n")))
            for (type, payload) in hostile {
                let refused = try await client.execute(
                    uri: "/v1/attachments", method: .post,
                    headers: [.authorization: "Bearer \(token)", .contentType: type], body: ByteBuffer(bytes: payload))
                #expect(refused.status == .badRequest, "\(type): \(refused.status) \(String(buffer: refused.body))")
                #expect(String(buffer: refused.body).contains("\"error\""))
                if payload == longLine || payload == manyLines { #expect(String(buffer: refused.body).contains("header lines are longer")) }
            }
            #expect(try service.ledger.blobs.all().count == 1, "a refused upload stores nothing")
        }
    }

    /// The header guard's promise, as a property: whatever part headers it lets through,
    /// MultipartKit's parser reads without trapping (it indexes a 128-entry table by each byte
    /// of a header's name). Random header blocks of the bytes that matter — letters, colons,
    /// blanks, CR, LF, the delimiter, bytes ≥ 0x80 — fed in random pieces; a trap here kills
    /// the test run.
    @Test func whatTheHeaderGuardLetsThroughNeverTrapsTheParser() throws {
        var random = SplitMix64(seed: 29)
        let pieces: [[UInt8]] =
            ["X-a", ": ", "v", "\r\n", "\r\n", "\r", "\n", "\n\r\n", " ", ":", "--B", "-"].map { Array($0.utf8) } + [[0x80], [0xFF], [0xC3, 0xA9]]
        var passed = 0
        for _ in 0..<20_000 {
            let header = (0..<Int.random(in: 1...12, using: &random)).flatMap { _ in pieces.randomElement(using: &random)! }
            let body = Array("--B\r\n".utf8) + header + Array("\r\n\r\nz\r\n--B--\r\n".utf8)
            var guardian = MultipartHeaderGuard(boundary: "B")
            let parser = MultipartParser(boundary: "B")
            var at = 0
            do {
                while at < body.count {
                    let end = min(body.count, at + Int.random(in: 1...8, using: &random))
                    try guardian.check(body[at..<end])
                    try parser.execute(ByteBuffer(bytes: body[at..<end]))
                    at = end
                }
                passed += 1
            } catch {}
        }
        #expect(passed > 100, "some of the blocks pass the guard and are parsed: \(passed)")
    }

    @Test func tooLargeUnknownAndEmptyUploadsAreRefusedAndLeaveNothing() async throws {
        let service = try service(maxBytes: 1 << 20)
        defer { service.close() }
        let token = try service.tokens.create(name: "phone", scopes: [.read, .write])
        try await Application(router: buildRouter(service)).test(.router) { client in
            let headers: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "application/octet-stream"]
            let big = try await client.execute(uri: "/v1/attachments", method: .post, headers: headers, body: ByteBuffer(bytes: Self.jpeg(2 << 20)))
            #expect(big.status == .contentTooLarge && String(buffer: big.body).contains("attachment_too_large"))
            let exe = try await client.execute(
                uri: "/v1/attachments", method: .post, headers: headers, body: ByteBuffer(bytes: Array("#!/bin/sh\nrm -rf /\n".utf8)))
            #expect(exe.status == .unsupportedMediaType)
            #expect(try await client.execute(uri: "/v1/attachments", method: .post, headers: headers, body: ByteBuffer()).status == .badRequest)
            let read = try service.tokens.create(name: "viewer", scopes: [.read])
            #expect(
                try await client.execute(
                    uri: "/v1/attachments", method: .post, headers: [.authorization: "Bearer \(read)"], body: ByteBuffer(bytes: Self.jpeg(10))
                ).status == .forbidden)
        }
        #expect(try service.ledger.blobs.all().isEmpty)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: service.ledger.blobs.path + "/incoming")) ?? [] == [], "no partial blob left")
    }

    /// A local write may reference only attachments this replica holds.
    @Test func anExpenseReferencesOnlyHeldAttachments() async throws {
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file("l"), name: "l"))
        defer { ledger.close() }
        let info = try ledger.blobs.store(Data(Self.jpeg(1_000)))
        let base: PropertyMap = [.kind: .string("expense"), .amount: .int(1200), .currency: .string("KRW")]
        var with = base
        with[.attachments] = .strings([info.digest])
        _ = try await ledger.create(.expense, with, actor: "cli:test")
        with[.attachments] = .strings([String(repeating: "a", count: 64)])
        await #expect { try await ledger.create(.expense, with, actor: "cli:test") } throws: { "\($0)".contains("upload it first") }
    }
}

/// SHA-256 of some bytes.
func SHA256Digest(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

/// Blobs travel with the events that reference them: in a bundle (checked before anything is
/// applied) and over HTTP (after the events, resumable).
@Suite struct AttachmentShippingTests {
    let folder = TemporaryDirectory("tally-attachment-shipping")

    /// A replica with one expense carrying a receipt; the receipt's digest and bytes.
    func replicaWithReceipt(_ name: String) async throws -> (DataDirectory, String, [UInt8]) {
        let directory = try DataDirectory.create(path: folder.file(name), name: name)
        let ledger = try Ledger(directory: directory)
        defer { ledger.close() }
        let bytes = AttachmentTests.jpeg(200_000, seed: UInt8(name.utf8.first ?? 1))
        let info = try ledger.blobs.store(Data(bytes))
        _ = try await ledger.create(
            .expense, [.kind: .string("expense"), .amount: .int(9_900), .currency: .string("KRW"), .attachments: .strings([info.digest])],
            actor: "cli:\(name)")
        return (directory, info.digest, bytes)
    }

    func export(_ source: DataDirectory) throws -> String {
        let path = folder.file("bundle-\(UUID().uuidString.prefix(6))")
        _ = try SegmentBundle.export(source, to: path, for: nil)
        return path
    }

    func importInto(_ target: DataDirectory, _ bundle: String) async throws -> Ledger.SyncReport {
        let ledger = try Ledger(directory: target)
        defer { ledger.close() }
        return try await ledger.importBundle(from: bundle)
    }

    @Test func aBundleCarriesTheReceiptAndTheOtherReplicaShowsItByteForByte() async throws {
        let (a, digest, bytes) = try await replicaWithReceipt("a")
        let bundle = try export(a)
        #expect(FileManager.default.fileExists(atPath: bundle + "/blobs/" + digest))
        let b = try DataDirectory.create(path: folder.file("b"), name: "b")
        _ = try await importInto(b, bundle)
        let copy = try Data(contentsOf: URL(fileURLWithPath: try BlobStore(directory: b).file(of: digest)))
        #expect(Array(copy) == bytes)
        let views = try LedgerViews.open(b)
        #expect(try views.missingAttachments().isEmpty)
        // Importing it again changes nothing.
        _ = try await importInto(b, bundle)
        #expect(try BlobStore(directory: b).all().count == 1)
    }

    /// A damaged, truncated or unlisted blob refuses the whole bundle: no event, no blob; so
    /// does a manifest whose listed sizes would add up past `Int.max` ("sizes").
    @Test(arguments: ["flip", "truncate", "extra", "link", "sizes"]) func aBadBlobRefusesTheWholeBundle(_ damage: String) async throws {
        let (a, digest, _) = try await replicaWithReceipt("a-\(damage)")
        let bundle = try export(a)
        let path = bundle + "/blobs/" + digest
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        switch damage {
        case "flip": bytes[bytes.count / 2] ^= 1; try Data(bytes).write(to: URL(fileURLWithPath: path))
        case "truncate": try Data(bytes.dropLast(10)).write(to: URL(fileURLWithPath: path))
        case "extra": try Data(bytes).write(to: URL(fileURLWithPath: bundle + "/blobs/" + String(repeating: "e", count: 64)))
        case "sizes":
            let other = String(repeating: "e", count: 64)
            try Data([1]).write(to: URL(fileURLWithPath: bundle + "/blobs/" + other))
            let manifestPath = bundle + "/manifest.json"
            var manifest = try JSONDecoder().decode(SegmentBundle.Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: manifestPath)))
            var listed = try #require(manifest.blobs?.first { $0.digest == digest })
            listed.bytes = Int.max
            var second = listed
            (second.digest, second.bytes) = (other, 1)
            manifest.blobs = [listed, second]
            try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: manifestPath))
        default:
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: a.path + "/replica.key")
        }
        let b = try DataDirectory.create(path: folder.file("b-\(damage)"), name: "b")
        await #expect(throws: (any Error).self) { _ = try await importInto(b, bundle) }
        #expect(try b.reader.head().lastIndex == 0, "no event applied")
        #expect(try BlobStore(directory: b).all().isEmpty, "no blob kept")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: BlobStore(directory: b).path + "/incoming")) ?? []).isEmpty)
    }

    /// An expense whose blob has not arrived is listed with it marked missing, and counted.
    @Test func anExpenseWhoseBlobHasNotArrivedIsListedAsMissing() async throws {
        let (a, digest, _) = try await replicaWithReceipt("a")
        let bundle = try export(a)
        try FileManager.default.removeItem(atPath: bundle + "/blobs")
        // A manifest without the blobs, as an exporter that did not hold them writes it.
        let manifestPath = bundle + "/manifest.json"
        var manifest = try JSONDecoder().decode(SegmentBundle.Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: manifestPath)))
        manifest.blobs = nil
        try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: manifestPath))
        let b = try DataDirectory.create(path: folder.file("b"), name: "b")
        _ = try await importInto(b, bundle)
        let views = try LedgerViews.open(b)
        #expect(try views.missingAttachments() == [digest])
        let page = try views.expensesPageJSON(try ExpenseQuery([])).serialized
        #expect(page.contains("\"missingAttachments\":[\"\(digest)\"]"), "\(page)")
    }
}

/// Retention and verification of the blobs.
@Suite struct AttachmentRetentionTests {
    let folder = TemporaryDirectory("tally-attachment-retention")

    @Test func gcRemovesOnlyUnreferencedBlobsPastRetentionWithTheirThumbnails() async throws {
        let directory = try DataDirectory.create(path: folder.file("r"), name: "r")
        let ledger = try Ledger(directory: directory)
        defer { ledger.close() }
        let expense: PropertyMap = [.kind: .string("expense"), .amount: .int(100), .currency: .string("KRW")]
        let kept = try ledger.blobs.store(try Thumbnailer.fixture(width: 400, height: 300, orientation: 0, heic: false))
        let dropped = try ledger.blobs.store(try Thumbnailer.fixture(width: 300, height: 400, orientation: 0, heic: false))
        let neverUsed = try ledger.blobs.store(Data(AttachmentTests.jpeg(5_000, seed: 9)))
        var withKept = expense, withDropped = expense
        withKept[.attachments] = .strings([kept.digest])
        withDropped[.attachments] = .strings([dropped.digest])
        _ = try await ledger.create(.expense, withKept, actor: "cli:test")
        let (entity, _) = try await ledger.create(.expense, withDropped, actor: "cli:test")
        let thumbnailKept = try #require(try Thumbnailer(store: ledger.blobs).thumbnail(of: kept.digest, size: 128))
        let thumbnailDropped = try #require(try Thumbnailer(store: ledger.blobs).thumbnail(of: dropped.digest, size: 128))
        guard case .string(let id)? = entity.member("id") else { Issue.record("no id"); return }
        try await ledger.delete(.expense, id: UUID(uuidString: id)!, actor: "cli:test")

        let collector = AttachmentCollector(BlobStore(directory: directory))
        let now = Date()
        let first = try collector.run(views: ledger.views, dryRun: false, now: now)
        #expect(first.removed.isEmpty && first.waiting == 3 && first.kept == 2, "within retention nothing goes: \(first)")
        let later = now.addingTimeInterval(AttachmentCollector.defaultRetention + 86_400)
        let preview = try collector.run(views: ledger.views, dryRun: true, now: later)
        #expect(Set(preview.removed.map(\.digest)) == [dropped.digest, neverUsed.digest, thumbnailDropped.digest])
        #expect(try ledger.blobs.all().count == 5, "a dry run deletes nothing")
        let run = try collector.run(views: ledger.views, dryRun: false, now: later)
        #expect(run.removed.count == 3)
        #expect(Set(try ledger.blobs.all().map(\.digest)) == [kept.digest, thumbnailKept.digest])
        // The audit history still names what was attached.
        let trail = try ledger.views.audit(.uuid(UUID(uuidString: id)!))
        #expect(trail.events.contains { $0.event.properties[.attachments] == .strings([dropped.digest]) })
    }

    /// Runs `work` on another thread and returns once it is about to start it (and 0.3 s more,
    /// for it to reach a lock it waits on): `finished` says whether it has, `wait` blocks until it has.
    static func inBackground(_ work: @escaping @Sendable () throws -> Void) -> (finished: @Sendable () -> Bool, wait: @Sendable () -> Void) {
        let (started, done) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let finished = Mutex(false)
        DispatchQueue.global().async {
            started.signal()
            try? work()
            finished.withLock { $0 = true }
            done.signal()
        }
        started.wait()
        Thread.sleep(forTimeInterval: 0.3)
        return ({ finished.withLock { $0 } }, { done.wait() })
    }

    /// A ledger holding one blob nobody references, first seen unreferenced by retention two
    /// hours ago and last uploaded then, and a retention of an hour: the blob is due.
    func ledgerWithAnOldUnreferencedBlob(_ name: String, seed: UInt8) throws -> (Ledger, BlobInfo, AttachmentCollector) {
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file(name), name: "g"))
        let blob = try ledger.blobs.store(Data(AttachmentTests.jpeg(3_000, seed: seed)))
        let collector = AttachmentCollector(ledger.blobs, retention: 3_600)
        _ = try collector.run(views: ledger.views, dryRun: false, now: Date().addingTimeInterval(-7_200))  // first seen unreferenced then
        try Self.makeOld(blob.digest, in: ledger.blobs)
        return (ledger, blob, collector)
    }

    /// Sets the blob's modification time (its last upload, to retention) two hours back.
    static func makeOld(_ digest: String, in store: BlobStore) throws {
        let old = Int(Date().timeIntervalSince1970) - 7_200
        var times = [timeval(tv_sec: old, tv_usec: 0), timeval(tv_sec: old, tv_usec: 0)]
        #expect(utimes(try store.file(of: digest), &times) == 0)
    }

    @Test func anUploadOfHeldBytesWaitsForRetentionsRemovalAndThenWritesThemAnew() throws {
        let store = BlobStore(path: folder.file("upload-race"))
        let bytes = Data(AttachmentTests.jpeg(3_000, seed: 4))
        let blob = try store.store(bytes)
        let upload = try store.whileRetentionRemoves {
            let upload = Self.inBackground { _ = try store.store(bytes) }
            #expect(!upload.finished(), "the upload waits while retention removes")
            try store.remove(blob.digest)
            return upload
        }
        upload.wait()
        #expect(try store.size(of: blob.digest) == bytes.count, "the acknowledged upload's bytes are held")
    }

    @Test func retentionLooksAgainUnderItsLockAndKeepsABlobReliedOnMeanwhile() async throws {
        let (ledger, blob, collector) = try ledgerWithAnOldUnreferencedBlob("gc-race", seed: 5)
        defer { ledger.close() }
        let views = ledger.views
        let report = Mutex<AttachmentCollector.Report?>(nil)
        let gc = try ledger.blobs.whileRetentionWaits {
            let gc = Self.inBackground { report.withLock { $0 = try? collector.run(views: views, dryRun: false, now: Date()) } }
            #expect(!gc.finished(), "retention waits while a held blob is relied on")
            utimes(try ledger.blobs.file(of: blob.digest), nil)  // uploaded again
            return gc
        }
        gc.wait()
        #expect(report.withLock { $0?.removed.isEmpty } == true)
        #expect(try ledger.blobs.size(of: blob.digest) != nil, "the blob relied on is kept")
    }

    /// Holds retention off (`whileRetentionWaits`) on a thread of its own until the returned
    /// release is called.
    static func holdRetentionOff(_ store: BlobStore) -> @Sendable () -> Void {
        let (held, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        Thread.detachNewThread {
            try? store.whileRetentionWaits {
                held.signal()
                release.wait()
            }
        }
        held.wait()
        return { release.signal() }
    }

    @Test func retentionLooksAgainAtWhatIsReferencedAndKeepsABlobAnEditNamedMeanwhile() async throws {
        let (ledger, blob, collector) = try ledgerWithAnOldUnreferencedBlob("gc-referenced", seed: 6)
        defer { ledger.close() }
        let release = Self.holdRetentionOff(ledger.blobs)
        let views = ledger.views
        let report = Mutex<AttachmentCollector.Report?>(nil)
        let gc = Self.inBackground { report.withLock { $0 = try? collector.run(views: views, dryRun: false, now: Date()) } }
        #expect(!gc.finished(), "retention waits")
        // An expense names the blob while retention waits (written as a peer's edit arrives:
        // the blob's time not touched).
        var properties: PropertyMap = [.kind: .string("expense"), .amount: .int(100), .currency: .string("KRW")]
        properties[.attachments] = .strings([blob.digest])
        _ = try await ledger.create(.expense, properties, actor: "cli:test")
        try Self.makeOld(blob.digest, in: ledger.blobs)
        release()
        gc.wait()
        #expect(report.withLock { $0?.removed.isEmpty } == true)
        #expect(try ledger.blobs.size(of: blob.digest) != nil, "the blob an expense names is kept")
    }

    @Test func aPeerToldABlobIsHeldFindsItKeptByRetention() async throws {
        let (ledger, blob, collector) = try ledgerWithAnOldUnreferencedBlob("gc-peer", seed: 7)
        defer { ledger.close() }
        let missing = String(repeating: "ab", count: 32)
        #expect(try await ledger.missingBlobs(among: [blob.digest, missing]) == [missing])
        let report = try collector.run(views: ledger.views, dryRun: false, now: Date())
        #expect(report.removed.isEmpty, "a blob a peer was told is held is touched, as an upload")
        #expect(try ledger.blobs.size(of: blob.digest) != nil)
    }

    @Test func auditVerifyNamesADamagedAndAMissingBlob() async throws {
        let directory = try DataDirectory.create(path: folder.file("v"), name: "v")
        let ledger = try Ledger(directory: directory)
        defer { ledger.close() }
        let blob = try ledger.blobs.store(Data(AttachmentTests.jpeg(2_000)))
        var properties: PropertyMap = [.kind: .string("expense"), .amount: .int(100), .currency: .string("KRW")]
        properties[.attachments] = .strings([blob.digest])
        _ = try await ledger.create(.expense, properties, actor: "cli:test")
        #expect(try ledger.views.verifyAttachments().damaged.isEmpty)
        let file = try ledger.blobs.file(of: blob.digest)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        bytes[100] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        #expect(try ledger.views.verifyAttachments().damaged == [blob.digest])
        try FileManager.default.removeItem(atPath: file)
        #expect(try ledger.views.verifyAttachments().missing == [blob.digest])
    }
}
