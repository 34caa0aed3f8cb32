import Foundation
import TallyCore
import TallyLog
import TallyStore

/// Recurring rules (docs/HOUSEHOLD.md): each live rule's occurrences up to today become
/// ordinary expenses, with ids derived from the rule and the day, so replicas that materialise
/// apart converge to one expense per occurrence. An occurrence this replica ever held (even
/// deleted — a person deleted it) is never created again.
extension Ledger {
    /// Who occurrences are recorded as written by.
    public static let recurrenceActor = "recurrence"

    /// Who a member's writes are recorded as: `member:NAME` (a hosted household's member, or
    /// an app's replica syncing as one).
    public static func memberActor(_ name: String) -> String { memberActorPrefix + name }
    static let memberActorPrefix = "member:"

    /// Creates every occurrence due by `now` (each rule's days in its start's UTC offset) that
    /// this replica never held, in durable batches; returns how many.
    ///
    /// `actor`: who the occurrences are recorded as written by — the ledger's recurrences,
    /// unless a member's write of a rule made them at once (`occurrenceActor(after:)`), which
    /// then makes only that rule's (`onlyRule`: another member's rule is not theirs to write).
    @discardableResult
    public func materializeRecurrences(now: DateTime = .nowHere, actor: String = recurrenceActor, onlyRule: UUID? = nil) async throws -> Int {
        try await blocking { [self] in try materializeRecurrencesNow(now: now, actor: actor, onlyRule: onlyRule) }
    }

    /// Who the occurrences a write of a rule makes at once are by: the member who wrote it
    /// (`member:NAME`), else the ledger's recurrences. A member's device pushes only its
    /// member's own events (`ReplicationRoutes.admit`): occurrences its own rule made under the
    /// ledger's name were refused, and every later push with them — the device never synced again.
    public static func occurrenceActor(after writer: String) -> String { writer.hasPrefix(memberActorPrefix) ? writer : recurrenceActor }

    /// `materializeRecurrences`, on the calling thread.
    private func materializeRecurrencesNow(now: DateTime, actor: String, onlyRule: UUID?) throws -> Int {
        // One at a time (the service's timer and a rule's create may both start one): each
        // decides what is missing and then writes it, and two at once would both write it.
        materializing.lock()  // the ledger's own: one household's long pass holds no other's thread
        defer { materializing.unlock() }
        // Decided against views that show the whole log: a delivery appended but not yet
        // projected may hold an occurrence (maybe edited by a peer's user), which a create
        // made now would overwrite with a newer stamp.
        if try projector.checkpointOnWriter() < writer.head.lastIndex { try projector.catchUp() }
        // Read as a write reads its checks: a hosted ledger reads them on the views' writer
        // when no reader is idle, not on one opened for this (most passes write nothing).
        let rules = try Views.readingForAWrite { try views.recurringRuleEntities() }
        let recorded = RecurrenceProgress.load(from: directory)
        // Each rule's days since the last pass decided them (`RecurrenceProgress`). A rule that
        // cannot be read makes nothing and does not stop the others.
        // One rule's pass leaves the others' records as they were.
        var progress = onlyRule == nil ? RecurrenceProgress() : recorded
        var due: [(rule: LedgerState.Entity, id: UUID, days: [(number: Int, date: DateTime)])] = []
        for rule in rules {
            guard case .uuid(let ruleID) = rule.id, onlyRule.map({ $0 == ruleID }) ?? true, let schedule = try? RecurringRule(rule) else { continue }
            let version = RecurrenceProgress.version(of: rule)
            let decided = recorded.decidedThrough(ruleID, version: version, today: schedule.today(now))
            progress.rules[ruleID.lowercased] = .init(version: version, decidedThrough: schedule.today(now))
            let days = schedule.dueDays(now: now, after: decided)
            if !days.isEmpty { due.append((rule, ruleID, days)) }
        }
        // Which of those occurrences were never held, checked against the views a few hundred
        // ids per query; one whose occurrence would not be a valid expense (a peer's rule
        // missing its amount) makes nothing. Decided against the lookup that checks the writes,
        // and written in bulk (`writeAll`: one durable append, the views caught up with each
        // entity written once). With no day due — no rule, or every day decided already, as
        // at most opens of a hosted ledger — no lookup is opened (it may open a connection to
        // the views, parsing their schema).
        let total =
            due.isEmpty
            ? 0
            : try session.writeAll(actor: actor) { lookup in
                var drafts: [EventDraft] = []
                for (rule, ruleID, days) in due {
                    let ids = days.map { EntityID.uuid(OccurrenceID.of(rule: ruleID, day: $0.number)) }
                    let held = try lookup.held(among: ids)
                    // The occurrences differ only in their dates, which are valid by
                    // construction: the template is checked once, with the first.
                    var template = try occurrenceTemplate(of: rule, lookup: lookup)
                    template[.date] = .dateTime(days[0].date)
                    guard let valid = try? EntitySchema.validate(.expense, .create, template) else { continue }
                    for (day, id) in zip(days, ids) where !held.contains(id) {
                        var properties = valid
                        properties[.date] = .dateTime(day.date)
                        drafts.append(
                            EventDraft(entityType: .expense, entityID: id, operation: .create, properties: properties, actor: actor))
                    }
                }
                return drafts
            }
        // Only once every occurrence decided is durable (a crash before leaves the old record).
        if progress != recorded { try progress.save(in: directory) }
        return total
    }

