import CTallyVips
import Foundation
import Synchronization

/// A thumbnail's decode in a process of its own (`tally thumbnail-worker`), when
/// `ThumbnailLimits.workerCommand` is set — as `tally serve` sets it.
///
/// The header's estimate (`ImageHeader.decodeBytes`) refuses what it can see, but a file can
/// lie where libvips reads no further than the header (a HEIC whose `ispe` box says 64 × 64
/// over a 16,384² picture took 1.6 GB), and some work cannot be interrupted from inside
/// (libvips copies a rotated thumbnail whole before the first row). In a worker the kernel
/// enforces both bounds: its data segment is capped (`RLIMIT_DATA` at `memoryCap`, so an
/// allocation beyond it fails and the decode with it), it is killed at its deadline, and
/// whatever it took is returned to the system when it exits — the server's own memory never
/// holds a decode.
public enum ThumbnailWorker {
    /// The exit status of a decode that was refused or failed: the `Thumbnailer.Failure`, as
    /// JSON, is on standard output.
    public static let failedStatus: Int32 = 2
    /// The most a worker's answer may hold.
    static let maxAnswerBytes = 16 << 20

    /// What a worker may take beyond what it holds when it starts (~65 MiB): 1.5 × the decode
    /// limit (libpng's and libvips's working memory beside the estimated pixels measured 1.33×
    /// for an Adam7 PNG, 1.06× for a 48-megapixel HEIC), the file, and 64 MiB for libvips's
    /// threads and buffers.
    public static func memoryCap(limits: ThumbnailLimits, fileBytes: Int) -> Int {
        limits.maxDecodeBytes * 3 / 2 + fileBytes + (64 << 20)
    }

    /// Runs in the worker process: caps its own data segment, makes the thumbnail of the file
    /// at `path`, and writes the JPEG (status 0) or the failure as JSON (`failedStatus`) to
    /// standard output. Returns the exit status.
    public static func serve(path: String, size: Int, limits: ThumbnailLimits, parent: Int32) -> Int32 {
        // A worker never outlives the server that asked for it (a killed server's decodes stop).
        guard tally_die_with_parent(parent) == 0 else { return failedStatus }
        do {
            let source = try Data(contentsOf: URL(fileURLWithPath: path))
            try capDataSegment(adding: memoryCap(limits: limits, fileBytes: source.count))
            let thumbnail = try Thumbnailer.jpegThumbnail(of: source, size: size, limits: limits)
            FileHandle.standardOutput.write(thumbnail)
            return 0
        } catch let failure as Thumbnailer.Failure {
            FileHandle.standardOutput.write((try? JSONEncoder().encode(failure)) ?? Data())
            return failedStatus
        } catch {
            FileHandle.standardOutput.write((try? JSONEncoder().encode(Thumbnailer.Failure.undecodable(internal: "\(error)"))) ?? Data())
            return failedStatus
        }
    }

    /// Sets `RLIMIT_DATA` to the data segment held now (`VmData`) plus `bytes`.
    static func capDataSegment(adding bytes: Int) throws {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmData:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else {
            throw Thumbnailer.Failure.undecodable(internal: "no VmData in /proc/self/status")
        }
        let cap = rlim_t(kilobytes << 10 + bytes)
        var limit = rlimit(rlim_cur: cap, rlim_max: cap)
        guard setrlimit(Int32(RLIMIT_DATA.rawValue), &limit) == 0 else {
            throw Thumbnailer.Failure.undecodable(internal: "setrlimit(RLIMIT_DATA) failed: \(errno)")
        }
    }

    /// Runs `command` (the worker) on the file at `path`, in the server, and returns the JPEG
    /// it made; throws its failure, `.tookTooLong` if it had to be killed at the deadline
    /// (`decodeTimeout` and 2 s to start), or `.exceededLimits` if it died otherwise (its
    /// memory cap, most likely, under a header that lied).
    public static func run(_ command: [String], path: String, size: Int, limits: ThumbnailLimits) throws -> Data {
        guard let executable = command.first else { throw Thumbnailer.Failure.undecodable(internal: "no worker command") }
        let milliseconds = limits.decodeTimeoutMilliseconds
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments =
            Array(command.dropFirst()) + [
                "--size", "\(size)", "--max-decode-bytes", "\(limits.maxDecodeBytes)", "--timeout-ms", "\(milliseconds)",
                "--parent", "\(getpid())", path,
            ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw Thumbnailer.Failure.workerUnavailable }
        let killed = Mutex(false)
        let deadline = DispatchWorkItem {
            guard process.isRunning else { return }
            killed.withLock { $0 = true }
            kill(process.processIdentifier, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(milliseconds) + 2_000), execute: deadline)
        // What the worker says is read up to `maxAnswerBytes` (a 1,024-pixel JPEG is ~200 KB):
        // a worker gone wrong cannot fill the server's memory.
        var bytes = Data()
        while bytes.count <= maxAnswerBytes, let piece = try? output.fileHandleForReading.read(upToCount: 64 << 10), !piece.isEmpty {
            bytes.append(piece)
        }
        if bytes.count > maxAnswerBytes, process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? output.fileHandleForReading.close()
        process.waitUntilExit()
        deadline.cancel()
        if killed.withLock({ $0 }) { throw Thumbnailer.Failure.tookTooLong(limits.decodeTimeout) }
        switch (process.terminationReason, process.terminationStatus) {
        case (.exit, 0) where bytes.count <= maxAnswerBytes && bytes.starts(with: [0xFF, 0xD8, 0xFF]): return bytes
        case (.exit, 0): throw Thumbnailer.Failure.undecodable(internal: "the worker's answer is not a JPEG (\(bytes.count) bytes)")
        case (.exit, failedStatus):
            throw (try? JSONDecoder().decode(Thumbnailer.Failure.self, from: bytes))
                ?? Thumbnailer.Failure.undecodable(internal: "the worker's answer did not parse")
        default:
            throw Thumbnailer.Failure.exceededLimits(memory: memoryCap(limits: limits, fileBytes: 0), time: limits.decodeTimeout)
        }
    }
}
