import Foundation
import Testing
import TallyLedger

/// What is remembered of blobs a peer refused for its attachment quota (`RefusedBlobs`).
struct RefusedBlobsTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aRefusedBlobIsWithheldForAnHourFromWhenItWasRefused() {
        let refused = RefusedBlobs().after(PeerAttachmentsOverQuota(digests: ["a"]), now: now)
        #expect(refused.withheld(now: now) == ["a"])
        #expect(refused.withheld(now: now + 3_599) == ["a"])
        #expect(refused.withheld(now: now + 3_600).isEmpty, "sent again after the hour")
        // Withheld at the next sync and still lacking: it keeps its time, so the hour does not
        // start again; a blob refused for the first time gets its own.
        let later = refused.after(PeerAttachmentsOverQuota(digests: ["a", "b"], withheld: 1), now: now + 600)
        #expect(later.refusedAt == ["a": now, "b": now + 600])
        #expect(later.withheld(now: now + 3_600) == ["b"])
        // Sent again after the hour and refused again: a new hour.
        #expect(later.after(PeerAttachmentsOverQuota(digests: ["a"]), now: now + 4_000).refusedAt == ["a": now + 4_000])
    }

    @Test func whatThePeerNoLongerLacksIsForgotten() {
        let refused = RefusedBlobs(["a": now, "b": now])
        #expect(refused.after(nil, now: now + 60).isEmpty, "the peer took every blob it lacked")
        #expect(refused.after(PeerAttachmentsOverQuota(digests: ["b"], withheld: 1), now: now + 60).refusedAt == ["b": now])
    }

    /// A peer's clock is not involved, but this replica's may be set back: a time ahead of now
    /// is withheld, and becomes now at the next sync (so it is not withheld for days).
    @Test func aTimeAheadOfTheClockBecomesNow() {
        let refused = RefusedBlobs(["a": now + 86_400])
        #expect(refused.withheld(now: now) == ["a"])
        #expect(refused.after(PeerAttachmentsOverQuota(digests: ["a"], withheld: 1), now: now).refusedAt == ["a": now])
    }
}
