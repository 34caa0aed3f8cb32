/// What can go wrong in the ledger layer itself (the modules below have their own errors:
/// `LogError`, `ValidationError`, `SyncRejection`, …). Each says what to do.
public enum LedgerError: Error, Sendable, CustomStringConvertible {
    /// An entity was written but its view row is missing: a broken invariant (HTTP 500), not
    /// the client's mistake; `tally rebuild-projections --verify-only` tells whether views drifted.
    case notInViews(String)
    /// A query parameter is not one the query takes.
    case unknownParameter(String)
    /// The write is durable in the log, but the views could not take it (a full disk?): it is
    /// written — not failed — and shows once the views catch up (HTTP 202).
    case viewsBehind(id: String, cause: String)
    /// Another request with the same `Idempotency-Key` is creating the entity right now
    /// (HTTP 409): retry, and the retry gets the entity it created.
    case idempotencyKeyInUse(String)
    /// A retry under an `Idempotency-Key` sends other values than the create the key made
    /// (HTTP 422): `fields` differ from what entity `id` was created with. A new entity needs a
    /// new key; a change to this one, an update.
    case idempotencyKeyReused(key: String, id: String, fields: [String])
    /// As many imports as a ledger reads at once are under way (HTTP 429): try again when one
    /// has finished.
    case tooManyImports(limit: Int)
    /// As many reads of the ledger as it was are running or waiting as take turns (HTTP 503):
    /// retry in a few seconds.
    case asOfBusy(readers: Int)
    /// As many exports of the ledger as take turns are being built or waiting (HTTP 503):
    /// retry in a few seconds.
    case exportBusy(exports: Int)
    /// As many imports as take turns at matching rows against categorisation rules are matching
    /// or waiting in this process (HTTP 503): retry in a few seconds.
    case matchingBusy(imports: Int)

    /// A stable code for APIs and scripts.
    public var code: String {
        switch self {
        case .notInViews: "not_in_views"
        case .unknownParameter: "unknown_parameter"
        case .viewsBehind: "written_views_behind"
        case .idempotencyKeyInUse: "idempotency_key_in_use"
        case .idempotencyKeyReused: "idempotency_key_reused"
        case .tooManyImports: "too_many_imports"
        case .asOfBusy: "as_of_busy"
        case .exportBusy: "export_busy"
        case .matchingBusy: "matching_busy"
        }
    }

    public var description: String {
        switch self {
        case .notInViews(let what):
            "\(what) was written to the log but is not in the views; run 'tally rebuild-projections --verify-only' to check them"
        case .unknownParameter(let name): "unknown query parameter '\(name)'"
        case .viewsBehind(let id, let cause):
            "\(id) was written durably, but the views could not show it yet (\(cause)); it appears once they catch up (free disk space; no need to write it again)"
        case .idempotencyKeyInUse(let key):
            "a create with the idempotency key '\(key)' is being answered right now; retry it, and it returns the entity that one creates"
        case .idempotencyKeyReused(let key, let id, let fields):
            "the idempotency key '\(key)' made \(id) with other values of \(fields.joined(separator: ", ")); a retry sends what the first request did — a new entity needs a new key, a change to this one an update"
        case .tooManyImports(let limit):
            "\(limit) imports are under way on this ledger, the most it reads at once; try again when one has finished"
        case .asOfBusy(let readers):
            "\(readers) reads of the ledger as it was are already running or waiting; retry in a few seconds"
        case .exportBusy(let exports):
            "\(exports) exports of this ledger are already being built or waiting; retry in a few seconds"
        case .matchingBusy(let imports):
            "\(imports) imports are already matching their rows against categorisation rules on this server, or waiting to; retry in a few seconds"
        }
    }
}

/// A sync that ended for an attachment quota — this ledger's or the peer's — after its events
/// went both ways: not a failure to back off from or retry at once, and what the peer refused
/// of this replica's blobs is withheld for a while (`RefusedBlobs`).
public protocol AttachmentQuotaEnding: Error, Sendable {
    /// The peer's refusal of this replica's blobs, if it refused any.
    var peerRefusal: PeerAttachmentsOverQuota? { get }
}

/// A sync left attachments on the peer because keeping them would take this ledger's
/// attachments past their quota (`LedgerLimits.attachmentBytes`): the events it brought, and
/// the blobs that fit, were kept, and a later sync fetches the rest once there is room.
public struct AttachmentsLeftOverQuota: AttachmentQuotaEnding, CustomStringConvertible {
    /// The quota, in bytes.
    public let quota: Int
    /// How many blobs were left on the peer.
    public let left: Int
    /// Events the same sync applied before it (`Ledger.failure(_:keeping:)`).
    public var kept = 0
    /// The peer's refusal of this replica's blobs for its own quota in the same sync, if any
    /// (both sides full): kept so that its blobs are withheld all the same (`RefusedBlobs`).
    public var peerRefused: PeerAttachmentsOverQuota?

    public init(quota: Int, left: Int) { (self.quota, self.left) = (quota, left) }

    public var peerRefusal: PeerAttachmentsOverQuota? { peerRefused }

    public var description: String {
        "\(left) attachment(s) were left on the peer: keeping them would take this ledger's attachments past their quota of \(quota) bytes"
            + (kept > 0 ? "; the \(kept) events this sync received were kept" : "")
            + (peerRefused.map { "; and \($0)" } ?? "")
    }
}

/// A sync whose peer refused some of this replica's blobs for its own attachment quota: the
/// events went both ways, and the peer's other blobs were sent; those refused are offered
/// again at the next sync, unless the caller withholds them (`Ledger.sync`'s
/// `withholdingBlobs`: TallyKit does for an hour, so a phone does not upload a refused photo
/// at every sync).
public struct PeerAttachmentsOverQuota: AttachmentQuotaEnding, CustomStringConvertible {
    /// The blobs the peer lacks and did not get for its quota: refused now, or withheld.
    public let digests: [String]
    /// How many of them were withheld: not sent again, the peer having refused them lately.
    public let withheld: Int

    public init(digests: [String], withheld: Int = 0) { (self.digests, self.withheld) = (digests, withheld) }

    /// How many blobs the peer did not get.
    public var refused: Int { digests.count }
    public var peerRefusal: PeerAttachmentsOverQuota? { self }

    public var description: String {
        let lately = withheld == 0 ? "" : " (\(withheld) of them refused lately and not sent again yet)"
        return
            "the peer refused \(refused) attachment(s)\(lately), its attachments being at their quota; the events went both ways, and the other attachments were sent"
    }
}
