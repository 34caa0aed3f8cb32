import Foundation
import TallyCore
import TallyLog

/// The wire form of events shipped over HTTP: each event's stored bytes behind a 4-byte
/// little-endian length, and after the events they cover, signature records (`SignatureRecord`
/// encodings) behind a length with its top bit set. The bytes carry everything needed to verify
/// them (origin, sequence, previous hash, signed heads), so the receiver checks them exactly as
/// it checks a bundle's.
public enum EventRecords {
    /// Largest record accepted (a bound on what a peer can make us buffer).
    public static let maxRecord = 8 << 20
    /// The length bit that marks a signature record.
    static let signatureFlag: UInt32 = 1 << 31

    /// One record of a stream: an event's stored bytes or a signature record's encoding.
    public enum Record {
        case event(UnsafeRawBufferPointer)
        case signature(UnsafeRawBufferPointer)
    }

    /// Appends one event record.
    public static func append(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { out.append(contentsOf: $0) }
        out.append(contentsOf: bytes)
    }

    /// Appends one signature record.
    public static func append(_ record: SignatureRecord, to out: inout [UInt8]) {
        var encoded = ByteWriter(capacity: 160)
        record.encode(into: &encoded)
        withUnsafeBytes(of: (UInt32(encoded.bytes.count) | signatureFlag).littleEndian) { out.append(contentsOf: $0) }
        out.append(contentsOf: encoded.bytes)
    }

    /// How long a run of one origin without a signed head may grow: events, bytes.
    public typealias UnsignedLimits = (events: Int, bytes: Int)
    /// A stream's: what a receiver takes (`StreamReceiver`).
    public static let streamLimits: UnsignedLimits = (StreamReceiver.maxUnsignedRun, StreamReceiver.maxUnsignedBytes)

    /// The records of a replica's log that `vector` lacks (never local-only), in log order,
    /// handed out in chunks of about `chunkBytes`. Only events a signed head covers are sent
    /// (`SignedRecordBuffer`): an event whose head is not read with it waits for its origin's
    /// next head, and goes out just before it. An origin whose run without a head passes
    /// `limits` is left out; it is returned once every other record went.
    @discardableResult
    public static func missing(
        from directory: DataDirectory, for vector: VersionVector, chunkBytes: Int = 1 << 20, limits: UnsignedLimits = streamLimits,
        _ chunk: ([UInt8], Int) throws -> Void
    ) throws -> LeftOutRun? {
        var records = SignedRecordBuffer(limits: limits)
        // Routing fields only: the receiver decodes and verifies every event it is sent. A head
        // goes along when it covers something the other side lacks; a rotation unless the other
        // side holds events signed after it.
        try directory.reader.forEachStoredEvent(signatures: { signatures in
            for signature in signatures {
                switch signature {
                case .head(let signed): records.add(head: signed, send: signed.sequence > vector[signed.origin])
                case .rotation(let rotation) where rotation.afterSequence >= vector[rotation.origin]: records.add(rotation: rotation)
                default: continue
                }
            }
            if records.bytes.count >= chunkBytes { try records.handOut(chunk) }
        }) { routing, bytes in
            guard !routing.isLocalOnly, routing.sequence > vector[routing.origin] else { return }
            records.add(event: bytes, origin: routing.origin, sequence: routing.sequence)
        }
        records.finish()
        try records.handOut(chunk)
        return records.givenUpRun
    }

    /// Splits a byte stream arriving in arbitrary pieces back into records.
    public struct Decoder {
        private var pending: [UInt8] = []

        public init() {}

        /// Feeds a piece; calls `record` for each complete record in it.
        public mutating func feed(_ piece: some Collection<UInt8>, _ record: (Record) throws -> Void) throws {
            pending.append(contentsOf: piece)
            var start = 0
            try pending.withUnsafeBytes { bytes in
                while bytes.count - start >= 4 {
                    let prefix = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt32.self))
                    let length = Int(prefix & ~signatureFlag)
                    guard length <= maxRecord else { throw SyncRejection(source: "stream", reason: "a record of \(length) bytes exceeds \(maxRecord)") }
                    guard bytes.count - start - 4 >= length else { break }
                    let body = UnsafeRawBufferPointer(rebasing: bytes[(start + 4)..<(start + 4 + length)])
                    try record(prefix & signatureFlag == 0 ? .event(body) : .signature(body))
                    start += 4 + length
                }
            }
            pending.removeFirst(start)
        }

        /// Throws if the stream ended inside a record.
        public func finish() throws {
            guard pending.isEmpty else { throw SyncRejection(source: "stream", reason: "the stream ended inside a record (\(pending.count) bytes left over)") }
        }
    }
}

