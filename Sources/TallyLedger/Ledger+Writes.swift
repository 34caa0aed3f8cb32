import Foundation
import TallyCore
import TallyLog
import TallyStore

/// Local writes: every one is shaped by the entity's `EntitySpec`, checked against the ledger
/// as it stands (`WriteRules`), appended durably and projected — by `LedgerSession.write`.
/// Each answers with the entity as the views show it (`LedgerViews.entityJSON`), so what the
/// CLI prints with `--json` is what `GET /v1/{type}/{id}` returns.
extension Ledger {
    /// Creates an entity from `properties` (defaults filled in) and returns it as JSON.
    ///
    /// With an `idempotencyKey` (and no `id`), the id derives from the actor and the key: a
    /// retry after a timeout names the same entity, finds it created, and gets it back
    /// (`replayed`) instead of a duplicate. A create that names another `id` than the key's
    /// is idempotent by that id: a retry is refused as `alreadyExists` — never answered with an
    /// entity another caller may have made under it.
    public func create(
        _ type: EntityType, id: UUID? = nil, _ properties: PropertyMap, actor: String,
        idempotencyKey: String? = nil
    ) async throws -> (entity: JSONText, replayed: Bool) {
        // An empty key would make every keyless retry of any body "the same request" (found by
        // a hostile run: a second, different create was answered 200 with the first).
        if let idempotencyKey, !(1...255).contains(idempotencyKey.utf8.count) {
            throw ValidationError(field: "Idempotency-Key", "an idempotency key is 1 to 255 bytes; leave the header out for none")
        }
        let keyed = idempotencyKey.map { IdempotencyKey.entityID(actor: actor, key: $0, type: type) }
        let uuid = id ?? keyed ?? .random()
        // Only the id the key derives (for this actor) is replayed: never an entity someone
        // else may have made under an id the body names.
        let replays = keyed != nil && uuid == keyed
        let claim = try claimIdempotentCreate(uuid, key: replays ? idempotencyKey : nil)
        defer { claim?.release() }
        if replays, let idempotencyKey {
            // Only a request that could have made the entity is answered with it: one that
            // lacks what a create needs is refused, as it would have been the first time.
            for field in EntitySpec.of(type).fieldsACreateNames where properties[field.name] == nil || properties[field.name] == .null {
                throw ValidationError(field: field.name.jsonName, "required when creating \(type.withArticle)")
            }
            if let existing = try views.entityJSON(type, id: uuid) {
                try checkRetry(of: type, uuid, sending: properties, key: idempotencyKey)
                return (existing, true)
            }
        }
        try await checkAttachmentsHeld(properties)
        if type == .line { try checkLineRoom(properties) }
        _ = try await session.write(actor: actor, creating(type, uuid, properties, actor: actor))
        if type == .recurring { await materializeNewRule(uuid, writtenBy: actor) }
        return (try written(type, uuid), false)
    }

    /// A new or changed rule's occurrences up to today appear at once. Should that fail, the
    /// next round of the ledger's background work makes them: the rule itself is written.
    /// A member's write makes only that rule's occurrences, as theirs (`occurrenceActor`).
    private func materializeNewRule(_ rule: UUID, writtenBy actor: String) async {
        let occurrencesBy = Self.occurrenceActor(after: actor)
        _ = try? await materializeRecurrences(actor: occurrencesBy, onlyRule: occurrencesBy == Self.recurrenceActor ? nil : rule)
    }

    /// Refuses a retry under an `Idempotency-Key` that sends other values than the create the
    /// key made (`idempotencyKeyReused`): each field the retry names is shaped as a write
    /// stores it and compared with what the create wrote, where nothing has changed it since
    /// (an edit made after the create says nothing about the retry).
    private func checkRetry(of type: EntityType, _ uuid: UUID, sending properties: PropertyMap, key: String) throws {
        let differing: [String] = try views.store.withLookup { lookup in
            guard let entity = try lookup.entity(.uuid(uuid)), let created = entity.created else { return [] }
            let defaults = EntitySpec.of(type).defaults(defaultCurrency: try LedgerSession.defaultCurrency(in: lookup), now: .nowHere)
            let shaped = try EntitySchema.validate(type, .create, defaults.overlaid(with: properties))
            return properties.compactMap { name, _ in
                let stored = entity.properties[name]
                if let stored, stored.stamp != created { return nil }  // changed since the create
                return (stored?.value ?? .null) == (shaped[name] ?? .null) ? nil : name.jsonName
            }
        }
        guard differing.isEmpty else { throw LedgerError.idempotencyKeyReused(key: key, id: uuid.lowercased, fields: differing) }
    }