    /// Skips a rule's occurrence on `day` (`YYYY-MM-DD`): the rule remembers the day (to show
    /// it), and the occurrence's id gets a delete — of the occurrence already made, or a
    /// tombstone if none was — so no replica ever has it, even one that made it apart or whose
    /// own skip of another day won the rule's `skippedDates`.
    public func skipOccurrence(rule id: UUID, day: String, actor: String) async throws -> JSONText {
        guard let number = Recurrence.day(day) else { throw ValidationError(field: "date", "must be a day, YYYY-MM-DD") }
        guard let rule = try views.recurringRuleEntities().first(where: { $0.id == .uuid(id) }) else {
            throw ValidationError(field: "id", "no recurring rule with id \(id.lowercased)", kind: .notFound)
        }
        // A day before the rule starts has no occurrence to skip (a rule a peer wrote without a
        // readable schedule takes any day: its occurrences are not made here either way).
        if let schedule = try? RecurringRule(rule), number < schedule.start.localDayNumber {
            throw ValidationError(field: "date", "\(day) is before the rule starts; it has no occurrence to skip")
        }
        var skipped: Set<String> = []
        if case .strings(let days)? = rule.value(.skippedDates) { skipped = Set(days) }
        skipped.insert(day)
        _ = try await update(.recurring, id: id, [.skippedDates: .strings(skipped.sorted())], actor: actor)
        let occurrence = OccurrenceID.of(rule: id, day: number)
        try await blocking { [session] in try session.writeTombstone(.expense, id: .uuid(occurrence), actor: actor) }
        return try written(.recurring, id)
    }

    /// An occurrence's properties but its date: the rule's template, labelled with the cadence.
    private func occurrenceTemplate(of rule: LedgerState.Entity, lookup: any LedgerLookup) throws -> PropertyMap {
        var properties: PropertyMap = [:]
        for name in [PropertyName.kind, .amount, .currency, .payee, .payment, .memo, .tags] {
            if let value = rule.value(name), value != .null { properties[name] = value }
        }
        // A category deleted since the rule was written: the occurrence has none.
        if case .uuid(let category)? = rule.value(.categoryId), try lookup.live(.uuid(category))?.type == .category {
            properties[.categoryId] = .uuid(category)
        }
        if case .string(let cadence)? = rule.value(.cadence) { properties[.repeat] = .string(cadence) }
        return properties
    }
}

/// One rule's schedule, read from its merged state.
public struct RecurringRule: Sendable {
    public let entity: LedgerState.Entity
    let start: DateTime
    let cadence: String, monthEnd: String
    let end: DateTime?, count: Int?
    let skipped: Set<String>
    /// The day the schedule was last changed after the rule was created (nil if never): the
    /// days up to it were decided by the schedule as it was, so a changed schedule makes only
    /// later days — it never back-fills the past. Taken from the write's stamp, so every
    /// replica decides alike.
    let scheduleChangedDay: Int?

