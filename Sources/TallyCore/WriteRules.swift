/// Rules a local write must satisfy against the current state, beyond the shape checks of
/// `EntitySchema`: the entity must exist (or not yet, for a create), references must point at
/// live categories without cycles, and replicated settings stay within their bounds.
///
/// Remote events are not held to these rules — a reference may name something not yet
/// received — only local writes, where a dangling id is a typo.
public enum WriteRules {
    /// Throws (a `ValidationError`) if `draft` cannot be applied to `state`.
    public static func check(_ draft: EventDraft, against state: some LedgerLookup) throws {
        let existing = try state.entity(draft.entityID)
        switch draft.operation {
        case .create:
            if existing != nil, draft.entityType != .setting { throw ValidationError(field: "id", "\(draft.entityID) already exists", kind: .alreadyExists) }
        case .update, .delete:
            guard let live = try state.live(draft.entityID), live.type == draft.entityType else {
                throw ValidationError(field: "id", "no \(draft.entityType) with id \(draft.entityID)", kind: .notFound)
            }
            if draft.entityType == .setting, live.isLocalOnly != draft.isLocalOnly {
                throw ValidationError(
                    field: "scope", "setting \(draft.entityID) has scope \(live.isLocalOnly ? "local" : "replicated")", kind: .conflictsWithState)
            }
        }
        for name in [PropertyName.categoryId, .parentId] {
            guard case .uuid(let target)? = draft.properties[name] else { continue }
            guard let category = try state.live(.uuid(target)), category.type == .category else {
                throw ValidationError(field: name.jsonName, "no category with id \(target.lowercased)", kind: .conflictsWithState)
            }
        }
        for name in [PropertyName.accountId, .toAccountId] {
            guard case .uuid(let target)? = draft.properties[name] else { continue }
            guard let account = try state.live(.uuid(target)), account.type == .account else {
                throw ValidationError(field: name.jsonName, "no account with id \(target.lowercased)", kind: .conflictsWithState)
            }
        }
        if draft.entityType == .transfer, draft.operation != .delete {
            // Money moves between two different accounts (either may come from the state).
            let current = try state.live(draft.entityID)
            func account(_ name: PropertyName) -> PropertyValue? { draft.properties[name] ?? current?.values[name] }
            if let from = account(.accountId), from == account(.toAccountId) {
                throw ValidationError(field: "toAccountId", "a transfer moves money between two different accounts", kind: .conflictsWithState)
            }
            // Between two currencies, what arrives is not what left: it must be given.
            if case .uuid(let from)? = account(.accountId), case .uuid(let to)? = account(.toAccountId),
                let source = try state.live(.uuid(from))?.values[.currency], let target = try state.live(.uuid(to))?.values[.currency], source != target,
                account(.toAmount) == nil || account(.toAmount) == .null
            {
                throw ValidationError(field: "toAmount", "the two accounts are in different currencies: say what arrives (toAmount)", kind: .conflictsWithState)
            }
        }
        if draft.entityType == .line, draft.operation != .delete {
            // A line is part of a live expense, and stays with it (moving a line is deleting it
            // here and adding it there).
            if draft.operation == .update, draft.properties[.expenseId] != nil {
                throw ValidationError(field: "expenseId", "a line stays with its expense: delete it and add one to the other", kind: .conflictsWithState)
            }
            if case .uuid(let target)? = draft.properties[.expenseId] {
                guard let expense = try state.live(.uuid(target)), expense.type == .expense else {
                    throw ValidationError(field: "expenseId", "no expense with id \(target.lowercased)", kind: .conflictsWithState)
                }
            }
        }
        if draft.entityType == .settlement, draft.operation != .delete {
            let current = try state.live(draft.entityID)
            func person(_ name: PropertyName) -> PropertyValue? { draft.properties[name] ?? current?.values[name] }
            if let from = person(.paidBy), from == person(.paidTo) {
                throw ValidationError(field: "paidTo", "a settlement is paid by one person to another", kind: .conflictsWithState)
            }
        }
        if case .uuid(let parent)? = draft.properties[.parentId] {
            var cursor: EntityID? = .uuid(parent)
            var steps = 0
            while let current = cursor, steps < 10_000 {
                if current == draft.entityID { throw ValidationError(field: "parentId", "a category cannot be its own ancestor", kind: .conflictsWithState) }
                if case .uuid(let next)? = try state.live(current)?.values[.parentId] { cursor = .uuid(next) } else { cursor = nil }
                steps += 1
            }
        }
        if draft.entityType == .budget, draft.operation != .delete {
            // A budget's last month is not before its first (either may come from the state).
            let current = try state.live(draft.entityID)
            func month(_ name: PropertyName) -> String? {
                if let value = draft.properties[name] { if case .string(let text) = value { return text } else { return nil } }
                if case .string(let text)? = current?.values[name] { return text }
                return nil
            }
            if let from = month(.fromMonth), let to = month(.toMonth), to < from {
                throw ValidationError(field: "toMonth", "must not be before fromMonth (\(from))", kind: .conflictsWithState)
            }
        }
        if draft.entityType == .rate, draft.operation != .delete {
            // A rate converts between two different currencies (either may come from the state).
            let current = try state.live(draft.entityID)
            func code(_ name: PropertyName) -> PropertyValue? { draft.properties[name] ?? current?.values[name] }
            if let from = code(.currency), from == code(.toCurrency) {
                throw ValidationError(field: "toCurrency", "a rate converts between two different currencies", kind: .conflictsWithState)
            }
        }
        // A rule's end is not before its start, nor a to-do's (checked when a to-do's dates
        // change: one written before this rule was kept is still ticked off).
        let movesTodoDates = draft.entityType == .todo && (draft.properties[.startDate] != nil || draft.properties[.endDate] != nil)
        if draft.entityType == .recurring || movesTodoDates, draft.operation != .delete {
            let current = try state.live(draft.entityID)
            func date(_ name: PropertyName) -> DateTime? {
                if let value = draft.properties[name] { if case .dateTime(let date) = value { return date } else { return nil } }
                if case .dateTime(let date)? = current?.values[name] { return date }
                return nil
            }
            if let start = date(.startDate), let end = date(.endDate), end.localDayNumber < start.localDayNumber {
                throw ValidationError(field: "endDate", "must not be before startDate", kind: .conflictsWithState)
            }
        }
        if draft.entityType == .setting, !draft.isLocalOnly, draft.operation != .delete {
            try checkSettingBounds(draft, state)
        }
        if draft.entityType == .setting, draft.entityID == .settingKey("defaultCurrency"), draft.operation != .delete,
            case .json(let value)? = draft.properties[.value]
        {
            // Read wherever a write leaves its currency out: a code no write could use was
            // once stored and silently ignored (every such write then took KRW).
            guard Currency.code(fromSettingJSON: value) != nil else {
                throw ValidationError(field: "value", "the default currency is an ISO 4217 code in quotes, such as \"KRW\" or \"USD\"")
            }
        }
    }

