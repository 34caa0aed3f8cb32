import Foundation
import Testing
import TallyCore
import TallyLog

@testable import TallySync

/// What a sender holds back until a signed head covers it (`HeldUntilSigned`).
@Suite struct HeldUntilSignedTests {
    let key = ReplicaSigningKey.generate()
    let origin = ReplicaID(UUID())
    let other = ReplicaID(UUID())

    func head(_ origin: ReplicaID, _ sequence: UInt64) -> SignatureRecord {
        .head(key.sign(origin: origin, head: ChainHead(sequence: sequence, hash: .zero)))
    }

    @Test func aHeadReleasesWhatItCoversOfItsOriginInOrder() {
        var held = HeldUntilSigned<UInt64>()
        for sequence in 1...3 as ClosedRange<UInt64> { held.hold(sequence, origin: origin, sequence: sequence, bytes: 10) }
        held.hold(100, origin: other, sequence: 1, bytes: 10)
        #expect(held.release(by: head(other, 5)) == [100])
        #expect(held.release(by: head(origin, 2)) == [1, 2])
        #expect(held.release(by: head(origin, 2)).isEmpty)
        held.finish()
        #expect(held.leftOut == 1, "#3 of the origin was never covered")
    }

    @Test func anOriginPastAReceiversUnsignedLimitIsGivenUp() {
        var held = HeldUntilSigned<UInt64>()
        for sequence in 1...UInt64(StreamReceiver.maxUnsignedRun + 1) { held.hold(sequence, origin: origin, sequence: sequence, bytes: 1) }
        #expect(!held.takes(origin))
        held.hold(0, origin: origin, sequence: UInt64(StreamReceiver.maxUnsignedRun + 2), bytes: 1)
        #expect(held.release(by: head(origin, .max)).isEmpty, "nothing of it goes out, not even under a later head")
        held.hold(7, origin: other, sequence: 1, bytes: StreamReceiver.maxUnsignedBytes + 1)
        #expect(!held.takes(other), "by bytes as by count")
        #expect(held.leftOut == StreamReceiver.maxUnsignedRun + 3)
    }

    @Test func aRotationWhileEventsWaitGivesTheOriginUp() {
        var held = HeldUntilSigned<UInt64>()
        held.hold(1, origin: origin, sequence: 1, bytes: 1)
        let next = ReplicaSigningKey.generate()
        #expect(held.release(by: .rotation(key.rotation(of: origin, afterSequence: 0, to: next))).isEmpty)
        #expect(held.release(by: head(origin, 1)).isEmpty)
        #expect(!held.takes(origin) && held.leftOut == 1)
        #expect(held.release(by: .rotation(key.rotation(of: other, afterSequence: 0, to: next))).isEmpty)
        #expect(held.takes(other), "a rotation with nothing waiting changes nothing")
    }
}
