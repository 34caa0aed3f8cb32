import Foundation

/// Compresses a bulk append's staged chunks into frames on a second thread while the caller
/// stages the next chunk. Encoding and hashing are sequential (the hash chain), compression is
/// per frame; running them side by side puts both cores to work.
///
/// It plans on its own copy of the open segment and writes nothing: `finish` hands back the
/// planned frames and the segment as it will be once they are written, and the caller either
/// writes them or (when a draft was rejected) drops them, leaving the log unchanged.
final class BackgroundFramer: @unchecked Sendable {
    // @unchecked: `pending`, `finished` and `done` are guarded by `condition`; `segment` and
    // `plan` belong to the worker thread until `done`, then to the caller.

    /// A chunk is handed over once it holds this many bytes: one frame's worth, so every
    /// chunk compresses as one full frame.
    static let chunkBytes = SegmentFormat.maxFrameRawSize - (16 << 10)
    /// Events expected in a chunk (room reserved up front).
    static let chunkEvents = 8192
    /// Chunks waiting at most; the stager waits beyond that, which bounds memory.
    private static let maxPending = 4

    private let condition = NSCondition()
    private var pending: [StagedBatch] = []
    private var finished = false
    private var done = false
    private var segment: OpenSegment
    private var plan = SegmentWritePlan()
    private let configuration: LogConfiguration

    /// Starts the worker thread, planning from `segment`'s current state.
    init(segment: OpenSegment, configuration: LogConfiguration) {
        self.segment = segment
        self.configuration = configuration
        let thread = Thread { [self] in run() }
        thread.name = "tally-framer"
        thread.start()
    }

    /// Queues a chunk (in log order); waits while too many are queued.
    func add(_ chunk: StagedBatch) {
        guard !chunk.events.isEmpty else { return }
        condition.lock()
        defer { condition.unlock() }
        while pending.count >= Self.maxPending { condition.wait() }
        pending.append(chunk)
        condition.broadcast()
    }

    /// Waits until every queued chunk is planned; returns the segment as it will be after the
    /// plan is performed, and the plan.
    func finish() -> (OpenSegment, SegmentWritePlan) {
        condition.lock()
        defer { condition.unlock() }
        finished = true
        condition.broadcast()
        while !done { condition.wait() }
        return (segment, plan)
    }

    private func run() {
        while true {
            condition.lock()
            while pending.isEmpty && !finished { condition.wait() }
            if pending.isEmpty {
                done = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let chunk = pending.removeFirst()
            condition.broadcast()
            condition.unlock()
            segment.plan(chunk, configuration: configuration, into: &plan)
        }
    }
}