/// Receives a stream of records from a peer: verifies every event, and appends what passed in
/// durable batches as it goes, so a dropped connection keeps what arrived and the next sync
/// resumes from there. The first bad event stops the stream; nothing from it on is applied.
///
/// Batches are appended by a `BatchAppender`, one batch behind the verification: while one
/// batch is compressed, written and fsynced, the next is decoded, hashed and checked.
public struct StreamReceiver {
    private var decoder = EventRecords.Decoder()
    private var incoming: IncomingEvents
    private let appender: BatchAppender
    /// Events applied (durable) so far; all of them once `finish` or `stop` returned.
    public var applied: Int { appender.applied }
    /// Events skipped as already held.
    public var alreadyHeld: Int { incoming.alreadyHeld }
    /// The whole log folded by the merge rules, when this receiver could keep it: from the
    /// start if the log was empty (for `Projector.catchUp(startingFrom:)`: a new replica's
    /// first sync then does not read its whole log back to project it), and from the moment a
    /// delivery into a log that was not empty reached `foldingBulksFrom` events and the log's
    /// own size (for `Projector.catchUpInBulk(through:startingFrom:)`, which writes such a
    /// delivery's views from the whole log folded). Nil if another append got in between. Take
    /// it, once, after `finish` or `stop`: the projection then holds the only copy.
    public func takeFolded() -> FoldedLog? { appender.takeFolded() }
    let source: String
    let batchSize: Int

    /// `admit`, if given, decides who may bring each new event (`IncomingEvents.admit`).
    /// `foldingBulksFrom`: the size from which a delivery into a log that holds events is
    /// folded as it is appended (see `takeFolded`); nil, never.
    public init(
        writer: LogWriter, source: String, maximumSkewMillis: UInt64, batchSize: Int = 20_000, foldingBulksFrom: Int? = nil,
        admit: (@Sendable (Event) -> String?)? = nil
    ) throws {
        self.source = source
        self.batchSize = batchSize
        incoming = try IncomingEvents(receivingInto: writer, maximumSkewMillis: maximumSkewMillis)
        incoming.admit = admit
        appender = BatchAppender(writer: writer, foldingBulksFrom: foldingBulksFrom)
    }

    /// Feeds a piece of the stream. A bad event refuses its whole batch: the events verified
    /// beside it in the batch are dropped, not appended, so a delivery of up to `batchSize`
    /// events with one bad event changes nothing; earlier batches of a longer stream are
    /// durable already (each was valid on its own, and the next sync need not send it again).
    public mutating func feed(_ piece: some Collection<UInt8>) throws {
        // The decoder is moved out while it runs, so the verifier can be updated in place
        // (copying it would copy every event verified but not yet appended, per piece).
        var decoder = self.decoder
        self.decoder = EventRecords.Decoder()
        defer { self.decoder = decoder }
        let source = self.source
        do {
            try decoder.feed(piece) { record in
                switch record {
                case .event(let bytes): try self.incoming.offer(bytes, source: source)
                case .signature(let bytes):
                    let signature: SignatureRecord
                    do { signature = try SignatureRecord.decodeOne(bytes) } catch {
                        throw SyncRejection(source: source, reason: "a signature record does not decode (\(error))")
                    }
                    try self.incoming.offer(signature, source: source)
                }
            }
        } catch {
            incoming.discardPending()
            try appender.wait()
            throw error
        }
        if incoming.accepted.count >= batchSize || incoming.acceptedBytes - incoming.uncoveredBytes >= Self.maxBatchBytes { try flush() }
        // Writers sign at least every ~6,000 events (a durable batch, a bulk chunk): a sender
        // that sends far more without a signed head is refused before it fills memory.
        if incoming.uncoveredCount > Self.maxUnsignedRun || incoming.uncoveredBytes > Self.maxUnsignedBytes {
            incoming.discardPending()
            try appender.wait()
            throw SyncRejection(
                source: source,
                reason: "more than \(Self.maxUnsignedRun) events or \(Self.maxUnsignedBytes >> 20) MiB arrived without a signed head covering them; refused")
        }
    }

