import Foundation
import NIOCore
import Testing
import TallyCore
import TallyLog
import TallyTestSupport

@testable import TallySync

/// What a sender holds back until a signed head covers it (`HeldUntilSigned`).
@Suite struct HeldUntilSignedTests {
    let key = ReplicaSigningKey.generate()
    let origin = ReplicaID(UUID())
    let other = ReplicaID(UUID())

    func head(_ origin: ReplicaID, _ sequence: UInt64) -> SignedHead {
        key.sign(origin: origin, head: ChainHead(sequence: sequence, hash: .zero))
    }

    @Test func aHeadReleasesWhatItCoversOfItsOriginInOrder() throws {
        var held = HeldUntilSigned<String>()
        for sequence in 1...3 as ClosedRange<UInt64> { held.hold("e\(sequence)", origin: origin, sequence: sequence, bytes: 10) }
        held.hold("other", origin: other, sequence: 1, bytes: 10)
        #expect(held.release(by: head(other, 5)) == ["other"])
        #expect(held.release(by: head(origin, 2)) == ["e1", "e2"])
        #expect(held.release(by: head(origin, 2)).isEmpty)
        #expect(held.isHolding(origin) && !held.isHolding(other))
        held.finish()
        #expect(held.leftOut == 1, "#3 of the origin was never covered")
    }

    /// A rotation held among waiting events goes out in its place: after the events it follows,
    /// before the ones signed with the new key and the head that covers them all.
    @Test func aRotationWaitsInItsPlace() throws {
        var held = HeldUntilSigned<String>()
        held.hold("e1", origin: origin, sequence: 1, bytes: 1)
        held.hold(rotation: "rotation", origin: origin, afterSequence: 1)
        held.hold("e2", origin: origin, sequence: 2, bytes: 1)
        #expect(held.release(by: head(origin, 2)) == ["e1", "rotation", "e2"])
        held.finish()
        #expect(held.leftOut == 0)
    }

    /// A stream's sender gives up an origin that waits for more than a receiver would take
    /// (dropping what waits, and everything of it after); a bundle's holds as much as waits.
    @Test func pastAStreamsLimitsTheSenderGivesTheOriginUp() throws {
        var stream = HeldUntilSigned<Int>(limits: (events: 3, bytes: 100))
        for sequence in 1...3 as ClosedRange<UInt64> { stream.hold(0, origin: origin, sequence: sequence, bytes: 10) }
        #expect(!stream.hasGivenUp(origin))
        stream.hold(0, origin: origin, sequence: 4, bytes: 10)
        #expect(stream.hasGivenUp(origin) && stream.isHolding(origin) && stream.leftOut == 4)
        #expect(stream.givenUpRun?.origin == origin && stream.givenUpRun?.from == 1)
        stream.hold(0, origin: origin, sequence: 5, bytes: 10)
        stream.hold(rotation: 9, origin: origin, afterSequence: 5)
        #expect(stream.release(by: head(origin, 5)).isEmpty && stream.leftOut == 5, "nothing of it goes after")
        stream.hold(1, origin: other, sequence: 1, bytes: 10)
        #expect(stream.release(by: head(other, 1)) == [1], "another origin still goes")
        var bytes = HeldUntilSigned<Int>(limits: (events: 10, bytes: 100))
        bytes.hold(0, origin: origin, sequence: 1, bytes: 60)
        _ = bytes.release(by: head(origin, 1))
        bytes.hold(0, origin: origin, sequence: 2, bytes: 60)  // what was released no longer counts
        #expect(!bytes.hasGivenUp(origin))
        bytes.hold(0, origin: origin, sequence: 3, bytes: 60)
        #expect(bytes.hasGivenUp(origin))
        #expect(HeldUntilSigned<Int>(limits: (events: 3, bytes: 100)).givenUpRun == nil)
        var bundle = HeldUntilSigned<Int>()
        for sequence in 1...250_000 as ClosedRange<UInt64> { bundle.hold(0, origin: origin, sequence: sequence, bytes: 1_000) }
        #expect(bundle.release(by: head(origin, 250_000)).count == 250_000)
    }

    /// The records a buffer hands out: each event's first byte (its name here), "h" for a head.
    func handedOut(_ buffer: inout SignedRecordBuffer) throws -> [String] {
        var names: [String] = []
        try buffer.handOut { bytes, _ in
            var decoder = EventRecords.Decoder()
            try decoder.feed(bytes) { record in
                switch record {
                case .event(let event): names.append(String(UnicodeScalar(event[0])))
                case .signature: names.append("h")
                }
            }
        }
        return names
    }

