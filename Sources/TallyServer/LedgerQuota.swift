import Foundation
import Hummingbird
import Synchronization
import TallyCore
import TallyLedger
import TallyLog

/// What one ledger may use, set by the operator (`tally ledgers quota NAME …`) in its folder's
/// `quota.json`; a limit left out is no limit (beyond the server's own, such as
/// `--attachment-quota-mib`). Read when the ledger is opened, and by `tally ledgers show`.
public struct LedgerQuota: Sendable, Codable, Equatable {
    /// Events the ledger may take in one UTC day: its own writes, imports and what peers push.
    public var eventsPerDay: Int?
    /// Bytes its log may hold on disk.
    public var logBytes: Int?
    /// Bytes its attachments may hold together.
    public var attachmentBytes: Int?
    /// Members it may have.
    public var members: Int?
    /// Change feeds it may hold open at once, across all its callers.
    public var streams: Int?

    public init() {}

    static func file(_ folder: String) -> SecretFile<LedgerQuota> { SecretFile(path: folder + "/quota.json", empty: LedgerQuota()) }

    /// The quota in `folder` (none set: no limits).
    public static func read(folder: String) throws -> LedgerQuota { try file(folder).read() }

    public static func write(_ quota: LedgerQuota, folder: String) throws { try file(folder).replace(with: quota) }

    /// This quota (none, with `clearing`) with the limits `change` sets; those it leaves nil
    /// are left as they were.
    public func changed(by change: LedgerQuota, clearing: Bool) -> LedgerQuota {
        var quota = clearing ? LedgerQuota() : self
        if let value = change.eventsPerDay { quota.eventsPerDay = value }
        if let value = change.logBytes { quota.logBytes = value }
        if let value = change.attachmentBytes { quota.attachmentBytes = value }
        if let value = change.members { quota.members = value }
        if let value = change.streams { quota.streams = value }
        return quota
    }

    /// The limits as `name: value` pairs, for an operator.
    public var shown: [(String, Int?)] {
        [("eventsPerDay", eventsPerDay), ("logBytes", logBytes), ("attachmentBytes", attachmentBytes), ("members", members), ("streams", streams)]
    }
}

/// A ledger's `quota.json` as last read, and the file's version then: read again when the
/// operator changes it (any of its inode, size and times, so an edit that keeps the time it
/// was modified is seen too), so a new quota holds from the next write.
public final class QuotaFile: Sendable {
    let folder: String
    private let cached: Mutex<(quota: LedgerQuota, version: FileVersion)>

    /// The quota in `folder`, `quota` as just read from it.
    init(_ quota: LedgerQuota, folder: String) {
        self.folder = folder
        cached = Mutex((quota, FileVersion(path: folder + "/quota.json")))
    }

    /// The ledger's quota now.
    public var quota: LedgerQuota {
        let version = FileVersion(path: folder + "/quota.json")
        return cached.withLock { cached in
            if cached.version != version, let quota = try? LedgerQuota.read(folder: folder) { cached = (quota, version) }
            return cached.quota
        }
    }
}

/// What an open ledger has used against its `LedgerQuota`, checked before every write (a
/// write over quota is refused whole, before anything is appended: 429 for events, 507 for
/// bytes, naming the limit). Events of a day are counted by log index: where the log stood
/// when the day began (kept in `usage.json`, so a reopened ledger goes on counting) to where
/// it stands now; the log's size on disk is looked at again at most once a second.
public final class QuotaUsage: Sendable {
    private let folder: String
    /// The quota, read again when the operator changes it.
    let file: QuotaFile
    private struct State: Codable, Equatable {
        /// The UTC day (days since 1970) and the log index at its start.
        var day: Int
        var dayStartIndex: UInt64
    }
    /// Today's start, once counted (nil: the day saved is not today's, and nothing counted yet).
    private let state: Mutex<State?>
    private let logBytes = Mutex<(bytes: Int, at: ContinuousClock.Instant)?>(nil)

    /// The usage of the ledger in `file`'s folder, as `usage.json` left it. Made before the
    /// ledger opens (the ledger's attachment limit reads its quota): a day that is new starts
    /// at the first count, which the service makes once the ledger is open.
    init(file: QuotaFile, now: Date = Date()) {
        self.file = file
        folder = file.folder
        let saved = (try? SecretFile<State?>(path: folder + "/usage.json", empty: nil).read()) ?? nil
        state = Mutex(saved.flatMap { $0.day == Self.day(now) ? $0 : nil })
    }

    /// The ledger's quota now.
    public var quota: LedgerQuota { file.quota }

    static func day(_ date: Date) -> Int { Int((date.timeIntervalSince1970 / 86_400).rounded(.down)) }

