import Foundation
import TallyCore

/// One event as read from the log, with where it lives.
public struct LoggedEvent: Sendable {
    /// 1-based position in this replica's log.
    public var index: UInt64
    /// The decoded event.
    public var event: Event
    /// Hash of the event's stored bytes.
    public var hash: EventHash
    /// The segment file holding it.
    public var segment: String
    /// Byte offset of its frame within the segment.
    public var frameOffset: Int

    /// Creates a record (readers make these; tests and importers may too).
    public init(index: UInt64, event: Event, hash: EventHash, segment: String, frameOffset: Int) {
        (self.index, self.event, self.hash, self.segment, self.frameOffset) = (index, event, hash, segment, frameOffset)
    }
}

/// Reads a log without taking the writer lock: safe beside a running writer. A torn or
/// still-being-written tail in the newest segment is where reading stops; damage anywhere
/// else throws `LogError.corrupt` naming the segment and offset.
public struct LogReader: Sendable {
    /// The log directory.
    public let directory: String

    /// A reader of the log in `directory`.
    public init(directory: String) { self.directory = directory }

    /// Segment file names, oldest first.
    public func segmentNames() throws -> [String] { try SegmentDirectory.segmentNames(in: directory) }

    /// Calls `body` with every event from log index `fromIndex` on, in log order.
    public func forEachEvent(from fromIndex: UInt64 = 1, _ body: (LoggedEvent) throws -> Void) throws {
        try forEachEncodedEvent(from: fromIndex) { logged, _ in try body(logged) }
    }

    /// Calls `body` with the events from `fromIndex` on until it returns false, and reads no
    /// further: a reader that wants a page (the change feed) costs what it reads, not the rest
    /// of the log.
    public func forEachEvent(from fromIndex: UInt64, while body: (LoggedEvent) throws -> Bool) throws {
        struct Enough: Error {}
        do {
            try forEachEncodedEvent(from: fromIndex) { logged, _ in if try !body(logged) { throw Enough() } }
        } catch is Enough {}
    }

    /// Like `forEachEvent`, in chunks of up to `chunkSize` events in log order, read and decoded
    /// on a second thread one chunk ahead of `body` (see `Prefetcher`).
    public func forEachEventChunk(
        from fromIndex: UInt64 = 1, chunkSize: Int = 4_096, checkingSeals: Bool = false,
        _ body: ([LoggedEvent]) throws -> Void
    ) throws {
        try prefetchedChunks(from: fromIndex, chunkSize: chunkSize, checkingSeals: checkingSeals, item: { logged, _ in logged }, body)
    }

    /// Like `forEachEncodedEvent`, in chunks of up to `chunkSize` events with a copy of their
    /// stored bytes, read, decoded and hashed on a second thread one chunk ahead of `body`.
    public func forEachEncodedEventChunk(chunkSize: Int = 4_096, _ body: ([(logged: LoggedEvent, bytes: [UInt8])]) throws -> Void) throws {
        try prefetchedChunks(from: 1, chunkSize: chunkSize, checkingSeals: false, item: { logged, bytes in (logged, Array(bytes)) }, body)
    }

    /// What `forEachEntryChunk` hands out: an event (with a copy of its stored bytes if asked
    /// for) or the records of a signatures frame, in log order.
    public enum Entry: Sendable {
        case event(LoggedEvent, bytes: [UInt8]?)
        case signatures([SignatureRecord], segment: String, frameOffset: Int)
    }

    /// Every event and signatures frame from index 1, in log order, in chunks read, decoded and
    /// hashed on a second thread: what a bundle import verifies.
    public func forEachEntryChunk(checkingSeals: Bool, keepingBytes: Bool, chunkSize: Int = 4_096, _ body: ([Entry]) throws -> Void) throws {
        try prefetchedChunks(
            from: 1, chunkSize: chunkSize, checkingSeals: checkingSeals,
            item: { logged, bytes in .event(logged, bytes: keepingBytes ? Array(bytes) : nil) },
            signatures: { records, segment, offset in .signatures(records, segment: segment, frameOffset: offset) }, body)
    }