    /// The fields that decide which days have occurrences.
    static let scheduleFields: [PropertyName] = [.cadence, .startDate, .endDate, .count, .monthEnd]

    public init(_ entity: LedgerState.Entity) throws {
        guard case .dateTime(let start)? = entity.value(.startDate), case .string(let cadence)? = entity.value(.cadence),
            entity.value(.kind) != nil, entity.value(.amount) != nil, entity.value(.currency) != nil
        else {
            throw LedgerError.notInViews("recurring rule \(entity.id) lacks its start, cadence, kind, amount or currency")
        }
        let stamps = entity.stamps
        if let changed = Self.scheduleFields.compactMap({ stamps[$0] }).max(), changed != entity.created {
            let millis = Int64(clamping: changed.timestamp.millis)
            scheduleChangedDay = DateTime(epochMillis: millis, offsetMinutes: start.offsetMinutes).localDayNumber
        } else {
            scheduleChangedDay = nil
        }
        self.entity = entity
        (self.start, self.cadence) = (start, cadence)
        if case .string(let monthEnd)? = entity.value(.monthEnd) { self.monthEnd = monthEnd } else { monthEnd = "clamp" }
        if case .dateTime(let end)? = entity.value(.endDate) { self.end = end } else { end = nil }
        if case .int(let count)? = entity.value(.count) { self.count = Int(count) } else { count = nil }
        if case .strings(let days)? = entity.value(.skippedDates) { skipped = Set(days) } else { skipped = [] }
    }

    /// Today in the rule's own UTC offset (the offset of its start).
    func today(_ now: DateTime) -> Int { DateTime(epochMillis: now.epochMillis, offsetMinutes: start.offsetMinutes).localDayNumber }

    /// The occurrence of `day`: the start's time of day and offset, on that day.
    func date(of day: Int) -> DateTime {
        let local = start.epochMillis + Int64(start.offsetMinutes) * 60_000
        let timeOfDay = local - Int64(start.localDayNumber) * 86_400_000
        return DateTime(epochMillis: Int64(day) * 86_400_000 + timeOfDay - Int64(start.offsetMinutes) * 60_000, offsetMinutes: start.offsetMinutes)
    }

    /// How far back occurrences are made: a rule started longer ago makes only the last
    /// twenty years' (a bound on what one rule — maybe a peer's — can make a replica write).
    public static let windowDays = 366 * 20

    /// The days of the occurrences due by `now` within the window, skipped days left out —
    /// only those after `decided`, if given (the days a pass decided already).
    public func dueDays(now: DateTime, after decided: Int? = nil) -> [(number: Int, date: DateTime)] {
        let today = today(now)
        let from = max(today - Self.windowDays, scheduleChangedDay.map { $0 + 1 } ?? Int.min, decided.map { $0 + 1 } ?? Int.min)
        return Recurrence.days(
            start: start.localDayNumber, cadence: cadence, monthEnd: monthEnd, end: end?.localDayNumber, count: count,
            through: today, from: from
        )
        .filter { skipped.isEmpty || !skipped.contains(Recurrence.dayText($0)) }.map { ($0, date(of: $0)) }
    }

    /// The next `limit` occurrence days after today (skipped ones left out), `YYYY-MM-DD`.
    public func next(now: DateTime, limit: Int = 3) -> [String] {
        let today = today(now)
        return Recurrence.days(
            start: start.localDayNumber, cadence: cadence, monthEnd: monthEnd, end: end?.localDayNumber, count: count,
            through: today + 366 * 5, from: today + 1, limit: limit + skipped.count
        )
        .map(Recurrence.dayText).filter { !skipped.contains($0) }.prefix(limit).map { $0 }
    }
}

/// The id of a rule's occurrence on a day: a name-based UUID (version 5 layout, SHA-256) of
/// the rule's id and the day, the same on every replica.
public enum OccurrenceID {
    public static func of(rule: UUID, day: Int) -> UUID {
        NameBasedUUID.of("tally-occurrence\u{0}\(rule.lowercased)\u{0}\(Recurrence.dayText(day))")
    }
}
