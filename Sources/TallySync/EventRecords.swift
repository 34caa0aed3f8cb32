import Foundation
import TallyCore
import TallyLog
import TallyStore

/// The wire form of events shipped over HTTP: each event's stored bytes behind a 4-byte
/// little-endian length. The bytes carry everything needed to verify them (origin, sequence,
/// previous hash), so the receiver checks them exactly as it checks a bundle's.
public enum EventRecords {
    /// Largest record accepted (a bound on what a peer can make us buffer).
    public static let maxRecord = 8 << 20

    /// Appends one record.
    public static func append(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { out.append(contentsOf: $0) }
        out.append(contentsOf: bytes)
    }

    /// The records of a replica's log that `vector` lacks (never local-only), in log order,
    /// handed out in chunks of about `chunkBytes`.
    public static func missing(from directory: DataDirectory, for vector: VersionVector, chunkBytes: Int = 1 << 20,
                               _ chunk: ([UInt8], Int) throws -> Void) throws {
        var buffer: [UInt8] = []
        var count = 0
        // Routing fields only: the receiver decodes and verifies every event it is sent.
        try directory.reader.forEachStoredEvent { routing, bytes in
            guard !routing.isLocalOnly, routing.sequence > vector[routing.origin] else { return }
            append(bytes, to: &buffer)
            count += 1
            if buffer.count >= chunkBytes {
                try chunk(buffer, count)
                buffer.removeAll(keepingCapacity: true)
                count = 0
            }
        }
        if count > 0 { try chunk(buffer, count) }
    }

    /// Splits a byte stream arriving in arbitrary pieces back into records.
    public struct Decoder {
        private var pending: [UInt8] = []

        public init() {}

        /// Feeds a piece; calls `record` for each complete record in it.
        public mutating func feed(_ piece: some Collection<UInt8>, _ record: (UnsafeRawBufferPointer) throws -> Void) throws {
            pending.append(contentsOf: piece)
            var start = 0
            try pending.withUnsafeBytes { bytes in
                while bytes.count - start >= 4 {
                    let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
                    guard length <= maxRecord else { throw SyncRejection(source: "stream", reason: "a record of \(length) bytes exceeds \(maxRecord)") }
                    guard bytes.count - start - 4 >= length else { break }
                    try record(UnsafeRawBufferPointer(rebasing: bytes[(start + 4)..<(start + 4 + length)]))
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
public struct StreamReceiver {
    let writer: LogWriter
    private var decoder = EventRecords.Decoder()
    private var incoming: IncomingEvents
    /// Events applied so far.
    public private(set) var applied = 0
    /// Events skipped as already held.
    public var alreadyHeld: Int { incoming.alreadyHeld }
    /// When the log was empty at the start and only this receiver has appended to it: its
    /// events folded by the merge rules, for `Projector.catchUp(startingFrom:)` (a new
    /// replica's first sync then does not read its whole log back to project it).
    public private(set) var folded: FoldedLog?
    let source: String
    let batchSize: Int

    public init(writer: LogWriter, source: String, maximumSkewMillis: UInt64, batchSize: Int = 20_000) {
        self.writer = writer
        self.source = source
        self.batchSize = batchSize
        incoming = IncomingEvents(head: writer.head, localOrigins: [writer.localOrigin, writer.localOnlyOrigin], maximumSkewMillis: maximumSkewMillis)
        folded = writer.head.lastIndex == 0 ? FoldedLog() : nil
    }

    /// Feeds a piece of the stream. On a bad event, what was verified before it is appended
    /// (it is valid on its own, and the next sync need not send it again) and the error thrown.
    public mutating func feed(_ piece: some Collection<UInt8>) throws {
        // The decoder is moved out while it runs, so the verifier can be updated in place
        // (copying it would copy every event verified but not yet appended, per piece).
        var decoder = self.decoder
        self.decoder = EventRecords.Decoder()
        defer { self.decoder = decoder }
        let source = self.source
        do {
            try decoder.feed(piece) { bytes in try self.incoming.offer(bytes, source: source) }
        } catch {
            try flush()
            throw error
        }
        if incoming.accepted.count >= batchSize { try flush() }
    }

    /// Appends what has been verified so far.
    public mutating func flush() throws {
        let batch = incoming.takeAccepted()
        guard !batch.isEmpty else { return }
        let last = try writer.appendEncoded(batch)
        applied += batch.count
        if folded?.lastIndex == last - UInt64(batch.count) {
            for (_, event) in batch { folded!.apply(event) }
        } else {
            folded = nil  // another append got in between: the fold no longer matches the log
        }
    }

    /// The stream ended: checks it ended cleanly and appends the rest.
    public mutating func finish() throws {
        try flush()
        try decoder.finish()
    }
}
