import Foundation
import TallyCore

/// Settings of a log writer.
public struct LogConfiguration: Sendable {
    /// A segment is sealed once it holds at least this many bytes.
    public var segmentSizeLimit: Int = 16 << 20
    /// How long to wait for another process's writer lock before giving up.
    public var lockTimeout: Double = 0
    /// Largest accepted encoded event.
    public var maxEventSize: Int = 4 << 20
    /// The least newest segment a clean close leaves a `CleanClose` record for: below it (about
    /// 500 small events) decoding the segment at the next open costs less than writing, reading
    /// and removing a record (`tally-bench reopen`: a record cost a five-event ledger's reopen
    /// ~0.3 ms, and saved a year's ledger ~4 ms).
    public var cleanCloseFrom: Int = 128 << 10
    /// Where every byte goes before it is written (`SegmentArchive`); none by default.
    public var archive: (any SegmentArchive)?

    /// Default settings.
    public init() {}
}

/// The one writer of a log directory. `append` returns only after the events' bytes are
/// fsynced; concurrent appends share one fsync (group commit: whoever finds no flush under way
/// writes everything staged so far, the others wait for it).
///
/// After a failed write or fsync the writer stops for good: the state of the file is unknown,
/// so nothing is acknowledged any more (a restart recovers from the durable bytes).
public final class LogWriter: @unchecked Sendable {
    // @unchecked: all mutable state below is guarded by `condition`, except `segment`, which
    // only the current flusher touches (`flushing` makes that exclusive).

    /// The directory holding the segments.
    public let directory: String
    /// Origin of this replica's replicated events.
    public let localOrigin: ReplicaID
    /// Origin of this replica's local-only events (a separate chain that never ships).
    public let localOnlyOrigin: ReplicaID
    /// What opening found (torn tail cut, …).
    public let recovery: RecoveredLog

    private let configuration: LogConfiguration
    private let lock: FileLock
    private let condition = NSCondition()
    private var clock: HybridClock
    private var stagedHead: LogHead
    private var staged = StagedBatch()
    private var stagedTicket: UInt64 = 0
    private var durableTicket: UInt64 = 0
    private var flushing = false
    private var failure: LogError?
    /// Signs this replica's chain once per durable batch (nil: a bare log, tests and benchmarks).
    private var signingKey: ReplicaSigningKey?
    /// A key rotation was tried since the open (no `CleanClose` record is left then).
    private var keyRotated = false
    var segment: OpenSegment

    /// Why the writer stopped (a failed write or fsync; it acknowledges nothing after), or nil
    /// while it writes: what `/health` reports.
    public var stoppedBecause: String? {
        condition.lock()
        defer { condition.unlock() }
        return failure.map { "\($0)" }
    }

