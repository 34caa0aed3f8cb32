import Foundation
import TallyStore

/// The file descriptors a server may hold, against what its limits could make it need.
///
/// Running out is not one request's failure: libdispatch's thread-pool monitor traps when it
/// cannot open `/proc` (found by the hosting benchmark: 10,000 change feeds over 1,000 ledgers
/// under a limit of 20,000 killed the server). So `tally serve` raises its limit as far as it
/// may, and refuses to start with limits whose worst case does not fit.
///
/// The worst case: every connection holds a socket and a read's connection to the views (a
/// database and a WAL file), and — hosted — the open set, besides a reserve for the process.
/// The open set grows past `--max-open-ledgers` when every open ledger is held by a request;
/// it never grows past `maxOpenLedgers(maxConnections:)`, what the rest of the limit holds
/// (`HostedLedgers` answers 503 beyond).
public struct DescriptorBudget: Sendable {
    /// A connection: its socket, and a read's database and WAL files.
    public static let perConnection = 3
    /// An open hosted ledger: its log segment and writer lock, its connections to the views
    /// kept while idle (`ViewConnections.few`: 9), and one to spare. (A hostile review found
    /// 15 held by an idle ledger with the single-ledger defaults, against 8 assumed here then.)
    public static let perOpenLedger = 3 + ViewConnections.few.idleDescriptors
    /// The process's own: its log, the listening socket, NIO's and libdispatch's, a thumbnail
    /// worker's pipes, `/proc` reads.
    public static let reserve = 256
    /// The most ledgers kept open unless told (`tally serve --max-open-ledgers`): reopening a
    /// ledger costs a few milliseconds, and with households' use Zipf-distributed a tenth as
    /// many open tripled the reopens (BENCHMARKS.md, hosting).
    public static let preferredMaxOpen = 1_000

    /// Descriptors this process may open.
    public let limit: Int

    public init(limit: Int) { self.limit = limit }

    /// What `maxConnections` connections and (hosted) `maxOpenLedgers` open ledgers may need at
    /// worst.
    public static func needed(maxConnections: Int, maxOpenLedgers: Int?) -> Int {
        maxConnections * perConnection + (maxOpenLedgers ?? 1) * perOpenLedger + reserve
    }

    /// The most ledgers that may be open at once beside `maxConnections` connections, held or
    /// not: what is left of the limit.
    public func maxOpenLedgers(maxConnections: Int) -> Int {
        max(0, (limit - Self.needed(maxConnections: maxConnections, maxOpenLedgers: 0)) / Self.perOpenLedger)
    }

    /// How many ledgers to keep open unless told: `preferredMaxOpen`, or as many as fit beside
    /// `maxConnections` connections; nil when not even 8 fit.
    public func defaultMaxOpen(maxConnections: Int) -> Int? {
        let room = maxOpenLedgers(maxConnections: maxConnections)
        return room >= 8 ? min(Self.preferredMaxOpen, room / 2) : nil
    }

    /// The room kept above `--max-open-ledgers` for the opens and closes under way: a tenth,
    /// at least 4. With none (1,000 kept open where ~1,013 fit), requests waited at the limit for
    /// closes and the hosting bench's p99 was 1.2 s.
    public static func headroom(maxOpenLedgers: Int) -> Int { max(4, maxOpenLedgers / 10) }

    /// Refuses limits whose worst case needs more descriptors than the process may open (for an
    /// open set, with its `headroom`).
    public func check(maxConnections: Int, maxOpenLedgers: Int?) throws(BudgetError) {
        let needed = Self.needed(maxConnections: maxConnections, maxOpenLedgers: maxOpenLedgers.map { $0 + Self.headroom(maxOpenLedgers: $0) })
        guard needed <= limit else {
            let what = maxOpenLedgers.map { "--max-connections \(maxConnections) with --max-open-ledgers \($0)" } ?? "--max-connections \(maxConnections)"
            throw BudgetError(
                message:
                    "\(what) may need \(needed) file descriptors\(maxOpenLedgers == nil ? "" : " (with room for a tenth more ledgers opening and closing)"), and this process may open \(limit): lower them, or raise the limit (ulimit -n)"
            )
        }
    }

    public struct BudgetError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// This process's budget, its limit raised first: as root as far as the kernel allows
    /// (`/proc/sys/fs/nr_open`), otherwise to the hard limit.
    public static func raised() -> DescriptorBudget {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return DescriptorBudget(limit: 1_024) }
        let ceiling = (try? String(contentsOfFile: "/proc/sys/fs/nr_open", encoding: .utf8)).flatMap {
            rlim_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        if let ceiling, ceiling > limit.rlim_max {
            var raised = rlimit(rlim_cur: ceiling, rlim_max: ceiling)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return DescriptorBudget(limit: Int(clamping: ceiling)) }
        }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return DescriptorBudget(limit: Int(clamping: limit.rlim_cur))
    }
}