    /// Reads on a `Prefetcher` thread, handing `body` chunks of what `item` makes of each event
    /// (and `signatures` of each signatures frame, if given).
    private func prefetchedChunks<Item: Sendable>(
        from fromIndex: UInt64, chunkSize: Int, checkingSeals: Bool, item: @escaping @Sendable (LoggedEvent, UnsafeRawBufferPointer) -> Item,
        signatures: (@Sendable ([SignatureRecord], String, Int) -> Item)? = nil,
        _ body: ([Item]) throws -> Void
    ) throws {
        try Prefetcher<[Item]>.run(
            produce: { [self] emit in
                var chunk: [Item] = []
                chunk.reserveCapacity(chunkSize)
                func add(_ entry: Item) throws {
                    chunk.append(entry)
                    if chunk.count == chunkSize {
                        try emit(chunk)
                        chunk.removeAll(keepingCapacity: true)
                    }
                }
                try forEachEncodedEvent(
                    from: fromIndex, checkingSeals: checkingSeals,
                    signatures: { records, segment, offset in
                        if let signatures { try add(signatures(records, segment, offset)) }
                    }
                ) { logged, bytes in
                    try add(item(logged, bytes))
                }
                if !chunk.isEmpty { try emit(chunk) }
            }, consume: body)
    }

