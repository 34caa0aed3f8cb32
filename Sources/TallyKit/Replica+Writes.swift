import Foundation
import TallyCore
import TallyLedger
import TallyStore

/// Writes, typed: each goes through `Ledger` — the field specs, the write rules and the signed
/// log — as a write through the service does, and is durable when it returns.
extension Replica {
    /// Creates an entity from typed fields (defaults for the rest) and returns its id. With an
    /// `idempotencyKey`, a retry of the same create (after the app was killed before it heard
    /// back) finds the first one instead of writing a second.
    @discardableResult
    public func create(_ fields: some EntityFields, id: UUID? = nil, idempotencyKey: String? = nil) async throws -> UUID {
        let type = type(of: fields).entityType
        let properties = try fields.properties()
        let actor = actor
        let uuid = id ?? idempotencyKey.map { IdempotencyKey.entityID(actor: actor, key: $0, type: type) } ?? UUID()
        _ = try await writing { ledger in
            try await ledger.create(type, id: uuid, properties, actor: actor, idempotencyKey: idempotencyKey)
        }
        return uuid
    }

    /// Sets the fields given (only those) of an existing entity.
    public func update(_ id: UUID, _ fields: some EntityFields) async throws {
        let type = type(of: fields).entityType
        let properties = try fields.properties()
        let actor = actor
        _ = try await writing { ledger in try await ledger.update(type, id: id, properties, actor: actor) }
    }

    /// Deletes an entity of `type` (its history stays in the log).
    public func delete(_ type: EntityType, id: UUID) async throws {
        let actor = actor
        try await writing { ledger in try await ledger.delete(type, id: id, actor: actor) }
    }

    /// Sets a setting to a JSON value (`"\"KRW\""`, `"3"`, `"{\"theme\":\"dark\"}"`). A key that
    /// starts with `local.` stays on this replica; any other is replicated.
    public func setSetting(_ key: String, json: String) async throws {
        let actor = actor
        _ = try await writing { ledger in try await ledger.setSetting(key, json: json, actor: actor) }
    }

    /// Deletes a setting.
    public func deleteSetting(_ key: String) async throws {
        let actor = actor
        try await writing { ledger in try await ledger.deleteSetting(key, actor: actor) }
    }

    /// Splits an expense into lines of several categories (issue 34), written whole: they must
    /// add up to its amount; none: not split. A line given with an existing line's id (or
    /// without one, of the same category and memo) keeps that line.
    public func setLines(of expense: UUID, _ lines: [Ledger.SplitLine]) async throws {
        let actor = actor
        _ = try await writing { ledger in try await ledger.setLines(of: expense, lines, actor: actor) }
    }
}