    /// Events taken today, with the log at `appendedIndex`. The first count of a day starts it
    /// there, and writes it to `usage.json` (once a day, not at every open: a hosted ledger
    /// opens often), so a reopened ledger goes on counting.
    public func eventsToday(appendedIndex: UInt64, now: Date = Date()) -> Int {
        let today = Self.day(now)
        let started = state.withLock { state -> State? in
            guard state?.day != today else { return nil }
            state = State(day: today, dayStartIndex: appendedIndex)
            return state
        }
        if let started { try? SecretFile<State?>(path: folder + "/usage.json", empty: nil).replace(with: started) }
        return state.withLock { state in Int(clamping: appendedIndex &- min(state?.dayStartIndex ?? appendedIndex, appendedIndex)) }
    }

    /// The log's bytes on disk (looked at again at most once a second).
    public func logBytesOnDisk(_ directory: DataDirectory) -> Int {
        if let cached = logBytes.withLock({ $0 }), ContinuousClock.now - cached.at < .seconds(1) { return cached.bytes }
        let bytes = ((try? FileManager.default.contentsOfDirectory(atPath: directory.logPath)) ?? []).reduce(0) { total, name in
            total + (((try? FileManager.default.attributesOfItem(atPath: directory.logPath + "/" + name))?[.size] as? Int) ?? 0)
        }
        logBytes.withLock { $0 = (bytes, .now) }
        return bytes
    }

    /// Throws the refusal of a write when the ledger is over a quota of what writes add.
    func checkWrite(_ service: TallyService) throws {
        let quota = self.quota
        if let limit = quota.eventsPerDay, eventsToday(appendedIndex: service.ledger.appendedIndex) >= limit { throw Self.eventsRefusal(limit) }
        if let limit = quota.logBytes, logBytesOnDisk(service.directory) >= limit { throw Self.bytesRefusal(limit) }
    }

    /// 429: the day's `limit` events are taken.
    static func eventsRefusal(_ limit: Int) -> APIError {
        var error = APIError(.tooManyRequests, "quota_exceeded", "this ledger has taken its \(limit) events for today (UTC); writes are taken again tomorrow")
        error.retryAfter = Int(86_400 - Date().timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400)) + 1
        return error
    }

    /// 507: the log holds its `limit` bytes.
    static func bytesRefusal(_ limit: Int) -> APIError {
        APIError(
            HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), "quota_exceeded",
            "this ledger's log holds its quota of \(limit >> 20) MiB; ask the operator for more")
    }
}

/// A push's events held to the ledger's quota as they come (`IncomingEvents.admit`): checked
/// before the route, a push was then taken whole, however many events it streamed. Each new
/// event is counted against the day's events, and the log's bytes on disk are looked at again
/// (at most once a second) as batches are appended; the batch an event would pass a quota in is
/// refused whole — what earlier batches brought is kept, as with any refusal — and `exceeded`
/// says which quota, for the answer (429 or 507, as any write over it).
final class QuotaAdmission: Sendable {
    private let usage: QuotaUsage
    private let service: TallyService
    /// New events admitted so far, and the refusal once one was made.
    private let state = Mutex<(admitted: Int, exceeded: APIError?)>((0, nil))
    private let takenBefore: Int
    /// The quota as the push began (read once: looking at its file for every event cost a
    /// `stat` each).
    private let quota: LedgerQuota

    init(_ service: TallyService) {
        (self.service, usage, quota) = (service, service.usage, service.usage.quota)
        takenBefore = service.usage.eventsToday(appendedIndex: service.ledger.appendedIndex)
    }

    /// The quota refusal a push met, if it met one.
    var exceeded: APIError? { state.withLock { $0.exceeded } }

    func admit(_ event: Event) -> String? {
        guard quota.eventsPerDay != nil || quota.logBytes != nil else { return nil }
        let logFull = quota.logBytes.map { usage.logBytesOnDisk(service.directory) >= $0 } ?? false
        return state.withLock { state in
            if state.exceeded == nil, let limit = quota.eventsPerDay, takenBefore + state.admitted >= limit {
                state.exceeded = QuotaUsage.eventsRefusal(limit)
            } else if state.exceeded == nil, logFull, let limit = quota.logBytes {
                state.exceeded = QuotaUsage.bytesRefusal(limit)
            }
            if let exceeded = state.exceeded { return exceeded.message }
            state.admitted += 1
            return nil
        }
    }
}

/// Refuses a write to a ledger over its quota (`QuotaUsage.checkWrite`) before the route runs.
struct QuotaMiddleware: RouterMiddleware {
    func handle(_ request: Request, context: TallyRequestContext, next: (Request, TallyRequestContext) async throws -> Response) async throws -> Response {
        if request.method != .get, request.method != .head, let service = context.lease?.service { try service.usage.checkWrite(service) }
        return try await next(request, context)
    }
}
