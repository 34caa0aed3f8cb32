import Foundation
import TallyLog

/// Makes thumbnails for a whole process under `ThumbnailLimits`: at most `concurrentDecodes`
/// at once (a decode holds up to `maxDecodeBytes`, so this is what bounds the memory of all of
/// them), at most `maxWaiting` requests in line (503 beyond), and one decode for any number of
/// requests for the same photo and size at the same time.
///
/// A cached thumbnail is answered without queueing. A request waits at most for the decodes in
/// line before it, each stopped at `decodeTimeout`.
public actor ThumbnailQueue {
    public let limits: ThumbnailLimits
    /// Runs a blocking decode off Swift's cooperative threads (the server's thread pool).
    let runBlocking: @Sendable (@escaping @Sendable () throws -> BlobInfo?) async throws -> BlobInfo?
    /// Decodes let in (running or waiting their turn); counted as they are let in, so a burst
    /// of requests cannot all pass the check before any of them has started.
    private var admitted = 0
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// Decodes under way, by blob folder, photo and size.
    private var underWay: [String: Task<BlobInfo?, any Error>] = [:]
    /// Decodes that failed, by the same key, and when: answered with the same failure for
    /// `failureKept` without another decode (a photo that takes just past the time limit,
    /// asked for again and again, held both decoders for every ledger). At most `maxFailures`.
    private var failed: [String: (failure: Thumbnailer.Failure, at: ContinuousClock.Instant)] = [:]
    static let failureKept: Duration = .seconds(600)
    static let maxFailures = 10_000

    public init(
        limits: ThumbnailLimits,
        runBlocking: @escaping @Sendable (@escaping @Sendable () throws -> BlobInfo?) async throws -> BlobInfo?
    ) {
        self.limits = limits
        self.runBlocking = runBlocking
    }

    /// The thumbnail of `digest` at `size` in `store` (nil if the store holds no such blob):
    /// the cached one, the one another request is making, or one made now.
    public func thumbnail(of digest: String, size: Int, in store: BlobStore) async throws -> BlobInfo? {
        let thumbnailer = Thumbnailer(store: store, limits: limits)
        guard Thumbnailer.sizes.contains(size) else { throw Thumbnailer.Failure.unsupportedSize(size) }
        if let made = try thumbnailer.cached(digest, size: size) { return made }
        let key = thumbnailer.indexPath(digest, size)
        if let same = underWay[key] { return try await same.value }
        if let known = failed[key], ContinuousClock.now - known.at < Self.failureKept { throw known.failure }
        guard admitted < limits.concurrentDecodes + limits.maxWaiting else {
            throw Thumbnailer.Failure.busy(waiting: admitted - limits.concurrentDecodes)
        }
        admitted += 1
        let decode = Task { try await self.inTurn { try thumbnailer.thumbnail(of: digest, size: size) } }
        underWay[key] = decode
        defer { underWay[key] = nil }
        do { return try await decode.value } catch let failure as Thumbnailer.Failure {
            remember(failure, key)
            throw failure
        }
    }

    /// Keeps a decode's failure that another decode would meet again: the image's own (not a
    /// full queue, nor a worker that could not start).
    private func remember(_ failure: Thumbnailer.Failure, _ key: String) {
        switch failure {
        case .busy, .workerUnavailable, .unsupportedSize: return
        default: break
        }
        let now = ContinuousClock.now
        if failed.count >= Self.maxFailures { failed = failed.filter { now - $0.value.at < Self.failureKept } }
        if failed.count >= Self.maxFailures, let oldest = failed.min(by: { $0.value.at < $1.value.at })?.key { failed[oldest] = nil }
        failed[key] = (failure, now)
    }

    /// Runs `work` on a blocking thread once it is its turn.
    private func inTurn(_ work: @escaping @Sendable () throws -> BlobInfo?) async throws -> BlobInfo? {
        await takeTurn()
        defer {
            endTurn()
            admitted -= 1
        }
        return try await runBlocking(work)
    }

    private func takeTurn() async {
        if running < limits.concurrentDecodes {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }  // `endTurn` hands its turn over
    }

    private func endTurn() {
        if waiting.isEmpty { running -= 1 } else { waiting.removeFirst().resume() }
    }
}
