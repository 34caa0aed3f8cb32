import Foundation
import Logging
import TallyCore
import TallyLog
import TallyStore

/// What the HTTP service runs on: the replica's writer (held for the service's lifetime, so a
/// CLI writer waits or fails clearly), its views, its tokens, and a queue for blocking work
/// (fsync, SQLite) off Swift's cooperative threads.
public final class TallyService: Sendable {
    public let directory: DataDirectory
    public let writer: LogWriter
    public let projector: Projector
    public let session: LedgerSession
    public let tokens: TokenStore
    /// Request and replication counters for `/metrics`.
    public let metrics = Metrics()
    public let logger: Logger
    /// Refuse replicated events stamped further ahead of this machine's clock.
    public let maximumSkewMillis: UInt64 = 300_000
    private let blocking = DispatchQueue(label: "tally.blocking", attributes: .concurrent)

    /// Opens the replica: takes the writer lock, migrates and catches up the views.
    public init(directory: DataDirectory, logger: Logger, lockTimeout: Double = 0) throws {
        self.directory = directory
        self.logger = logger
        var configuration = LogConfiguration()
        configuration.lockTimeout = lockTimeout
        writer = try directory.openWriter(configuration: configuration)
        if let torn = writer.recovery.tornTail { logger.warning("cut a torn tail on open", metadata: ["log.tail": "\(torn)"]) }
        projector = try Projector(directory: directory)
        let applied = try projector.catchUp()
        logger.info("views caught up", metadata: ["events.applied": "\(applied)"])
        session = LedgerSession(writer: writer, projector: projector)
        tokens = TokenStore(directory: directory)
    }

    /// Runs blocking work on the service's own threads.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            blocking.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Waits for in-flight appends and releases the writer lock.
    public func close() { writer.close() }
}

extension TallyService {
    /// The background services to run beside the HTTP server: peer sync every `syncInterval`.
    public func backgroundServices(syncInterval: Duration) -> [any Service] {
        [PeerSyncService(service: self, interval: syncInterval)]
    }
}

import ServiceLifecycle
