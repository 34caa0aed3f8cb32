import ArgumentParser
import Foundation
import TallyImages

/// `tally thumbnail-worker`: one thumbnail's decode, in a process of its own, for a running
/// `tally serve` (`ThumbnailWorker`). Not for people: it is hidden from the help.
struct ThumbnailWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail-worker", abstract: "Decode one thumbnail for the server (internal).", shouldDisplay: false)
    @Option var size: Int
    @Option var maxDecodeBytes: Int
    @Option var timeoutMs: Int
    @Option(help: "The server's process id: the worker dies with it.") var parent: Int32
    @Argument var file: String

    func run() throws {
        guard Thumbnailer.sizes.contains(size), (1...(1 << 40)).contains(maxDecodeBytes), (1...3_600_000).contains(timeoutMs) else {
            throw ValidationError("invalid --size, --max-decode-bytes or --timeout-ms")
        }
        let limits = ThumbnailLimits(maxDecodeBytes: maxDecodeBytes, decodeTimeout: .milliseconds(timeoutMs))
        let status = ThumbnailWorker.serve(path: file, size: size, limits: limits, parent: parent)
        if status != 0 { throw ExitCode(status) }
    }
}
