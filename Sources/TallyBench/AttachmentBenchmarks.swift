import AsyncHTTPClient
import Foundation
import NIOCore
import TallyCore
import TallyImages
import TallyLedger
import TallyLog
import TallySync

/// The attachment benchmarks of issue 16 (`scripts/bench attachments`), each beside a baseline
/// from the same run on the same disk: writing (and fsyncing) the same bytes as plain files.
struct AttachmentBenchmarks {
    let workDirectory: String
    let tallyBinary: String
    /// Files uploaded (2 MiB each) and blobs shipped (2 MiB each, 200 MiB at 100).
    let files: Int
    let photoSamples: Int
    /// Blobs a store holds when an upload is checked against its quota (`quotaUploadLatency`).
    let heldBlobs: Int

    static let fileBytes = 2 << 20

    func run() async throws -> [BenchmarkResult] {
        let payloads = (0..<files).map { index in
            Data([0xFF, 0xD8, 0xFF, 0xE0] + (0..<(Self.fileBytes - 4)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ index) })
        }
        let baseline = try writeRate(payloads)
        let megabytes = Double(files * Self.fileBytes) / 1_048_576
        let upload = try await uploadRate(payloads)
        let (byFiles, overHTTP) = try await shipRates(payloads)
        var results = [
            BenchmarkResult(
                name: "attachment_upload", value: upload, unit: "MB/s", baseline: baseline,
                baselineName: "write + fsync of the same bytes, MB/s"),
            BenchmarkResult(
                name: "blobs_ship_files", value: byFiles, unit: "MB/s", baseline: baseline,
                baselineName: "write + fsync of the same bytes, MB/s"),
            BenchmarkResult(
                name: "blobs_ship_http", value: overHTTP, unit: "MB/s", baseline: baseline,
                baselineName: "write + fsync of the same bytes, MB/s"),
        ]
        results += try thumbnailLatency()
        results.append(try quotaUploadLatency(heldBlobs: heldBlobs))
        print(String(format: "attachments: %.0f MiB in %d files", megabytes, files))
        return results
    }

    /// The baseline: the same bytes written as files, each fsynced, MB/s.
    func writeRate(_ payloads: [Data]) throws -> Double {
        let folder = workDirectory + "/attachment-copy"
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let start = now()
        for (index, payload) in payloads.enumerated() {
            let fd = open(folder + "/\(index)", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            _ = payload.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            fsync(fd)
            close(fd)
        }
        return megabytes(payloads) / (now() - start)
    }

    func megabytes(_ payloads: [Data]) -> Double { Double(payloads.reduce(0) { $0 + $1.count }) / 1_048_576 }

    /// `POST /v1/attachments` of every file, four at a time, against `tally serve`, MB/s.
    func uploadRate(_ payloads: [Data]) async throws -> Double {
        let data = try freshDirectory("attachment-upload")
        let token = try runProcess([tallyBinary, "token", "create", "--data-dir", data.path, "--name", "bench", "--scope", "read,write"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try startProcess([tallyBinary, "serve", "--data-dir", data.path, "--port", "18993"])
        defer { server.terminate() }
        try await waitForHealth("http://127.0.0.1:18993/health")
        let start = now()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<4 {
                group.addTask {
                    for index in stride(from: lane, to: payloads.count, by: 4) {
                        var request = HTTPClientRequest(url: "http://127.0.0.1:18993/v1/attachments")
                        request.method = .POST
                        request.headers.add(name: "Authorization", value: "Bearer \(token)")
                        request.headers.add(name: "Content-Type", value: "image/jpeg")
                        request.body = .bytes(ByteBuffer(bytes: payloads[index]))
                        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
                        guard response.status.code == 201 else { throw BenchError("upload answered \(response.status.code)") }
                        _ = try await response.body.collect(upTo: 1 << 16)
                    }
                }
            }
            try await group.waitForAll()
        }
        return megabytes(payloads) / (now() - start)
    }

    /// A replica with one expense per file, each with its receipt; its blobs shipped by a bundle
    /// (export + import) and by `tally sync` over loopback into empty replicas, MB/s.
    func shipRates(_ payloads: [Data]) async throws -> (Double, Double) {
        let source = try freshDirectory("attachment-source")
        let ledger = try Ledger(directory: source)
        for payload in payloads {
            let info = try ledger.blobs.store(payload)
            _ = try await ledger.create(
                .expense, [.kind: .string("expense"), .amount: .int(1_000), .currency: .string("KRW"), .attachments: .strings([info.digest])],
                actor: "bench")
        }
        ledger.close()
        let bundle = workDirectory + "/attachment-bundle"
        try? FileManager.default.removeItem(atPath: bundle)
        let target = try freshDirectory("attachment-files-target")
        let start = now()
        _ = try SegmentBundle.export(source, to: bundle, for: nil)
        let importer = try Ledger(directory: target)
        _ = try await importer.importBundle(from: bundle)
        importer.close()
        let byFiles = megabytes(payloads) / (now() - start)
        guard try BlobStore(directory: target).all().count == payloads.count else { throw BenchError("the bundle did not carry every blob") }

        let http = try freshDirectory("attachment-http-target")
        let overHTTP = megabytes(payloads) / (try await timedSync(tallyBinary, from: source.path, into: http.path, port: 18994))
        guard try BlobStore(directory: http).all().count == payloads.count else { throw BenchError("the sync did not fetch every blob") }
        return (byFiles, overHTTP)
    }

    /// A 12-megapixel photo (4000×3000 JPEG) to a 256-pixel thumbnail, p50 over the samples;
    /// beside it, decoding the photo at full size (what a thumbnail without shrink-on-load costs).
    /// Then the same made as `tally serve` makes it, in a worker process (`tally
    /// thumbnail-worker`), against the in-process p50.
    func thumbnailLatency() throws -> [BenchmarkResult] {
        let photo = try Thumbnailer.fixture(width: 4000, height: 3000, orientation: 6, heic: false)
        var thumbnails: [Double] = [], decodes: [Double] = [], workers: [Double] = []
        for _ in 0..<photoSamples {
            var start = now()
            _ = try Thumbnailer.jpegThumbnail(of: photo, size: 256)
            thumbnails.append((now() - start) * 1000)
            start = now()
            _ = try Thumbnailer.uprightSize(of: photo)
            decodes.append((now() - start) * 1000)
        }
        let file = workDirectory + "/thumbnail-photo.jpg"
        try photo.write(to: URL(fileURLWithPath: file))
        let limits = ThumbnailLimits(workerCommand: [tallyBinary, "thumbnail-worker"])
        for _ in 0..<photoSamples {
            let start = now()
            _ = try ThumbnailWorker.run(limits.workerCommand!, path: file, size: 256, limits: limits)
            workers.append((now() - start) * 1000)
        }
        let inProcess = quantile(thumbnails, 0.5)
        return [
            BenchmarkResult(
                name: "thumbnail_12mp_p50", value: inProcess, unit: "ms", baseline: quantile(decodes, 0.5),
                baselineName: "open + rotate the photo's header, ms"),
            BenchmarkResult(
                name: "thumbnail_12mp_worker_p50", value: quantile(workers, 0.5), unit: "ms", baseline: inProcess,
                baselineName: "the same thumbnail made in process, ms"),
        ]
    }

    /// A 1 KiB upload kept under an attachment quota in a store that holds `heldBlobs` blobs,
    /// written a while ago (median of 20), against the same upload with no quota: what counting
    /// the store's bytes adds to each upload (`BlobTotals`). Also printed: one walk of every
    /// blob, which each such upload made before.
    func quotaUploadLatency(heldBlobs: Int) throws -> BenchmarkResult {
        let directory = try freshDirectory("attachment-quota")
        let path = directory.path + "/blobs"
        // Files named as blobs, written directly (counting reads only names and sizes).
        for index in 0..<heldBlobs {
            let digest = String(format: "%02x%062x", index % 256, index)
            let folder = path + "/" + digest.prefix(2)
            if index < 256 { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            try Data(repeating: 7, count: 64).write(to: URL(fileURLWithPath: folder + "/" + digest.dropFirst(2)))
        }
        let anHourAgo = Int(Date().timeIntervalSince1970) - 3_600
        for prefix in try FileManager.default.contentsOfDirectory(atPath: path) {
            _ = utimes(path + "/" + prefix, [timeval(tv_sec: anHourAgo, tv_usec: 0), timeval(tv_sec: anHourAgo, tv_usec: 0)])
        }
        var start = now()
        let walked = try BlobStore(path: path).all().count
        let walk = (now() - start) * 1000
        func uploads(quota: Int?, salt: UInt8) throws -> Double {
            let store = BlobStore(directory: directory, quota: { quota })
            var times: [Double] = []
            for index in 0..<20 {
                let data = Data((0..<1024).map { UInt8(truncatingIfNeeded: $0 &+ index) } + [salt])
                start = now()
                _ = try store.store(data)
                times.append((now() - start) * 1000)
            }
            return quantile(times, 0.5)
        }
        let unlimited = try uploads(quota: nil, salt: 1)
        let limited = try uploads(quota: 1 << 40, salt: 2)
        print(String(format: "attachments: one walk of %d blobs %.1f ms (what each upload under a quota cost before BlobTotals)", walked, walk))
        return BenchmarkResult(
            name: "attachment_quota_upload", value: limited, unit: "ms", baseline: unlimited,
            baselineName: "the same 1 KiB upload with no quota, \(heldBlobs) blobs held, ms")
    }

    func freshDirectory(_ name: String) throws -> DataDirectory { try freshBenchDirectory(name, in: workDirectory) }
}
