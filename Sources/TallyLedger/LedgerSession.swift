import Foundation
import TallyCore
import TallyLog
import TallyStore

/// The write path shared by the CLI and the server: check a draft (shape, then against the
/// current views), append it durably, project it. Bad input throws before anything is appended.
public struct LedgerSession: Sendable {
    /// The replica's writer (its holder owns the writer lock).
    public let writer: LogWriter
    /// The replica's views.
    public let projector: Projector
    /// The latest events this session appended, so concurrent writers can project each
    /// other's events without re-reading the log.
    let recent = RecentEvents()

    /// A session over an open writer and views.
    public init(writer: LogWriter, projector: Projector) {
        self.writer = writer
        self.projector = projector
    }

    /// Appends the draft `build` returns (given the current state and the default currency)
    /// as `actor`, and gives back the event. Throws before anything is appended when the draft
    /// is refused; throws `LedgerError.viewsBehind` when the event is durable but could not be
    /// projected (a full disk under the views): the write stands, and the views catch up later.
    public func write(actor: String, _ build: (any LedgerLookup, _ defaultCurrency: String) throws -> EventDraft) throws -> Event {
        let draft = try projector.database.read { db in
            let lookup = ProjectionLookup(db)
            var draft = try build(lookup, try Self.defaultCurrency(in: lookup))
            draft.actor = actor
            try EntitySchema.validateActor(actor)
            draft.properties = try EntitySchema.validate(draft.entityType, draft.operation, draft.properties)
            try WriteRules.check(draft, against: lookup)
            // What this write overwrites: lets every replica tell a concurrent edit from a later one.
            if let current = try lookup.entity(draft.entityID) {
                draft.basis = current.stamps.filter { draft.properties[$0.key] != nil }
            }
            return draft
        }
        let logged = try writer.appendLogged([draft])
        recent.add(logged)
        // The event is durable: whatever happens to the views now, it was written (the next
        // catch-up applies it from the log), and the caller must be told so, not "failed".
        do { try projector.project(logged, recent: recent.event) } catch {
            throw LedgerError.viewsBehind(id: logged[0].event.entityID.description, cause: "\(error)")
        }
        return logged[0].event
    }

    /// Appends the drafts `build` returns, all checked first (any refused: nothing appended),
    /// as one durable batch, then projects them; returns how many were appended.
    public func writeAll(actor: String, _ build: (any LedgerLookup) throws -> [EventDraft]) throws -> Int {
        let drafts = try projector.database.read { db in
            let lookup = ProjectionLookup(db)
            return try build(lookup).map { draft in
                var draft = draft
                draft.actor = actor
                draft.properties = try EntitySchema.validate(draft.entityType, draft.operation, draft.properties)
                try WriteRules.check(draft, against: lookup)
                return draft
            }
        }
        guard !drafts.isEmpty else { return 0 }
        try EntitySchema.validateActor(actor)
        let logged = try writer.appendLogged(drafts)
        recent.add(logged)
        do { try projector.project(logged, recent: recent.event) } catch {
            throw LedgerError.viewsBehind(id: logged[0].event.entityID.description, cause: "\(error)")
        }
        return logged.count
    }

    /// Deletes an entity whether or not it was ever created — a tombstone, so that it never can
    /// be (a delete wins over every create, in any order, on every replica). For a skipped
    /// recurring occurrence, whose id every replica derives alike. Refused for an entity of
    /// another type.
    public func writeTombstone(_ type: EntityType, id: EntityID, actor: String) throws {
        try EntitySchema.validateActor(actor)
        let draft = EventDraft(entityType: type, entityID: id, operation: .delete, actor: actor)
        try projector.database.read { db in
            if let existing = try ProjectionLookup(db).entity(id), existing.type != type {
                throw ValidationError(field: "id", "\(id) is \(existing.type.withArticle)", kind: .conflictsWithState)
            }
        }
        let logged = try writer.appendLogged([draft])
        recent.add(logged)
        do { try projector.project(logged, recent: recent.event) } catch {
            throw LedgerError.viewsBehind(id: id.description, cause: "\(error)")
        }
    }

    /// The `defaultCurrency` replicated setting if it holds a valid code, else KRW.
    public static func defaultCurrency(in lookup: some LedgerLookup) throws -> String {
        if case .json(let text)? = try lookup.live(.settingKey("defaultCurrency"))?.values[.value] {
            let code = text.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            if Currency.isValid(code) { return code }
        }
        return Currency.fallbackDefault
    }
}

/// A bounded memory of recently appended events by log index.
final class RecentEvents: Sendable {
    private let events = Mutex<[UInt64: LoggedEvent]>([:])
    private let capacity = 10_000

    func add(_ logged: [LoggedEvent]) {
        events.withLock { events in
            for event in logged { events[event.index] = event }
            if events.count > capacity, let newest = logged.last?.index {
                events = events.filter { $0.key + UInt64(capacity / 2) > newest }
            }
        }
    }

    func event(_ index: UInt64) -> LoggedEvent? { events.withLock { $0[index] } }
}

import Synchronization