    /// Opens the log for writing: takes the writer lock, recovers (cutting a torn tail) and
    /// positions at the end. With `signingKeyPath` (a data directory's `replica.key`, created
    /// if missing) every durable batch of this replica's events is followed by its signed head;
    /// a chain left unsigned (a log from before signing, or a crash that cut the signatures
    /// frame after a batch) is signed now.
    public init(
        directory: String, localOrigin: ReplicaID, localOnlyOrigin: ReplicaID, configuration: LogConfiguration = LogConfiguration(),
        signingKeyPath: String? = nil
    ) throws {
        self.directory = directory
        self.localOrigin = localOrigin
        self.localOnlyOrigin = localOnlyOrigin
        self.configuration = configuration
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw LogError.notALog(path: directory, reason: "no such directory (run 'tally init' first)")
        }
        lock = try FileLock(path: directory + "/writer.lock", timeout: configuration.lockTimeout)
        try SegmentDirectory.removeLeftovers(in: directory)
        recovery = try LogRecovery.recover(directory: directory, cutTornTail: true, trustingCleanClose: true)
        stagedHead = recovery.head
        clock = HybridClock(last: recovery.head.maxTimestamp)
        segment = try OpenSegment.resume(directory: directory, recovery: recovery, archive: configuration.archive)
        if let signingKeyPath {
            let (key, isNew) = try ReplicaSigningKey.open(at: signingKeyPath, finishingRotations: recovery.rotations, origin: localOrigin)
            signingKey = key
            if let local = recovery.head.chains[localOrigin], isNew || recovery.unsignedOrigins.contains(localOrigin) {
                try segment.write(StagedBatch(), signatures: [.head(key.sign(origin: localOrigin, head: local))], configuration: configuration)
            }
        }
    }

    /// The public half of the key this writer signs with (nil for a bare log).
    public var publicKey: OriginKey? {
        condition.lock()
        defer { condition.unlock() }
        return signingKey?.publicKey
    }

    /// What goes after `batch` (besides the records received with it, which `OpenSegment.plan`
    /// places among its events): this replica's head, signed with `key`, if the batch holds
    /// events of its chain.
    private func signatures(for batch: StagedBatch, key: ReplicaSigningKey?) -> [SignatureRecord] {
        guard let key, let own = batch.events.last(where: { $0.origin == localOrigin }) else { return [] }
        return [.head(key.sign(origin: localOrigin, head: ChainHead(sequence: own.sequence, hash: own.hash)))]
    }

    /// The head including everything staged (acknowledged or about to be).
    public var head: LogHead {
        condition.lock()
        defer { condition.unlock() }
        return stagedHead
    }

    /// Records local changes: assigns origin, sequence, clock stamp and chain hash, and returns
    /// the events once they are durable. Either all drafts are recorded or (on a thrown error)
    /// none is acknowledged.
    @discardableResult
    public func append(_ drafts: [EventDraft]) throws -> [Event] {
        var events: [Event] = []
        events.reserveCapacity(drafts.count)
        _ = try stage(drafts) { event, _ in events.append(event) }
        return events
    }

    /// Like `append`, returning each event with its log index and hash (what the projector takes).
    public func appendLogged(_ drafts: [EventDraft]) throws -> [LoggedEvent] {
        var staged: [(Event, EventHash)] = []
        let lastIndex = try stage(drafts) { staged.append(($0, $1)) }
        let firstIndex = lastIndex - UInt64(staged.count) + 1
        return staged.enumerated().map { offset, item in
            LoggedEvent(index: firstIndex + UInt64(offset), event: item.0, hash: item.1, segment: "", frameOffset: 0)
        }
    }

    /// Records many local changes durably without handing the events back: for bulk loads,
    /// where echoing a million events would cost more than writing them.
    ///
    /// Stages in frame-sized chunks and hands each to a second thread that compresses it, so
    /// that encoding and hashing (sequential: the hash chain) and compression run on two cores.
    /// Nothing is written before every draft is staged, so a rejected draft changes nothing.
    public func appendBulk(_ drafts: [EventDraft]) throws -> AppendReceipt {
        condition.lock()
        defer { condition.unlock() }
        while flushing { condition.wait() }
        if let failure { throw failure }
        // Become the flusher; whatever others staged before goes first.
        flushing = true
        let earlier = staged
        staged = StagedBatch()
        let ownBefore = stagedHead.chains[localOrigin]
        let framer = BackgroundFramer(segment: segment, configuration: configuration)
        framer.add(earlier)
        var stamper = DraftStamper(writer: self)
        var chunk = StagedBatch(expectedEvents: BackgroundFramer.chunkEvents)
        do {
            for draft in drafts {
                try stamper.stage(draft, into: &chunk)
                if chunk.bytes.bytes.count >= BackgroundFramer.chunkBytes {
                    // A signed head per chunk (~1 MiB), not one for the whole bulk: a receiver
                    // appends a stream only up to a signed head, so this keeps its appends
                    // flowing beside its checks. One signature per ~6,000 events.
                    if let key = signingKey, stamper.replicated.sequence > (ownBefore?.sequence ?? 0) {
                        chunk.signatures = [
                            SignaturePoint(after: chunk.events.count, records: [.head(key.sign(origin: localOrigin, head: stamper.replicated))])
                        ]
                    }
                    framer.add(chunk)
                    chunk = StagedBatch(expectedEvents: BackgroundFramer.chunkEvents)
                }
            }
        } catch {
            _ = framer.finish()
            staged = earlier
            flushing = false
            condition.broadcast()
            throw error
        }
        framer.add(chunk)
        stamper.commit(to: self, count: drafts.count)
        let lastIndex = stagedHead.lastIndex
        stagedTicket += 1
        let ticket = stagedTicket
        let (planned, framed) = framer.finish()
        // The chain's head after the bulk (and whatever was staged before it), signed. The
        // framer placed the earlier batch's received records among its events, unless it had none.
        var records = earlier.events.isEmpty ? earlier.signatures.flatMap(\.records) : []
        if let key = signingKey, let own = stagedHead.chains[localOrigin], own != ownBefore || earlier.events.contains(where: { $0.origin == localOrigin }) {
            records.insert(.head(key.sign(origin: localOrigin, head: own)), at: 0)
        }
        condition.unlock()
        var segment = planned, plan = framed
        segment.planSignatures(records, into: &plan)
        let result = Result { try segment.perform(plan) }
        condition.lock()
        self.segment = segment
        finishFlush(result, upTo: ticket)
        try waitUntilDurable(ticket)
        return AppendReceipt(count: drafts.count, lastIndex: lastIndex)
    }

    /// Encodes and stages the drafts, waits until they are durable, and returns the log index of the last.
    private func stage(_ drafts: [EventDraft], each: (Event, EventHash) -> Void) throws -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
        var batch = StagedBatch(expectedEvents: drafts.count)
        var stamper = DraftStamper(writer: self)
        for draft in drafts {
            let (event, hash) = try stamper.stage(draft, into: &batch)
            each(event, hash)
        }
        // Only now, with every draft encoded, does anything become visible to the flusher.
        staged.append(contentsOf: batch)
        stamper.commit(to: self, count: drafts.count)
        let lastIndex = stagedHead.lastIndex
        stagedTicket += 1
        try waitUntilDurable(stagedTicket)
        return lastIndex
    }

    /// Turns drafts into events (sequence, clock stamp, chain hash) and encodes them, keeping
    /// the two chains this replica writes in locals until `commit` (a rejected draft leaves the
    /// writer as it was).
    private struct DraftStamper {
        let localOrigin: ReplicaID
        let localOnlyOrigin: ReplicaID
        let maxEventSize: Int
        let wall = HybridClock.wallMillis()
        var clock: HybridClock
        var replicated: ChainHead
        var localOnly: ChainHead
        var lastTimestamp: HybridTimestamp
        var scratch = ByteWriter(capacity: 256)

        /// Reads the writer's state; the caller holds `condition`.
        init(writer: LogWriter) {
            localOrigin = writer.localOrigin
            localOnlyOrigin = writer.localOnlyOrigin
            maxEventSize = writer.configuration.maxEventSize
            clock = writer.clock
            let zero = ChainHead(sequence: 0, hash: .zero)
            replicated = writer.stagedHead.chains[writer.localOrigin] ?? zero
            localOnly = writer.stagedHead.chains[writer.localOnlyOrigin] ?? zero
            lastTimestamp = writer.stagedHead.maxTimestamp
        }

        /// Makes the next event of `draft`, encodes it and adds it to `batch`.
        @discardableResult
        mutating func stage(_ draft: EventDraft, into batch: inout StagedBatch) throws -> (Event, EventHash) {
            guard draft.actor.utf8.count <= Limits.maxActorBytes else {
                throw LogError.rejected(reason: "actor name longer than \(Limits.maxActorBytes) bytes")
            }
            let chain = draft.isLocalOnly ? localOnly : replicated
            let event = Event(
                origin: draft.isLocalOnly ? localOnlyOrigin : localOrigin, sequence: chain.sequence + 1, timestamp: clock.tick(wallMillis: wall),
                actor: draft.actor, isLocalOnly: draft.isLocalOnly, entityType: draft.entityType,
                entityID: draft.entityID, operation: draft.operation, properties: draft.properties,
                previousHash: chain.hash, basis: draft.basis.isEmpty ? [:] : draft.basis.filter { draft.properties[$0.key] != nil })
            scratch.bytes.removeAll(keepingCapacity: true)
            EventCodec.encode(event, into: &scratch)
            guard scratch.bytes.count <= maxEventSize else { throw LogError.rejected(reason: "event of \(scratch.bytes.count) bytes exceeds \(maxEventSize)") }
            let next = ChainHead(sequence: event.sequence, hash: batch.add(scratch.bytes, of: event))
            if draft.isLocalOnly { localOnly = next } else { replicated = next }
            lastTimestamp = event.timestamp
            return (event, next.hash)
        }

        /// Makes the staged events the writer's (the caller holds `condition`).
        func commit(to writer: LogWriter, count: Int) {
            if replicated.sequence > 0 { writer.stagedHead.chains[localOrigin] = replicated }
            if localOnly.sequence > 0 { writer.stagedHead.chains[localOnlyOrigin] = localOnly }
            writer.stagedHead.lastIndex += UInt64(count)
            writer.stagedHead.maxTimestamp = max(writer.stagedHead.maxTimestamp, lastTimestamp)
            writer.clock = clock
        }
    }

    /// Appends already-encoded events (from another replica), verified by the caller, durably,
    /// with the signature records that cover them (verified by the caller too) after them.
    @discardableResult
    public func appendEncoded(_ encodedEvents: [(bytes: [UInt8], event: Event)], signatures: [SignatureRecord]) throws -> UInt64 {
        try appendEncoded(encodedEvents, signaturePoints: signatures.isEmpty ? [] : [SignaturePoint(after: encodedEvents.count, records: signatures)])
    }

    /// Appends already-encoded events (from another replica), verified by the caller, durably,
    /// each point's signature records (verified by the caller too) written after the events it
    /// follows; returns the log index of the last (they get consecutive indexes).
    @discardableResult
    public func appendEncoded(_ encodedEvents: [(bytes: [UInt8], event: Event)], signaturePoints: [SignaturePoint] = []) throws -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
        var batch = StagedBatch(expectedEvents: encodedEvents.count)
        batch.signatures = signaturePoints
        var head = stagedHead
        for (bytes, event) in encodedEvents {
            let chain = head.chains[event.origin]
            guard event.sequence == (chain?.sequence ?? 0) + 1, event.previousHash == (chain?.hash ?? .zero) else {
                throw LogError.brokenInvariant(reason: "event \(event.origin) #\(event.sequence), verified, does not continue its origin's chain")
            }
            head.advance(past: event, hash: batch.add(bytes, of: event))
        }
        let wall = HybridClock.wallMillis()
        for (_, event) in encodedEvents { try? clock.observe(event.timestamp, wallMillis: wall) }
        staged.append(contentsOf: batch)
        stagedHead = head
        stagedTicket += 1
        try waitUntilDurable(stagedTicket)
        return head.lastIndex
    }

    /// Where `adoptSegments` takes segment files from: an empty folder inside the log directory
    /// (same file system, so taking a file is a rename), made afresh by each call.
    public func makeAdoptionFolder() throws -> String {
        let folder = directory + "/" + SegmentDirectory.adoptionFolderName
        try? FileManager.default.removeItem(atPath: folder)
        guard mkdir(folder, 0o755) == 0 else { throw LogError.io(operation: "mkdir", path: folder, errno: errno) }
        return folder
    }

    /// Makes the segment files in the adoption folder this log's own, as they are — for a log
    /// that holds no event yet. A new replica's first import takes a bundle's verified files
    /// this way instead of re-framing and re-compressing every event.
    ///
    /// The caller has fsynced the files and read them whole with a `LogReader` (checksums,
    /// frame indexes, seals) and checked every event's chain: they must form a log from index 1,
    /// whose head is `verifiedHead` (so reopening need not decode the newest segment again).
    /// They are renamed in oldest first, so a crash part-way leaves a shorter valid log (later
    /// events simply arrive again). Returns false, changing nothing, if the log is no longer
    /// empty (another append got in first).
    public func adoptSegments(verifiedHead: LogHead) throws -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while flushing { condition.wait() }
        if let failure { throw failure }
        guard stagedHead.lastIndex == 0 else { return false }
        let folder = directory + "/" + SegmentDirectory.adoptionFolderName
        let names = try SegmentDirectory.segmentNames(in: folder)
        guard names.first == SegmentFormat.fileName(firstIndex: 1) else {
            throw LogError.brokenInvariant(reason: "segments to adopt must start at log index 1, found \(names.first ?? "none")")
        }
        segment.close()
        do {
            if let archive = configuration.archive {
                // Archived whole, oldest first, before any is renamed in.
                for (position, name) in names.enumerated() {
                    guard let bytes = FileManager.default.contents(atPath: folder + "/" + name) else {
                        throw LogError.io(operation: "read", path: folder + "/" + name, errno: errno)
                    }
                    let body = Array(bytes.dropFirst(SegmentFormat.fileHeaderSize))
                    guard !body.isEmpty else { continue }  // an empty bundle's header-only segment
                    let next = position + 1 < names.count ? names[position + 1] : nil
                    do {
                        try archive.archive([SegmentAppend(segment: name, offset: SegmentFormat.fileHeaderSize, bytes: body, nextSegment: next)])
                    } catch { throw LogError.notArchived(cause: "\(error)") }
                }
            }
            for (position, name) in names.enumerated() {
                if position + 1 < names.count { chmod(folder + "/" + name, 0o444) }  // sealed, as the writer leaves them
                guard rename(folder + "/" + name, directory + "/" + name) == 0 else {
                    throw LogError.io(operation: "rename", path: folder + "/" + name, errno: errno)
                }
            }
            try SegmentDirectory.syncDirectory(directory)
            try? FileManager.default.removeItem(atPath: folder)
            let adopted = try LogRecovery.recover(directory: directory, cutTornTail: true, knownHead: verifiedHead)
            segment = try OpenSegment.resume(directory: directory, recovery: adopted, archive: configuration.archive)
            stagedHead = adopted.head
            try? clock.observe(adopted.head.maxTimestamp, wallMillis: HybridClock.wallMillis())
        } catch {
            // Whatever was renamed in is a valid log prefix, but this writer no longer knows its end.
            if case LogError.notArchived = error { failure = error as? LogError } else { failure = .writerStopped(cause: "adopting segments failed: \(error)") }
            throw error
        }
        return true
    }

    /// Waits (holding `condition` on entry and exit) until `ticket` is durable, flushing
    /// everything staged whenever no other thread is.
    private func waitUntilDurable(_ ticket: UInt64) throws {
        while durableTicket < ticket {
            if let failure { throw failure }
            if flushing {
                condition.wait()
                continue
            }
            flushing = true
            let batch = staged
            staged = StagedBatch()
            let upTo = stagedTicket
            let key = signingKey
            condition.unlock()
            let result = Result { try segment.write(batch, signatures: signatures(for: batch, key: key), configuration: configuration) }
            condition.lock()
            finishFlush(result, upTo: upTo)
        }
    }

    /// Records the outcome of a flush of everything up to `ticket` (holding `condition`).
    private func finishFlush(_ result: Result<Void, any Error>, upTo ticket: UInt64) {
        flushing = false
        switch result {
        case .success: durableTicket = ticket
        case .failure(let error as LogError):
            if case .notArchived = error { failure = error } else { failure = .writerStopped(cause: "\(error)") }
        case .failure(let error): failure = .writerStopped(cause: "\(error)")
        }
        condition.broadcast()
    }

    /// Hands this replica's chain over to `next`: writes everything staged (signed with the
    /// current key), then a rotation record signed by the current key, durably; runs `commit`
    /// (which makes `next` the key on disk) before anything else can be written, and signs with
    /// `next` from then on. A crash before `commit` leaves the rotation as the newest segment's
    /// last frame, which the next open finishes (`ReplicaSigningKey.open`).
    public func rotateKey(to next: ReplicaSigningKey, commit: () throws -> Void) throws -> KeyRotation {
        condition.lock()
        defer { condition.unlock() }
        while flushing { condition.wait() }
        if let failure { throw failure }
        guard let current = signingKey else { throw LogError.rejected(reason: "this log has no signing key to rotate") }
        flushing = true
        let batch = staged
        staged = StagedBatch()
        let upTo = stagedTicket
        let rotation = current.rotation(of: localOrigin, afterSequence: stagedHead.chains[localOrigin]?.sequence ?? 0, to: next)
        condition.unlock()
        let result = Result {
            try segment.write(batch, signatures: signatures(for: batch, key: current) + [.rotation(rotation)], configuration: configuration)
            try commit()
        }
        condition.lock()
        if case .success = result { signingKey = next }
        keyRotated = true
        finishFlush(result, upTo: upTo)
        if case .failure(let error) = result { throw error }
        return rotation
    }

    /// Closes the current segment file and releases the writer lock; later appends throw.
    ///
    /// A writer that never failed leaves a `CleanClose` record for the next one (unless it
    /// rotated its key: the next open reads the rotation from the log, as after a crash).
    public func close() {
        condition.lock()
        defer { condition.unlock() }
        while flushing { condition.wait() }
        if failure == nil, signingKey != nil, !keyRotated {
            try? segment.cleanClose(from: configuration.cleanCloseFrom)?.write(in: directory)
        }
        segment.close()
        lock.release()
        if failure == nil { failure = .writerStopped(cause: "the writer was closed") }
    }
}