    private static func checkSettingBounds(_ draft: EventDraft, _ state: some LedgerLookup) throws {
        var count = 0, bytes = 0
        for entity in try state.liveReplicatedSettings() where entity.id != draft.entityID {
            count += 1
            if case .json(let value)? = entity.values[.value] { bytes += value.utf8.count + entity.id.description.utf8.count }
        }
        if case .json(let value)? = draft.properties[.value] { bytes += value.utf8.count + draft.entityID.description.utf8.count }
        if count + 1 > Limits.maxReplicatedSettings {
            throw ValidationError(
                field: "key", "replicated settings are limited to \(Limits.maxReplicatedSettings) keys; delete one or use --local", kind: .conflictsWithState)
        }
        if bytes > Limits.maxReplicatedSettingsBytes {
            throw ValidationError(
                field: "value", "replicated settings are limited to \(Limits.maxReplicatedSettingsBytes) bytes in total", kind: .conflictsWithState)
        }
    }
}

/// What `WriteRules` needs to look up: the in-memory `LedgerState`, or the projection database.
public protocol LedgerLookup {
    /// The entity's merge state, live or not.
    func entity(_ id: EntityID) throws -> LedgerState.Entity?
    /// Every live setting with scope `replicated`.
    func liveReplicatedSettings() throws -> [LedgerState.Entity]
    /// Which of `ids` this replica ever held (live or not): for bulk paths, which ask about
    /// thousands of ids at once.
    func held(among ids: [EntityID]) throws -> Set<EntityID>
}

extension LedgerLookup {
    /// One `entity` per id (what a lookup that has nothing faster does).
    public func held(among ids: [EntityID]) throws -> Set<EntityID> {
        Set(try ids.filter { try entity($0) != nil })
    }

    /// The entity if it is live.
    public func live(_ id: EntityID) throws -> LedgerState.Entity? {
        guard let entity = try entity(id), entity.isLive else { return nil }
        return entity
    }
}

extension LedgerState: LedgerLookup {
    public func entity(_ id: EntityID) -> LedgerState.Entity? { entities[id] }

    public func liveReplicatedSettings() -> [LedgerState.Entity] {
        entities.values.filter { $0.type == .setting && !$0.isLocalOnly && $0.isLive }
    }
}

/// A lookup that asks `base` about each entity once: a batch of drafts is built and then
/// checked against the same state, so a statement import of 100,000 rows looked every row up
/// twice (is it there? then `WriteRules`) without it. Only for one batch's build and checks,
/// while the state it remembers cannot change.
public final class RememberingLookup: LedgerLookup {
    private let base: any LedgerLookup
    private var known: [EntityID: LedgerState.Entity?] = [:]

    public init(_ base: any LedgerLookup) { self.base = base }

    public func entity(_ id: EntityID) throws -> LedgerState.Entity? {
        if let remembered = known[id] { return remembered }
        let found = try base.entity(id)
        known[id] = .some(found)
        return found
    }

    public func liveReplicatedSettings() throws -> [LedgerState.Entity] { try base.liveReplicatedSettings() }

    /// Asks the base about the ids not known yet, and remembers those it never held.
    public func held(among ids: [EntityID]) throws -> Set<EntityID> {
        var held: Set<EntityID> = []
        var unknown: [EntityID] = []
        for id in ids {
            switch known[id] {
            case .some(.some): held.insert(id)
            case .some(.none): continue
            case .none: unknown.append(id)
            }
        }
        let found = try base.held(among: unknown)
        known.reserveCapacity(known.count + unknown.count - found.count)
        for id in unknown where !found.contains(id) { known[id] = .some(nil) }
        return held.union(found)
    }
}
