import Testing
@testable import TallyKit
import TallySync

/// Which failed syncs an app's replica tries again (`Replica.retrying`).
struct RetryingTests {
    func answered(_ status: Int) -> Replica.Retrying {
        Replica.retrying(SyncRejection(source: "push", reason: "the peer answered \(status)", httpStatus: status))
    }

    @Test func aPushCutForItsPaceIsTriedAgainAndARefusalIsNot() {
        #expect(answered(408) == .whenReachable, "cut for its pace or deadline: the next push goes on from what was verified")
        #expect(answered(429) == .whenReachable)
        #expect(answered(503) == .whenReachable)
        #expect(answered(401) == .signInFirst)
        #expect(answered(422) == .never)
        #expect(answered(400) == .never)
        #expect(Replica.retrying(SyncRejection(source: "stream", reason: "a record does not decode")) == .never)
    }
}
