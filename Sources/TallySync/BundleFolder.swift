import Foundation
import TallyCore
import TallyLog

/// Files as a transport (DESIGN.md §7): a folder carried on a USB stick or shared between
/// machines. A push exports a bundle into it (`SegmentBundle.export`); a pull imports the
/// bundle it holds (`SegmentBundle.importBundle`: every file, frame, chain and field rule
/// checked, all or nothing).
public struct BundleFolder: ReplicaTransport {
    /// The folder.
    public let path: String
    /// What the replica that will read the folder holds (`tally vector --json` there), if known:
    /// a push then writes only what it lacks.
    public let readersVector: VersionVector?

    public init(path: String, readersVector: VersionVector? = nil) {
        self.path = path
        self.readersVector = readersVector
    }

    public var label: String { path }

    public func vector() async throws -> VersionVector { readersVector ?? VersionVector() }

    public func pull(into writer: LogWriter, maximumSkewMillis: UInt64) async throws -> PullReport {
        var report = try SegmentBundle.importBundle(from: path, into: writer, maximumSkewMillis: maximumSkewMillis)
        return PullReport(applied: report.applied, alreadyHeld: report.alreadyHeld, folded: report.folded.take())
    }

    public func push(from directory: DataDirectory, theirs: VersionVector) async throws -> PushReport {
        let manifest = try SegmentBundle.export(directory, to: path, for: readersVector ?? theirs)
        return PushReport(sent: manifest.events, applied: manifest.events, alreadyHeld: 0)
    }
}