    /// Like `forEachEvent`, also handing out each event's stored bytes (valid during the call):
    /// what replication ships, so hashes never depend on re-encoding.
    ///
    /// With `checkingSeals` (from index 1), it also checks each seal against the events before
    /// it (the head a writer's recovery would take from it), so a log that reads cleanly can be
    /// opened as it is — what a bundle's segments must be to be adopted (`LogWriter.adoptSegments`).
    /// Off by default: a replica's own log was sealed by its own writer, and `tally audit verify`
    /// checks its seals; the per-event bookkeeping costs a whole read ~10 %.
    ///
    /// With `signatures`, it is also handed the records of each signatures frame after
    /// `fromIndex`, where they stand among the events (with the segment and frame offset).
    public func forEachEncodedEvent(
        from fromIndex: UInt64 = 1, checkingSeals: Bool = false,
        signatures: ([SignatureRecord], String, Int) throws -> Void = { _, _, _ in },
        _ body: (LoggedEvent, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        precondition(!checkingSeals || fromIndex == 1, "seals can only be checked reading from the first event")
        let names = try segmentNames()
        var head: LogHead? = checkingSeals ? LogHead() : nil  // what the events read so far add up to
        for (position, name) in names.enumerated() {
            if position + 1 < names.count, let nextFirst = SegmentFormat.firstIndex(fromFileName: names[position + 1]), nextFirst <= fromIndex { continue }
            // Each segment starts where the one before it ended, as a recovery checks (an empty
            // one too: a header-only last file named past the end read cleanly, then stopped
            // every open of the log it was adopted into).
            if let head, SegmentFormat.firstIndex(fromFileName: name) != head.lastIndex + 1 {
                throw LogError.corrupt(
                    segment: name, offset: 0,
                    reason:
                        "segment starts at index \(SegmentFormat.firstIndex(fromFileName: name) ?? 0), expected \(head.lastIndex + 1) (a segment is missing)")
            }
            let scan = try SegmentScanner.scan(path: directory + "/" + name, isLast: position == names.count - 1) { frame in
                if frame.header.type == .signatures {  // it stands after index firstIndex - 1
                    if frame.header.firstIndex >= fromIndex { try signatures(try SignatureRecord.decodeList(frame.payload), name, frame.offset) }
                    return
                }
                guard frame.header.firstIndex + UInt64(frame.header.eventCount) > fromIndex else { return }
                var index = frame.header.firstIndex
                do {
                    try EventBatch.forEachEvent(in: frame.payload, count: frame.header.eventCount) { bytes in
                        defer { index += 1 }
                        guard index >= fromIndex else { return }
                        let event = try EventCodec.decode(bytes)
                        let hash = EventCodec.hash(bytes)
                        head?.advance(past: event, hash: hash)
                        try body(LoggedEvent(index: index, event: event, hash: hash, segment: name, frameOffset: frame.offset), bytes)
                    }
                } catch let error as DecodingError {
                    throw LogError.corrupt(segment: name, offset: frame.offset, reason: "event at index \(index): \(error)")
                }
            }
            if let seal = scan.seal, let head, seal != head {
                throw LogError.corrupt(
                    segment: name, offset: scan.validLength, reason: "seal summary does not match the events before it (events edited, dropped or reordered)")
            }
        }
    }

    /// Calls `body` with every event's stored bytes and routing fields (origin, sequence,
    /// local-only; `EventCodec.routing`), in log order, without decoding or hashing the rest:
    /// for senders, whose receivers verify every event anyway. Frame checksums are checked.
    /// `signatures` is handed each signatures frame's records where they stand.
    public func forEachStoredEvent(
        signatures: ([SignatureRecord]) throws -> Void = { _ in }, _ body: (EventCodec.Routing, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let names = try segmentNames()
        for (position, name) in names.enumerated() {
            _ = try scanRoutes(of: name, isLast: position == names.count - 1, signatures: signatures, body)
        }
    }

    /// Scans one segment, handing `body` each event's routing fields and bytes.
    private func scanRoutes(
        of name: String, isLast: Bool, signatures: ([SignatureRecord]) throws -> Void = { _ in },
        _ body: (EventCodec.Routing, UnsafeRawBufferPointer) throws -> Void
    ) throws -> SegmentScan {
        try SegmentScanner.scan(path: directory + "/" + name, isLast: isLast) { frame in
            if frame.header.type == .signatures {
                try signatures(try SignatureRecord.decodeList(frame.payload))
                return
            }
            do {
                try EventBatch.forEachEvent(in: frame.payload, count: frame.header.eventCount) { bytes in try body(try EventCodec.routing(bytes), bytes) }
            } catch let error as DecodingError {
                throw LogError.corrupt(segment: name, offset: frame.offset, reason: "\(error)")
            }
        }
    }

    /// How much of a segment an export may copy byte for byte.
    public struct CopyableSegment: Sendable {
        /// Bytes up to the end of the last complete frame (the whole file when sealed).
        public var length: Int
        /// The head its seal records; nil for the newest, unsealed segment.
        public var seal: LogHead?
        /// Index of the event after its last.
        public var nextIndex: UInt64
    }

    /// Scans segment `name` and returns what can be copied of it if every event in it passes
    /// `include` (judged by `EventCodec.routing`, without decoding the events), nil otherwise.
    /// Lets an export copy segment files instead of re-framing their events. `signatures` is
    /// handed each signatures frame's records.
    public func copyableSegment(
        _ name: String, isLast: Bool, signatures: ([SignatureRecord]) -> Void = { _ in }, passes include: (EventCodec.Routing) -> Bool
    ) throws -> CopyableSegment? {
        var every = true
        let scan = try scanRoutes(of: name, isLast: isLast, signatures: signatures) { routing, _ in
            if every, !include(routing) { every = false }
        }
        return every ? CopyableSegment(length: scan.validLength, seal: scan.seal, nextIndex: scan.nextIndex) : nil
    }

    /// The log's head (every origin's last sequence and hash), read without the writer lock.
    public func head() throws -> LogHead {
        try LogRecovery.recover(directory: directory, cutTornTail: false).head
    }

    /// Size facts for `tally status`.
    public func statistics() throws -> LogStatistics {
        var stats = LogStatistics()
        let names = try segmentNames()
        stats.segments = names.count
        for (position, name) in names.enumerated() {
            let scan = try SegmentScanner.scan(path: directory + "/" + name, isLast: position == names.count - 1) { frame in
                stats.signatureFrames += frame.header.type == .signatures ? 1 : 0
                stats.rawBytes += Int(frame.header.rawLength)
                stats.storedBytes += Int(frame.header.storedLength) + SegmentFormat.frameHeaderSize
                stats.events += Int(frame.header.eventCount)
            }
            stats.bytesOnDisk += scan.fileLength
            if scan.seal != nil { stats.sealedSegments += 1 }
        }
        return stats
    }
}

/// How big a log is.
public struct LogStatistics: Sendable, Codable {
    /// Events in the log.
    public var events = 0
    /// Segment files.
    public var segments = 0
    /// Sealed (immutable) segment files.
    public var sealedSegments = 0
    /// Signatures frames (one per durable batch that holds this replica's or received events).
    public var signatureFrames = 0
    /// Total size of the segment files.
    public var bytesOnDisk = 0
    /// Encoded events before compression.
    public var rawBytes = 0
    /// Frames as stored (headers included).
    public var storedBytes = 0

    /// Encoded bytes per stored byte.
    public var compressionRatio: Double { storedBytes == 0 ? 1 : Double(rawBytes) / Double(storedBytes) }
}
