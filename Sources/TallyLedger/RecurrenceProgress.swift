import Foundation
import TallyCore
import TallyLog

/// How far each recurring rule's days are decided on this replica (`DATA_DIR/recurrences.json`):
/// per rule, its version (a digest of its merge state's stamps) and the last day a
/// materialisation pass decided. A pass looks only at the later days of a rule whose version is
/// unchanged; a rule changed since (any property, by any replica) is looked at whole again, as
/// before there was a record.
///
/// Local to this replica, never replicated. Every day it covers had its occurrence made, found
/// held, or left out by the rule as it still is, so a lost or stale file (a crash before the
/// write) costs one full pass, never a wrong or a missing occurrence. A log cut shorter (`tally
/// log repair`, or views found ahead of the log at open) may take occurrences it counts, so
/// the record goes with the cut (`remove`); a day it names after today (a clock that ran
/// ahead, a damaged file) counts as today.
struct RecurrenceProgress: Codable, Equatable {
    struct Rule: Codable, Equatable {
        var version: String
        /// A local day number (the rule's own UTC offset).
        var decidedThrough: Int
    }

    /// By rule id (lowercase).
    var rules: [String: Rule] = [:]

    static func path(in directory: DataDirectory) -> String { directory.path + "/recurrences.json" }

    /// Forgets every rule's decided days (the next pass looks at each whole window).
    static func remove(from directory: DataDirectory) { unlink(path(in: directory)) }

    /// The record, or an empty one if there is none or it is unreadable (then a full pass).
    static func load(from directory: DataDirectory) -> RecurrenceProgress {
        guard let data = FileManager.default.contents(atPath: path(in: directory)),
            let progress = try? JSONDecoder().decode(RecurrenceProgress.self, from: data)
        else { return RecurrenceProgress() }
        return progress
    }

    func save(in directory: DataDirectory) throws {
        try writeDurably(try JSONEncoder().encode(self), to: Self.path(in: directory))
    }

    /// The days of `rule` decided already, if its version is the one recorded: through
    /// `today` at most (days after it are not decided yet, whatever the record says).
    func decidedThrough(_ rule: UUID, version: String, today: Int) -> Int? {
        guard let recorded = rules[rule.lowercased], recorded.version == version else { return nil }
        return min(recorded.decidedThrough, today)
    }

    /// A digest of every stamp of the rule's merge state (FNV-1a, 64 bits): it changes with
    /// any write that changes the rule, whichever property and replica.
    static func version(of rule: LedgerState.Entity) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ text: String) {
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
        }
        func mix(_ stamp: WriteStamp?) {
            guard let stamp else { return mix("-;") }
            mix("\(stamp.timestamp.millis).\(stamp.timestamp.counter).\(stamp.origin);")
        }
        mix(rule.created)
        mix(rule.deleted)
        for (name, stamp) in rule.stamps.sorted(by: { $0.key < $1.key }) {
            mix("\(name.rawValue)=")
            mix(stamp)
        }
        return String(hash, radix: 16)
    }
}
