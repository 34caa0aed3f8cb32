import Foundation
import TallyLedger
import TallyLog
import TallySync

/// What an app shows about its sync: "up to date", "3 changes waiting", "offline since
/// 10:42", "needs sign-in".
public enum SyncStatus: Sendable, Equatable, CustomStringConvertible {
    /// The server holds every event of this replica (as of the last sync).
    case upToDate
    /// This many events of this replica the server did not hold at the last sync.
    case changesWaiting(Int)
    /// The server could not be reached since then (the changes waiting are kept).
    case offline(since: Date, changesWaiting: Int)
    /// The server refused the credentials: the person must sign in again.
    case needsSignIn
    /// The last sync was refused for good — what this replica sent, or what the server sent
    /// (why, in the server's or the verifier's words): nothing moves until that is fixed.
    case refused(String)

    public var description: String {
        switch self {
        case .upToDate: "up to date"
        case .changesWaiting(let count): count == 1 ? "1 change waiting" : "\(count) changes waiting"
        case .offline(let since, _): "offline since \(Self.clock(since))"
        case .needsSignIn: "needs sign-in"
        case .refused(let reason): "sync refused: \(reason)"
        }
    }

    /// `10:42` today, `Nov 27, 10:42` before.
    static func clock(_ date: Date) -> String {
        let style = Date.FormatStyle(date: Calendar.current.isDateInToday(date) ? .omitted : .abbreviated, time: .shortened)
        return date.formatted(style)
    }
}

/// What the replica remembers of its syncs with one server, in `DATA_DIR/app-sync.json`
/// (written durably; never replicated): what the server held after the last sync, and since
/// when it has been unreachable or has refused the credentials.
struct SyncMemory: Codable, Sendable {
    struct Server: Codable, Sendable {
        var heldAtLastSync = VersionVector()
        var lastSync: Date?
        var unreachableSince: Date?
        var refusedCredentials = false
        var refusedBecause: String?
        /// Blobs the server refused for its attachment quota, and when: not sent again within
        /// the hour (each sync would upload them again, only to be refused).
        var blobsRefused: RefusedBlobs?
    }

    /// A member's session with a server, kept (0600, never replicated) so that each launch of
    /// the app or its widget does not sign in again (a bcrypt hash on the server, and one more
    /// session in its bounded list).
    struct KeptSession: Codable, Sendable, CustomStringConvertible, CustomReflectable {
        var secret: String
        var csrf: String
        /// A scrypt hash (`KeptPassword`) of the password it was signed in with (nil in entries an older
        /// version kept, which are dropped).
        var passwordHash: String?
        var credential: ReplicaClient.Credential { .session(secret: secret, csrf: csrf) }

        var description: String { "KeptSession(…)" }  // printed or dumped: no secret
        var customMirror: Mirror { Mirror(self, children: []) }
    }

    var servers: [String: Server] = [:]

    static let fileName = "/app-sync.json"
    static func path(_ folder: String) -> String { folder + fileName }

    static func read(_ folder: String) -> SyncMemory {
        guard let data = FileManager.default.contents(atPath: path(folder)) else { return SyncMemory() }
        return (try? JSONDecoder().decode(SyncMemory.self, from: data)) ?? SyncMemory()
    }

    /// Changes what is remembered of `server`, under the file's own lock: a sync that failed
    /// records why without the writer lock, and two syncs (with two servers, or the app's and
    /// its widget's) must not lose each other's change.
    static func update(_ folder: String, server: String, _ change: (inout Server) -> Void) throws {
        let lock = try FileLock(path: path(folder) + ".lock", timeout: 10)
        defer { lock.release() }
        var memory = read(folder)
        change(&memory.servers[server, default: Server()])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try writeDurably(try encoder.encode(memory), to: path(folder), mode: 0o600)
    }
}
