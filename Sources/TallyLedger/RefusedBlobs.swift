import Foundation

/// The blobs a peer refused for its attachment quota, and when each was last sent and refused:
/// for an hour they are not sent to it again (`Ledger.sync`'s `withholdingBlobs`) — they still
/// count as refused, so the sync still says so. Without it, a replica syncing every 30 s
/// uploaded a refused photo 120 times an hour, each to be refused. Kept by TallyKit in
/// `app-sync.json` per server, and in memory per peer by a service's peer syncs.
public struct RefusedBlobs: Codable, Sendable, Equatable {
    /// How long a refused blob is not sent again.
    public static let kept: TimeInterval = 3_600

    /// Per digest, when the peer last refused it.
    public private(set) var refusedAt: [String: Date]

    public init(_ refusedAt: [String: Date] = [:]) { self.refusedAt = refusedAt }

    /// The blobs refused within `kept` of `now`: not sent again yet.
    public func withheld(now: Date = Date()) -> Set<String> {
        Set(refusedAt.filter { now.timeIntervalSince($0.value) < Self.kept }.keys)
    }

    /// What to remember after a sync that withheld `withheld(now:)` and ended with `refusal`
    /// (nil: the peer took every blob it lacked): the blobs it still lacks for its quota, each
    /// withheld one keeping its time (so it is sent again an hour after it was refused), the
    /// others refused `now`. A time ahead of `now` (a clock set back) becomes `now`.
    public func after(_ refusal: PeerAttachmentsOverQuota?, now: Date = Date()) -> RefusedBlobs {
        let withheld = withheld(now: now)
        var next: [String: Date] = [:]
        for digest in refusal?.digests ?? [] {
            next[digest] = withheld.contains(digest) ? min(refusedAt[digest] ?? now, now) : now
        }
        return RefusedBlobs(next)
    }

    public var isEmpty: Bool { refusedAt.isEmpty }
}
