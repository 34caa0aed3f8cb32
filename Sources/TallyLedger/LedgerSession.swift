import Foundation
import TallyCore
import TallyLog
import TallyStore

/// The write path shared by the CLI and the server: check a draft (shape, then against the
/// current views), append it durably, project it. Bad input throws before anything is appended.
struct LedgerSession: Sendable {
    /// The replica's writer (its holder owns the writer lock).
    let writer: LogWriter
    /// The replica's views.
    let projector: Projector
    /// What writes are checked against.
    let views: Views
    /// Concurrent writes project in one transaction, as they append with one `fdatasync`.
    let projection: ProjectionGroupCommit
    /// Concurrent single writes (`write`) appended and projected together, each writer woken once.
    let batcher: WriteBatcher<EventDraft, LoggedEvent>

    /// A session over an open writer and views.
    init(writer: LogWriter, projector: Projector) {
        self.writer = writer
        self.projector = projector
        views = Views(projector)
        let projection = ProjectionGroupCommit(projector: projector)
        self.projection = projection
        batcher = WriteBatcher(append: { try writer.appendLogged($0) }, project: { try projection.project($0) })
    }

    /// Appends the draft `build` returns (given the current state and the default currency)
    /// as `actor`, and gives back the event. Throws before anything is appended when the draft
    /// is refused; throws `LedgerError.viewsBehind` when the event is durable but could not be
    /// projected (a full disk under the views): the write stands, and the views catch up later.
    ///
    /// The checks read the views without a transaction around them (`Projector.readDirectly`: each
    /// SELECT sees the views as they are when it runs). A snapshot would buy nothing: the views
    /// may move between the checks and the append either way, which is why every rule that
    /// matters across replicas is also kept by the merge.
    ///
    /// The checks read the views on the caller's thread, as a GET does — in views that keep few
    /// connections, maybe on their writer, never behind a catch-up there
    /// (`CurrentViews.readingForAWrite`); the append and projection are awaited, not blocked on.
    func write(actor: String, _ build: (any LedgerLookup, _ defaultCurrency: String) throws -> EventDraft) async throws -> Event {
        try Self.event(try await batcher.write(try checkedDraft(actor: actor, build)))
    }

    /// The draft `build` returns, shaped and checked against the views, with its basis.
    private func checkedDraft(actor: String, _ build: (any LedgerLookup, _ defaultCurrency: String) throws -> EventDraft) throws -> EventDraft {
        try views.withLookupDirectly { lookup in
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
    }

    /// The event a batched write appended; `viewsBehind` if it is durable but not projected.
    private static func event(_ outcome: WriteBatcher<EventDraft, LoggedEvent>.Outcome) throws -> Event {
        if let error = outcome.projectionError {
            throw LedgerError.viewsBehind(id: outcome.written.event.entityID.description, cause: "\(error)")
        }
        return outcome.written.event
    }

    /// From this many drafts on, `writeAll` takes the bulk path: `appendBulk` (frames compressed
    /// on a second core, no events handed back), then the views brought up to it from the log,
    /// each entity written once (`Projector.catchUpInBulk`).
    static let bulkFrom = 1_000

    /// Appends the drafts `build` returns, all checked first (any refused: nothing appended),
    /// as one durable batch, then projects them; returns how many were appended.
    func writeAll(actor: String, _ build: (any LedgerLookup) throws -> [EventDraft]) throws -> Int {
        let drafts = try views.withLookup { current in
            let lookup = RememberingLookup(current)  // built, then checked, against the same state
            let built = try build(lookup)
            // A draft's own validation needs nothing else: on every core (an import has 100,000
            // drafts), its outcome taken in order below, so the first bad draft is still the one named.
            let validated = InParallel.map(built, minimumPerThread: 2_000) { draft in
                Result { try EntitySchema.validate(draft.entityType, draft.operation, draft.properties) }
            }
            return try zip(built, validated).map { draft, properties in
                var draft = draft
                draft.actor = actor
                draft.properties = try properties.get()
                try WriteRules.check(draft, against: lookup)
                // What an update overwrites, as `checkedDraft` records it: a later edit, not a conflict.
                if draft.operation == .update, let current = try lookup.entity(draft.entityID) {
                    draft.basis = current.stamps.filter { draft.properties[$0.key] != nil }
                }
                return draft
            }
        }
        guard !drafts.isEmpty else { return 0 }
        try EntitySchema.validateActor(actor)
        if drafts.count >= Self.bulkFrom {
            let receipt = try writer.appendBulk(drafts)
            do { try projection.catchUp(afterBulkThrough: receipt.lastIndex) } catch {
                throw LedgerError.viewsBehind(id: drafts.last?.entityID.description ?? "", cause: "\(error)")
            }
            return receipt.count
        }
        let logged = try writer.appendLogged(drafts)
        try project(logged)
        return logged.count
    }

    /// Deletes an entity whether or not it was ever created — a tombstone, so that it never can
    /// be (a delete wins over every create, in any order, on every replica). For a skipped
    /// recurring occurrence, whose id every replica derives alike. Refused for an entity of
    /// another type.
    func writeTombstone(_ type: EntityType, id: EntityID, actor: String) throws {
        try EntitySchema.validateActor(actor)
        let draft = EventDraft(entityType: type, entityID: id, operation: .delete, actor: actor)
        try views.withLookup { lookup in
            if let existing = try lookup.entity(id), existing.type != type {
                throw ValidationError(field: "id", "\(id) is \(existing.type.withArticle)", kind: .conflictsWithState)
            }
        }
        try project(try writer.appendLogged([draft]))
    }

    /// Projects events just appended. They are durable: whatever happens to the views now, they
    /// were written (the next catch-up applies them from the log), and the caller must be told
    /// so, not "failed".
    private func project(_ logged: [LoggedEvent]) throws {
        do { try projection.project(logged) } catch {
            throw LedgerError.viewsBehind(id: logged.first?.event.entityID.description ?? "", cause: "\(error)")
        }
    }

    /// The `defaultCurrency` replicated setting if it holds a valid code, else KRW.
    static func defaultCurrency(in lookup: some LedgerLookup) throws -> String {
        guard case .json(let text)? = try lookup.live(.settingKey("defaultCurrency"))?.values[.value] else { return Currency.fallbackDefault }
        return Currency.code(fromSettingJSON: text) ?? Currency.fallbackDefault
    }
}
