import Foundation
import TallyCore

/// What `tally log repair` did.
public struct RepairReport: Sendable {
    /// Where the log was cut, or nil when it opened cleanly and nothing was cut.
    public var cutSegment: String?
    /// Offset of the cut within that segment.
    public var cutOffset: Int?
    /// Why it was cut.
    public var reason: String?
    /// Segment files (or cut-off parts) moved aside, with their sizes.
    public var movedAside: [(name: String, bytes: Int)] = []
    /// The folder holding what was moved aside.
    public var asideDirectory: String?
    /// Index of the last event kept.
    public var lastIndexKept: UInt64 = 0
}

/// Cuts a damaged log at its first corruption, on an operator's explicit request. Nothing is
/// deleted: the cut-off bytes and every later segment are moved into `cut-<time>/` beside the
/// segments, so a person can still inspect (or hand-recover) them.
public enum LogRepair {
    /// Repairs the log in `directory` (takes the writer lock for the duration).
    public static func repair(directory: String, lockTimeout: Double = 0) throws -> RepairReport {
        let lock = try FileLock(path: directory + "/writer.lock", timeout: lockTimeout)
        defer { withExtendedLifetime(lock) {} }
        CleanClose.remove(from: directory)  // a repair reads the whole log, and may change it
        var report = RepairReport()
        let damage: (segment: String, offset: Int, reason: String)
        do {
            let recovered = try LogRecovery.recover(directory: directory, cutTornTail: true)
            report.lastIndexKept = recovered.head.lastIndex
            return report
        } catch let LogError.corrupt(segment, offset, reason) {
            damage = (segment, offset, reason)
        }
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        let aside = directory + "/cut-" + stamp
        try FileManager.default.createDirectory(atPath: aside, withIntermediateDirectories: true)
        report.asideDirectory = aside
        report.cutSegment = damage.segment
        report.cutOffset = damage.offset
        report.reason = damage.reason
        let names = try SegmentDirectory.segmentNames(in: directory)
        guard let damagedPosition = names.firstIndex(of: damage.segment) else {
            throw LogError.notALog(path: directory, reason: "segment \(damage.segment) vanished during repair")
        }
        for name in names[(damagedPosition + 1)...].reversed() {
            let path = directory + "/" + name
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            try FileManager.default.moveItem(atPath: path, toPath: aside + "/" + name)
            report.movedAside.insert((name, size), at: 0)
        }
        let path = directory + "/" + damage.segment
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        if damage.offset < SegmentFormat.fileHeaderSize {
            try FileManager.default.moveItem(atPath: path, toPath: aside + "/" + damage.segment)
            report.movedAside.insert((damage.segment, data.count), at: 0)
        } else {
            let cutName = damage.segment + ".from-\(damage.offset)"
            try data[damage.offset...].write(to: URL(fileURLWithPath: aside + "/" + cutName))
            chmod(path, 0o644)
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw LogError.io(operation: "open", path: path, errno: errno) }
            defer { close(fd) }
            guard ftruncate(fd, off_t(damage.offset)) == 0, fsync(fd) == 0 else { throw LogError.io(operation: "truncate", path: path, errno: errno) }
            report.movedAside.insert((cutName, data.count - damage.offset), at: 0)
        }
        try SegmentDirectory.syncDirectory(aside)
        try SegmentDirectory.syncDirectory(directory)
        // The log must open cleanly now; if a seal frame was cut off, the segment is simply open again.
        report.lastIndexKept = try LogRecovery.recover(directory: directory, cutTornTail: true).head.lastIndex
        return report
    }
}