    /// Marks the entity an `Idempotency-Key` names as being created until `release`, so that
    /// two requests with one key cannot both write it (each would get a 201 and append a
    /// create); the second is refused with `idempotencyKeyInUse` and, retried, replays the
    /// first. Nil without a key.
    private func claimIdempotentCreate(_ uuid: UUID, key: String?) throws -> IdempotentClaim? {
        guard let key else { return nil }
        guard idempotentCreates.withLock({ $0.insert(uuid).inserted }) else { throw LedgerError.idempotencyKeyInUse(key) }
        return IdempotentClaim(ledger: self, uuid: uuid)
    }

    struct IdempotentClaim {
        let ledger: Ledger
        let uuid: UUID
        func release() { _ = ledger.idempotentCreates.withLock { $0.remove(uuid) } }
    }

    /// The draft of a create: the type's defaults, overlaid with `properties`.
    private func creating(_ type: EntityType, _ uuid: UUID, _ properties: PropertyMap, actor: String) -> (any LedgerLookup, String) throws -> EventDraft {
        { _, currency in
            let defaults = EntitySpec.of(type).defaults(defaultCurrency: currency, now: .nowHere)
            return EventDraft(entityType: type, entityID: .uuid(uuid), operation: .create, properties: defaults.overlaid(with: properties), actor: actor)
        }
    }

    /// Sets the given properties of an entity (only those) and returns it as JSON.
    public func update(_ type: EntityType, id: UUID, _ properties: PropertyMap, actor: String) async throws -> JSONText {
        try await checkAttachmentsHeld(properties)
        _ = try await session.write(actor: actor, updating(type, id, properties, actor: actor))
        if type == .recurring { await materializeNewRule(id, writtenBy: actor) }
        return try written(type, id)
    }

    private func updating(_ type: EntityType, _ id: UUID, _ properties: PropertyMap, actor: String) -> (any LedgerLookup, String) throws -> EventDraft {
        { _, _ in EventDraft(entityType: type, entityID: .uuid(id), operation: .update, properties: properties, actor: actor) }
    }

    /// Deletes an entity (its history stays in the log).
    public func delete(_ type: EntityType, id: UUID, actor: String) async throws {
        _ = try await session.write(actor: actor) { _, _ in EventDraft(entityType: type, entityID: .uuid(id), operation: .delete, actor: actor) }
    }

    /// Sets a setting to `json` (any JSON text) with scope local or replicated, and returns it.
    /// The scope is the one the key names (`local.…` is local-only); `isLocal`, if given, must agree.
    public func setSetting(_ key: String, json: String, isLocal requested: Bool? = nil, actor: String) async throws -> JSONText {
        try EntitySchema.validateSettingKey(key)
        let isLocal = requested ?? EntitySchema.isLocalSettingKey(key)
        try EntitySchema.validateSettingScope(key, isLocal: isLocal)
        _ = try await session.write(actor: actor) { state, _ in
            let exists = try state.live(.settingKey(key)) != nil
            return EventDraft(
                entityType: .setting, entityID: .settingKey(key), operation: exists ? .update : .create,
                properties: [.value: .json(json)], actor: actor, isLocalOnly: isLocal)
        }
        guard let setting = try views.setting(key) else { throw LedgerError.notInViews("setting \(key)") }
        return setting
    }

    /// Deletes a setting, whatever its scope (nobody should have to repeat it to delete).
    public func deleteSetting(_ key: String, actor: String) async throws {
        try EntitySchema.validateSettingKey(key)
        _ = try await session.write(actor: actor) { state, _ in
            EventDraft(
                entityType: .setting, entityID: .settingKey(key), operation: .delete, actor: actor,
                isLocalOnly: try state.live(.settingKey(key))?.isLocalOnly ?? false)
        }
    }

    /// The entity just written, as the views show it. A `rebuild-projections` in another
    /// process may have swapped in views that have not taken the write yet (it is durable and
    /// was projected into the ones it replaced): those catch up from the log before the second look.
    /// An entity a delete reached first (a delete checked and appended while this write was
    /// checked: every replica merges the two so that the delete wins) is not found, as it
    /// would have been a moment later.
    func written(_ type: EntityType, _ id: UUID) throws -> JSONText {
        if let entity = try Views.readingForAWrite({ try views.entityJSON(type, id: id) }) { return entity }
        _ = try projector.catchUp()
        if let entity = try views.entityJSON(type, id: id) { return entity }
        if let state = try views.store.withLookup({ try $0.entity(.uuid(id)) }), !state.isLive {
            throw ValidationError(field: "id", "\(type.withArticle) \(id.lowercased) was deleted", kind: .notFound)
        }
        throw LedgerError.notInViews("\(type) \(id.lowercased)")
    }
}
