import Foundation
import TallyCore
import TallyLog
import TallySync

/// Two live copies of one replica — a phone restored from a backup on a second phone, a VM
/// snapshot started again, a copied folder — hold one replica id and signing key. Each writes
/// its own events under that origin, so each is a fork of the other's chain, and a peer that
/// holds one copy's event #n refuses the other's for good. Whichever copy finds out (its
/// folder moved, `ReplicaHome`; or a peer holds a different chain of its origin) gives itself a
/// new identity, re-issues under it the events the other copy's chain does not hold, and
/// records what happened in the log (docs/TALLYKIT.md, "Restored copies").
extension Ledger {
    /// What giving a copy a new identity did.
    public struct IdentityChange: Sendable, Equatable, Codable {
        /// The origin both copies held, and the copy's new one.
        public var formerOrigin: String
        public var newOrigin: String
        /// How it was found: "at open: …" or "at sync: …".
        public var detected: String
        /// The copy's events the other copy's chain lacked, written again under the new origin.
        public var reissued: Int
        /// Those that could not be (each with why: the other copy deleted what they change).
        public var notReissued: [String]

        public init(formerOrigin: String, newOrigin: String, detected: String, reissued: Int = 0, notReissued: [String] = []) {
            (self.formerOrigin, self.newOrigin, self.detected, self.reissued, self.notReissued) = (formerOrigin, newOrigin, detected, reissued, notReissued)
        }

        /// The setting it is recorded as (replicated: every replica's history shows it).
        public var settingKey: String { "replicaCopies." + newOrigin.replacingOccurrences(of: "-", with: "") }

        public var json: JSONText {
            .object([
                ("formerOrigin", .string(formerOrigin)), ("newOrigin", .string(newOrigin)), ("detected", .string(detected)),
                ("reissued", .int(Int64(reissued))), ("notReissued", .array(notReissued.prefix(100).map { .string($0) })),
            ])
        }

        /// What happened, in words a person reads.
        public var description: String {
            "This device held a copy of another device's ledger (\(detected)). It now writes as a new replica, \(newOrigin); "
                + (reissued == 0
                    ? "none of its changes needed writing again." : "\(reissued) of its changes that the other device never had were written again under it.")
                + (notReissued.isEmpty ? "" : " \(notReissued.count) could not be, because the other device had deleted what they change.")
        }
    }

    /// Records `change` in the log, as the replicated setting `replicaCopies.<new origin>`.
    public func recordIdentityChange(_ change: IdentityChange, actor: String) async throws {
        _ = try await setSetting(change.settingKey, json: change.json.serialized, isLocal: false, actor: actor)
    }

    /// Fills this ledger — a new replica just made for the copy in `former`, holding (pulled
    /// from the peer) the other copy's chain of the former origin — with what the copy held:
    /// every event of other origins the peer lacks, exactly as they were (their signatures
    /// travel with them); the copy's own events that the other chain does not hold, re-issued
    /// under this ledger's origin with their author kept; its local-only settings; its
    /// attachments and peers. Returns what it did (recorded by the caller).
    public func takeOver(fromCopy former: DataDirectory, detected: String) async throws -> IdentityChange {
        let formerOrigin = former.identity.origin
        let forked = try eventsForkedAway(in: former)
        // Other origins next, as they stand in the copy's log (its own chain passed over).
        var lacking = vector
        lacking.sequences[formerOrigin] = .max
        // An origin's run without a signed head longer than a receiver takes (a device's log
        // from before signing) stays in the folder moved aside, which keeps every event it
        // held: the receiver here would refuse it as any other would, and the split goes on.
        _ = try await receive(recordStream(from: former, lacking: lacking), from: "the replaced copy")

        var change = IdentityChange(formerOrigin: formerOrigin.description, newOrigin: directory.identity.replicaId, detected: detected)
        for event in forked {
            do {
                if try await reissue(event) { change.reissued += 1 }
            } catch let refused as ValidationError {
                change.notReissued.append("\(event.entityType) \(event.entityID) (#\(event.sequence)): \(refused.message)")
            }
        }
        let formerViews = try LedgerViews.open(former)
        for setting in try formerViews.settings() where setting.scope == "local" {
            _ = try await setSetting(setting.key, json: setting.value, isLocal: true, actor: "replica")
        }
        let (from, to) = (BlobStore(directory: former), blobs)
        for blob in try from.all() where try to.size(of: blob.digest) == nil {
            guard let data = FileManager.default.contents(atPath: try from.file(of: blob.digest)) else { continue }
            _ = try to.store(data)
        }
        for peer in try PeerStore(directory: former).all() { try? PeerStore(directory: directory).add(peer) }
        return change
    }

    /// The copy's own events from the first one that this ledger (holding the other copy's
    /// chain of the former origin, pulled with that origin's key pinned, so only a holder of
    /// the key could have written it) does not hold as it is. Throws when there is no such
    /// fork: the other chain is a prefix of the copy's — nobody else wrote under the origin,
    /// and whoever said so (a peer's word, which costs nothing to forge) is not believed.
    func eventsForkedAway(in former: DataDirectory) throws -> [Event] {
        let formerOrigin = former.identity.origin
        var otherChain: [UInt64: EventHash] = [:]
        try directory.reader.forEachEvent { logged in
            if logged.event.origin == formerOrigin { otherChain[logged.event.sequence] = logged.hash }
        }
        var forked: [Event] = []
        var copyLength: UInt64 = 0
        try former.reader.forEachEvent { logged in
            guard logged.event.origin == formerOrigin else { return }
            copyLength = max(copyLength, logged.event.sequence)
            if forked.isEmpty, otherChain[logged.event.sequence] == logged.hash { return }
            forked.append(logged.event)
        }
        let firstForked = forked.first?.sequence ?? .max
        guard otherChain.keys.contains(where: { $0 > copyLength || $0 >= firstForked }) else {
            throw SyncRejection(
                source: "the split of a copy",
                reason: "no other chain of origin \(formerOrigin) was shown (only what this replica wrote itself); nothing changed")
        }
        return forked
    }

    /// Writes `event`'s change again as a local write of this replica, by its author: a
    /// create of what exists now (the other copy created it too) sets its properties instead,
    /// and a property the other copy set later than `event` keeps the other copy's value (the
    /// re-issued event is new, but its change is as old as it was); false for a change that has
    /// nothing left to change (a delete of what is gone, a change overtaken entirely).
    private func reissue(_ event: Event) async throws -> Bool {
        guard !event.isLocalOnly else { return false }
        struct NothingToChange: Error {}
        do {
            _ = try await session.write(actor: event.actor) { lookup, _ in
                var operation = event.operation
                switch (operation, try lookup.live(event.entityID) != nil) {
                case (.create, true): operation = .update
                case (.update, false): throw ValidationError(field: "id", "the other device deleted it", kind: .notFound)
                case (.delete, false): throw NothingToChange()
                default: break
                }
                var properties = event.properties
                if operation == .update, let stamps = try lookup.entity(event.entityID)?.stamps {
                    for (name, stamp) in stamps where stamp.timestamp > event.timestamp { properties[name] = nil }
                    if properties.isEmpty { throw NothingToChange() }
                }
                return EventDraft(entityType: event.entityType, entityID: event.entityID, operation: operation, properties: properties, actor: event.actor)
            }
            return true
        } catch is NothingToChange {
            return false
        }
    }
}