/// What a bulk append did.
public struct AppendReceipt: Sendable {
    /// Events appended.
    public var count: Int
    /// Log index of the last of them (as staged; other appends may interleave before it).
    public var lastIndex: UInt64
}

/// Encoded events waiting for the flusher: their bytes back to back, and per event the
/// facts the seal summary needs.
struct StagedBatch {
    /// What the flusher needs to know of one staged event.
    struct Entry {
        /// Offset just past the event's bytes in `bytes`.
        var end: Int
        var origin: ReplicaID
        var sequence: UInt64
        var timestamp: HybridTimestamp
        var hash: EventHash
    }

    var bytes: ByteWriter
    var events: [Entry] = []
    /// Signature records received with the events, each written after the events it follows.
    var signatures: [SignaturePoint] = []

    /// An empty batch with room for about `expectedEvents` typical events.
    init(expectedEvents: Int = 0) {
        bytes = ByteWriter(capacity: expectedEvents * 160)
        events.reserveCapacity(expectedEvents)
    }

    /// Adds one encoded event and returns its hash.
    mutating func add(_ encoded: [UInt8], of event: Event) -> EventHash {
        let hash = EventCodec.hash(encoded)
        EventBatch.append(encoded, to: &bytes)
        events.append(Entry(end: bytes.bytes.count, origin: event.origin, sequence: event.sequence, timestamp: event.timestamp, hash: hash))
        return hash
    }

    mutating func append(contentsOf other: StagedBatch) {
        let before = events.count
        signatures.append(contentsOf: other.signatures.map { SignaturePoint(after: $0.after + before, records: $0.records) })
        if events.isEmpty {
            (bytes, events) = (other.bytes, other.events)
            return
        }
        let base = bytes.bytes.count
        bytes.raw(other.bytes.bytes)
        events.append(
            contentsOf: other.events.map { Entry(end: $0.end + base, origin: $0.origin, sequence: $0.sequence, timestamp: $0.timestamp, hash: $0.hash) })
    }
}