    /// The most events, and bytes, a stream may send before a signed head covers them.
    public static let maxUnsignedRun = 200_000
    public static let maxUnsignedBytes = 64 << 20
    /// A batch is appended once it holds this many bytes (or `batchSize` events).
    public static let maxBatchBytes = 32 << 20

    /// Hands what has been verified and signed so far to the appender (waiting while it writes
    /// the previous batch; throwing if that failed). Events still waiting for their signed head
    /// stay until it comes.
    public mutating func flush() throws {
        let covered: CoveredDelivery
        do { covered = try incoming.takeCovered(source: source) } catch {
            incoming.discardPending()
            try appender.wait()
            throw error
        }
        guard !covered.isEmpty else { return }
        try appender.append(covered)
    }

    /// The stream ended: checks it ended cleanly and appends the rest, durably. A stream that
    /// ends inside a record (its transport ended normally, so this is how it was sent, not a
    /// dropped connection) refuses its last batch like a bad event.
    public mutating func finish() throws {
        do {
            try decoder.finish()
            try incoming.finishDelivery(source: source)
        } catch {
            incoming.discardPending()
            try appender.wait()
            throw error
        }
        try flush()
        try appender.wait()
    }

    /// The stream broke off (a dropped connection): appends what was verified and signed and
    /// waits until it is durable, so the next sync need not send it again.
    public mutating func stop() {
        try? flush()
        try? appender.wait()
    }
}

/// Appends verified batches on a serial queue, one at a time and in order, while the caller
/// verifies the next: two cores instead of one. At most one batch is in flight, so memory stays
/// bounded; after a failure nothing more is appended and `append`/`wait` throw it.
final class BatchAppender: @unchecked Sendable {
    // @unchecked: `appliedCount`, `fold`, `folding` and `failure` are guarded by `lock`.
    private let writer: LogWriter
    private let queue = DispatchQueue(label: "tally.batch-appender")
    private let inFlight = DispatchGroup()
    private let lock = NSLock()
    private var appliedCount = 0
    private var fold: FoldedLog?
    /// Whether `fold` follows the appends (or once did: a fold dropped is not started again).
    private var folding: Bool
    /// How many events this delivery must have appended before the log is folded (`StreamReceiver.takeFolded`).
    private let foldFrom: Int?
    private var failure: (any Error)?

    init(writer: LogWriter, foldingBulksFrom: Int?) {
        self.writer = writer
        let held = writer.head.lastIndex
        folding = held == 0
        fold = folding ? FoldedLog() : nil
        foldFrom = foldingBulksFrom.map { max($0, held > UInt64(Int.max) ? .max : Int(held)) }
    }

    var applied: Int { lock.withLock { appliedCount } }
    /// The fold, handed over (this appender keeps none), so the first load owns the only copy.
    func takeFolded() -> FoldedLog? { lock.withLock { fold.take() } }

    /// Hands over a batch once the previous one is written; throws that one's failure.
    func append(_ covered: CoveredDelivery) throws {
        try wait()
        let batch = covered.events
        inFlight.enter()
        queue.async { [self] in
            defer { inFlight.leave() }
            do {
                let last = try covered.append(to: writer)
                let (applied, isFolding) = lock.withLock {
                    appliedCount += batch.count
                    return (appliedCount, folding)
                }
                if !isFolding, let foldFrom, applied >= foldFrom {
                    // A delivery this large is projected from the whole log folded: the log so
                    // far is read once now, on this queue, beside the verification of what follows.
                    // A log that cannot be read now only costs the projection its own read.
                    var started = FoldedLog(expecting: last)
                    let read =
                        (try? LogReader(directory: writer.directory).forEachEventChunk { chunk in
                            for logged in chunk { started.apply(logged.event) }
                        }) != nil
                    lock.withLock {
                        folding = true
                        fold = read && started.lastIndex == last ? started : nil  // else appended to meanwhile
                    }
                } else {
                    // Another append got in between: the fold no longer matches the log, and is
                    // let go of outside the lock (freeing a whole ledger's state takes a while).
                    let dropped: FoldedLog? = lock.withLock {
                        guard fold?.lastIndex == last - UInt64(batch.count) else { return fold.take() }
                        for (_, event) in batch { fold!.apply(event) }
                        return nil
                    }
                    _ = consume dropped
                }
            } catch {
                lock.withLock { failure = error }
            }
        }
    }

    /// Waits until every batch handed over is written; throws the first failure.
    func wait() throws {
        inFlight.wait()
        if let failure = lock.withLock({ failure }) { throw failure }
    }
}