    /// An event whose head has not come when the buffer is handed out stays behind, and goes
    /// out before the head that later covers it; the others go as they came.
    @Test func aBufferHandsOutOnlyWhatAHeadCovers() throws {
        var buffer = SignedRecordBuffer()
        for (name, origin, sequence) in [("a", origin, 1), ("b", other, 1), ("c", origin, 2)] as [(String, ReplicaID, UInt64)] {
            Array(name.utf8).withUnsafeBytes { buffer.add(event: $0, origin: origin, sequence: sequence) }
        }
        buffer.add(head: head(other, 1), send: true)
        #expect(try handedOut(&buffer) == ["b", "h"], "a and c wait for a head of theirs")
        Array("d".utf8).withUnsafeBytes { buffer.add(event: $0, origin: origin, sequence: 3) }
        buffer.add(head: head(origin, 2), send: true)
        #expect(try handedOut(&buffer) == ["a", "c", "h"], "d waits behind them, for #3's head")
        buffer.finish()
        #expect(try handedOut(&buffer).isEmpty, "left out: no head came for it")
    }

    /// A log from before signing holds a long run without a head (a retired device's, which no
    /// head will ever cover): past what a receiver takes, that origin is given up — what waits
    /// of it dropped, its later events, rotations and heads not sent — and every other origin
    /// still goes. Found by review: the buffer refused the whole delivery there, so every sync
    /// with a replica lacking that run stopped at it, the signed events after it never sent.
    @Test func aLongRunWithoutAHeadIsLeftOutAndTheRestStillGoes() throws {
        var buffer = SignedRecordBuffer()
        let run = UInt64(StreamReceiver.maxUnsignedRun + 1)
        for sequence in 1...run {
            [UInt8](repeating: 1, count: 10).withUnsafeBytes { buffer.add(event: $0, origin: origin, sequence: sequence) }
        }
        Array("b".utf8).withUnsafeBytes { buffer.add(event: $0, origin: other, sequence: 1) }
        buffer.add(head: head(other, 1), send: true)
        Array("late".utf8).withUnsafeBytes { buffer.add(event: $0, origin: origin, sequence: run + 1) }
        buffer.add(head: head(origin, run + 1), send: true)
        #expect(try handedOut(&buffer) == ["b", "h"], "the other origin's event and its head; nothing of the run, nor its head")
        buffer.finish()
        #expect(buffer.leftOut == Int(run) + 1)
        let refusal = try #require(buffer.givenUpRun, "the delivery then says what it left out")
        #expect("\(refusal)".contains("\(origin)") && "\(refusal)".contains("#1 on"))
    }
}

/// What a sender does with an origin it left out (`recordStream`): every other record goes,
/// the stream ends as usual, and the run is handed to `leftOut` (a push's report, a pull's
/// server log). Found by review: a first mend ended the stream with the refusal — a pull's
/// answer was cut (the puller took the server for out of reach), and a push failed the whole
/// sync for good (no attachments moved, the peer backed off) over a run nobody there can sign.
@Suite struct LeftOutRunTests {
    /// A replica's log holding its own two signed events and five of another origin that no
    /// head covers (written as a build from before signing did).
    static func logWithAnUnsignedRun(_ folder: TemporaryDirectory) throws -> (DataDirectory, unsigned: ReplicaID) {
        let directory = try DataDirectory.create(path: folder.file("b"), name: "b")
        let unsigned = ReplicaID(UUID())
        let bare = try LogWriter(directory: directory.logPath, localOrigin: unsigned, localOnlyOrigin: ReplicaID(UUID()))
        try bare.append((1...5).map { _ in SampleEvents.expenseCreate() })
        bare.close()
        let writer = try directory.openWriter()
        try writer.append([SampleEvents.expenseCreate(), SampleEvents.expenseCreate()])
        writer.close()
        return (directory, unsigned)
    }

    /// The events a stream carried, per origin, and the error it ended with.
    static func read(_ stream: AsyncThrowingStream<ByteBuffer, any Error>) async -> (events: [ReplicaID: Int], error: (any Error)?) {
        var decoder = EventRecords.Decoder()
        var events: [ReplicaID: Int] = [:]
        do {
            for try await piece in stream {
                try decoder.feed(piece.readableBytesView) { record in
                    if case .event(let bytes) = record { events[try EventCodec.decode(bytes).origin, default: 0] += 1 }
                }
            }
            return (events, nil)
        } catch {
            return (events, error)
        }
    }

    @Test func theRunIsHandedOverAndTheStreamEndsAsUsual() async throws {
        let folder = TemporaryDirectory("left-out-run")
        let (b, unsigned) = try Self.logWithAnUnsignedRun(folder)
        let limits = (events: 3, bytes: 1 << 20)

        let leftOut = LeftOutRuns()
        let sent = await Self.read(recordStream(from: b, lacking: VersionVector(), limits: limits, leftOut: leftOut.note))
        #expect(sent.events == [b.identity.origin: 2] && sent.error == nil, "the signed events go, nothing of the run, and the stream ends as usual")
        let run = try #require(leftOut.first, "the run is said")
        #expect(run.origin == unsigned && run.from == 1 && "\(run)".contains("\(unsigned)") && "\(run)".contains("#1 on"))

        let within = LeftOutRuns()
        let whole = await Self.read(recordStream(from: b, lacking: VersionVector(), leftOut: within.note))
        #expect(whole.error == nil && whole.events[unsigned] == nil, "within a receiver's limits the run still waits for its head")
        #expect(within.first == nil, "and is not said: its head may come")
    }
}
