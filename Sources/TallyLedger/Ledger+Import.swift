import Crypto
import Foundation
import Synchronization
import TallyCore
import TallyStore

/// What importing a statement did (or, in a dry run, would do).
public struct ImportReport: Sendable {
    /// The import's record (nil when nothing was created, or in a dry run).
    public var importID: UUID?
    /// Rows that became expenses (or would), with the id each got.
    public var created: [(row: StatementRow, id: UUID)]
    /// Rows whose transaction the ledger already has (imported before, from this file or an
    /// overlapping one — even if deleted since: a person deleted it).
    public var duplicates: [(row: StatementRow, id: UUID)]
    /// Blank and total rows.
    public var skipped: [StatementNote]
    /// Rows that could not be read (only with `skipBadRows`; otherwise the import is refused).
    public var bad: [StatementNote]
    /// The layout each sheet was read with.
    public var layouts: [(sheet: String, layout: String)]
    /// How the text was decoded (CSV: a `StatementEncoding`'s name).
    public var encoding: String?
    public var dryRun: Bool
}

extension ImportReport {
    /// The report as `tally import … --json` and `POST /v1/imports` give it.
    public var json: JSONText {
        func row(_ item: (row: StatementRow, id: UUID)) -> JSONText {
            .object([
                ("id", .string(item.id.lowercased)), ("sheet", .string(item.row.sheet)), ("row", .int(Int64(item.row.row))),
                ("date", .string(item.row.date.description)), ("kind", .string(item.row.kind)), ("amount", .int(item.row.amount)),
                ("currency", .string(item.row.currency)), ("payee", item.row.payee.map(JSONText.string) ?? .null), ("refund", .bool(item.row.isRefund)),
            ])
        }
        return .object([
            ("dryRun", .bool(dryRun)), ("importId", importID.map { .string($0.lowercased) } ?? .null),
            ("encoding", encoding.map { .string($0) } ?? .null),
            ("layouts", .array(layouts.map { .object([("sheet", .string($0.sheet)), ("layout", .string($0.layout))]) })),
            ("created", .array(created.map(row))), ("duplicates", .array(duplicates.map(row))),
            ("skipped", .array(skipped.map(\.json))), ("bad", .array(bad.map(\.json))),
        ])
    }
}

extension StatementNote {
    /// `{sheet, row, reason}`.
    public var json: JSONText { .object([("sheet", .string(sheet)), ("row", .int(Int64(row))), ("reason", .string(reason))]) }
}

/// A statement with rows that cannot be read, refused whole.
public struct StatementRefused: Error, Sendable {
    public var bad: [StatementNote]
}

/// One of a ledger's import slots, held while the `withImportSlot` call that made it runs: kept
/// past that call, or shown to another ledger, it holds nothing (`importFile` then takes a slot
/// of its own).
public struct ImportSlot: Sendable {
    fileprivate let hold: Hold

    fileprivate final class Hold: Sendable {
        let ledger: ObjectIdentifier
        let released = Atomic<Bool>(false)
        init(_ ledger: Ledger) { self.ledger = ObjectIdentifier(ledger) }
    }

    /// Whether `ledger` holds this slot now.
    fileprivate func isHeld(by ledger: Ledger) -> Bool { hold.ledger == ObjectIdentifier(ledger) && !hold.released.load(ordering: .acquiring) }
}

/// Statement imports (docs/IMPORT.md): each row an expense whose id is derived from the row's
/// import key, so a row imported twice — again, from an overlapping statement, or on another
/// replica while apart — is one expense; all of a file's new rows and the import's record are
/// appended as one durable batch.
extension Ledger {
    /// Who wrote a row's id: a name-based UUID of its import key.
    static func expenseID(importKey: String) -> UUID { NameBasedUUID.of("tally-import\u{0}" + importKey) }

    /// The import key as stored on the expense: its SHA-256, hex (a key holds the row's text).
    static func storedKey(_ importKey: String) -> String { Hex.lowercase(SHA256.hash(data: Data(importKey.utf8))) }

    /// Imports `statement` (read from the file named `fileName`, of `format`, whose bytes have
    /// SHA-256 `digest`) as `actor`. Refused whole (`StatementRefused`, nothing written) if a
    /// row cannot be read, unless `skipBadRows`; a dry run writes nothing and reports the same.
    public func importStatement(
        _ statement: StatementContents, fileName: String, format: String, digest: String, dryRun: Bool,
        skipBadRows: Bool, actor: String
    ) async throws -> ImportReport {
        try Self.checkBeforeImport(statement, dryRun: dryRun, skipBadRows: skipBadRows)
        let rules = try await ruleChoices(for: statement.rows)
        return try await blocking { [self] in
            try importNow(statement, rules: rules, fileName: fileName, format: format, digest: digest, dryRun: dryRun, skipBadRows: skipBadRows, actor: actor)
        }
    }

    /// What refuses a statement before anything is matched or written: a row that cannot be
    /// read (unless `skipBadRows`), more rows than one import makes (a dry run only reports).
    private static func checkBeforeImport(_ statement: StatementContents, dryRun: Bool, skipBadRows: Bool) throws {
        if !statement.bad.isEmpty, !skipBadRows, !dryRun { throw StatementRefused(bad: statement.bad) }
        guard dryRun || statement.rows.count <= Limits.maxImportRows else {
            throw ValidationError(field: "file", "at most \(Limits.maxImportRows) rows in one import")
        }
    }

    /// `importStatement`, on the calling thread, with the rule each new row gets (`rules`), once
    /// `checkBeforeImport` has passed.
    private func importNow(
        _ statement: StatementContents, rules: RuleChoices, fileName: String, format: String, digest: String, dryRun: Bool,
        skipBadRows: Bool, actor: String
    ) throws -> ImportReport {
        let name = String(
            fileName.unicodeScalars.filter { !$0.properties.isWhitespace || $0 == " " }.map(Character.init)
                .filter { !$0.unicodeScalars.contains { $0.properties.generalCategory == .control } }.prefix(Limits.maxNameLength))
        let recordID = NameBasedUUID.of("tally-import-record\u{0}" + digest)
        var report = ImportReport(
            importID: nil, created: [], duplicates: [], skipped: statement.skipped, bad: statement.bad,
            layouts: statement.layouts, encoding: statement.encoding, dryRun: dryRun)
        // The checks and the rules' matching come before the categories are written: a
        // refused import writes nothing.
        let categories = try categoryIDs(for: statement.rows, dryRun: dryRun, actor: actor)
        let workbook = Set(statement.rows.map(\.sheet)).count > 1 || statement.rows.contains { !$0.sheet.isEmpty }
        /// The creates of the rows the ledger does not have yet (and the record), sorting every
        /// row into `report.created` or `report.duplicates` on the way.
        func draftsForNewRows(_ lookup: any LedgerLookup) throws -> [EventDraft] {
            report.created = []
            report.duplicates = []
            var made: Set<UUID> = []
            // Two SHA-256 a row: on every core.
            let keyed = InParallel.map(statement.rows) { row in (id: Self.expenseID(importKey: row.importKey), storedKey: Self.storedKey(row.importKey)) }
            let held = try lookup.held(among: keyed.map { .uuid($0.id) })  // a few hundred rows per query
            var new: [(row: StatementRow, rule: CategorisationRule?, id: UUID, storedKey: String)] = []
            for (number, (row, (id, storedKey))) in zip(statement.rows, keyed).enumerated() {
                // A Tally export's id column names the expense itself: imported into its own ledger, it is there.
                let exported = row.reference.flatMap(UUID.init(uuidString:)).map { EntityID.uuid($0) }
                if try made.contains(id) || held.contains(.uuid(id)) || exported.map({ try lookup.entity($0)?.type == .expense }) == true {
                    report.duplicates.append((row, id))
                    continue
                }
                report.created.append((row, id))
                made.insert(id)
                new.append((row, rules.rule(ofRow: number), id, storedKey))
            }
            // A rule's category counts only if it is still there: asked once per rule.
            let ruleCategories = Set(try rules.namedCategories.filter { try lookup.live(.uuid($0))?.type == .category })
            let accountID = statement.accountId
            var drafts = InParallel.map(new) { new in
                let row = new.row
                var properties: PropertyMap = [
                    .kind: .string(row.kind), .amount: .int(row.amount), .currency: .string(row.currency), .date: .dateTime(row.date),
                    .repeat: .string("none"), .importKey: .string(new.storedKey), .importId: .uuid(recordID),
                ]
                if let payee = row.payee { properties[.payee] = .string(payee) }
                if let memo = row.memo { properties[.memo] = .string(memo) }
                if let accountID { properties[.accountId] = .uuid(accountID) }
                if let payment = row.payment {
                    properties[.payment] = .string(payment)
                } else if workbook, !row.sheet.isEmpty {
                    properties[.payment] = .string(String(row.sheet.prefix(Limits.maxShortTextLength)))
                }
                // A rule fills in what the statement does not say: a category (if it is still
                // there) and tags, from the payee or memo.
                let rule = new.rule
                let tags = Array(Set(row.tags + (row.isRefund ? ["refund"] : []) + (rule?.tags ?? []))).sorted().prefix(Limits.maxTags)
                if !tags.isEmpty { properties[.tags] = .strings(Array(tags)) }
                if let path = row.categoryPath, let category = categories[path] {
                    properties[.categoryId] = .uuid(category)
                } else if let category = rule?.categoryId, ruleCategories.contains(category) {
                    properties[.categoryId] = .uuid(category)
                }
                return EventDraft(entityType: .expense, entityID: .uuid(new.id), operation: .create, properties: properties, actor: actor)
            }
            // The record last: a batch cut short by a crash has no record, and the same import
            // run again makes the rest (the ids are the same) and then the record.
            if !drafts.isEmpty, try lookup.entity(.uuid(recordID)) == nil {
                drafts.append(
                    EventDraft(
                        entityType: .importBatch, entityID: .uuid(recordID), operation: .create,
                        properties: [
                            .name: .string(name.isEmpty ? "statement" : name), .digest: .string(digest), .format: .string(format),
                            .count: .int(Int64(drafts.count)),
                        ], actor: actor))
            }
            return drafts
        }
        if dryRun {
            _ = try views.store.withLookup { try draftsForNewRows($0) }
            return report
        }
        let written = try session.writeAll(actor: actor) { try draftsForNewRows($0) }
        if written > 0 { report.importID = recordID }
        return report
    }

    /// The category each row's path names: an existing one, matched by name from the top level
    /// down, else a new one (its id derived from the path, so an import run again, or on
    /// another replica, makes the same one). New categories are written before the rows, a
    /// batch per level (an expense or a sub-category may only name a category that exists); a
    /// dry run only finds them.
    func categoryIDs(for rows: [StatementRow], dryRun: Bool, actor: String) throws -> [[String]: UUID] {
        let paths = Set(rows.compactMap(\.categoryPath))
        guard !paths.isEmpty else { return [:] }
        // The first category in the tree's order of each name under each parent, found by a
        // lookup (a ledger may hold 100,000 categories and a statement as many paths).
        struct Place: Hashable {
            var name: String
            var parentID: String?
        }
        var existing: [Place: UUID] = [:]
        for category in try views.categoryTree().map(\.category) {
            let place = Place(name: category.name, parentID: category.parentId)
            if existing[place] == nil, let uuid = UUID(uuidString: category.id) { existing[place] = uuid }
        }
        var ids: [[String]: UUID] = [:]
        var drafts: [(depth: Int, draft: EventDraft)] = []
        func id(of path: [String], kind: String) -> UUID? {
            guard let name = path.last else { return nil }
            if let known = ids[path] { return known }
            let parent = path.count > 1 ? id(of: Array(path.dropLast()), kind: kind) : nil
            if let uuid = existing[Place(name: name, parentID: parent?.lowercased)] {
                ids[path] = uuid
                return uuid
            }
            let made = NameBasedUUID.of("tally-import-category\u{0}" + path.joined(separator: "\u{0}"))
            var properties: PropertyMap = [.name: .string(name), .kind: .string(kind)]
            if let parent { properties[.parentId] = .uuid(parent) }
            drafts.append((path.count, EventDraft(entityType: .category, entityID: .uuid(made), operation: .create, properties: properties, actor: actor)))
            ids[path] = made
            return made
        }
        for row in rows { if let path = row.categoryPath { _ = id(of: path, kind: row.kind) } }
        // Level by level: a sub-category may only name a parent that exists.
        for depth in Set(drafts.map(\.depth)).sorted() where !dryRun {
            let level = drafts.filter { $0.depth == depth }.map(\.draft)
            _ = try session.writeAll(actor: actor) { lookup in try level.filter { try lookup.entity($0.entityID) == nil } }
        }
        return ids
    }

    /// Imports a statement file: `read` turns its bytes into rows (the front end chooses the
    /// format's reader, e.g. `StatementReader.file`), then `importStatement`. The file's SHA-256
    /// names its import record.
    ///
    /// At most `maxImportsAtOnce` run at once on a ledger (reading a file holds the cores for a
    /// moment: its rows are read and keyed on every core, 100,000 in ~0.4 s here); one
    /// more is refused with `LedgerError.tooManyImports`, not queued.
    ///
    /// `holding`: a slot the caller took already (`withImportSlot`) to read the file in.
    public func importFile(
        _ bytes: [UInt8], fileName: String, format: String, dryRun: Bool, skipBadRows: Bool, actor: String, holding slot: ImportSlot? = nil,
        read: @escaping @Sendable ([UInt8]) throws -> StatementContents
    ) async throws -> ImportReport {
        guard slot?.isHeld(by: self) == true else {
            return try await withImportSlot { slot in
                try await importFile(
                    bytes, fileName: fileName, format: format, dryRun: dryRun, skipBadRows: skipBadRows, actor: actor, holding: slot, read: read)
            }
        }
        let (statement, digest) = try await blocking { (try read(bytes), Hex.lowercase(SHA256.hash(data: bytes))) }
        try Self.checkBeforeImport(statement, dryRun: dryRun, skipBadRows: skipBadRows)
        let rules = try await ruleChoices(for: statement.rows)
        return try await blocking { [self] in
            try importNow(statement, rules: rules, fileName: fileName, format: format, digest: digest, dryRun: dryRun, skipBadRows: skipBadRows, actor: actor)
        }
    }

    /// Runs `body` holding one of the ledger's `maxImportsAtOnce` import slots, refused at once
    /// (`LedgerError.tooManyImports`) when none is free. The service takes its slot before it
    /// reads an uploaded file: files wait in memory only as many as there are slots, not one
    /// per connection (eight slow 60 MiB uploads once held 500 MB before the third was refused).
    public func withImportSlot<Result>(_ body: (ImportSlot) async throws -> Result) async throws -> Result {
        let admitted = importsUnderWay.withLock { count in
            guard count < Self.maxImportsAtOnce else { return false }
            count += 1
            return true
        }
        guard admitted else { throw LedgerError.tooManyImports(limit: Self.maxImportsAtOnce) }
        let slot = ImportSlot(hold: .init(self))
        defer {
            slot.hold.released.store(true, ordering: .releasing)
            importsUnderWay.withLock { $0 -= 1 }
        }
        return try await body(slot)
    }

    /// The ledger's default currency (the `defaultCurrency` setting, else KRW).
    public func defaultCurrency() throws -> String {
        try views.store.withLookup { try LedgerSession.defaultCurrency(in: $0) }
    }

    /// An import's record as JSON: its id, file name, format, digest and how many expenses it made.
    public static func importJSON(_ entity: LedgerState.Entity) -> JSONText {
        let fields = EntitySpec.importBatch.fieldsJSON(of: entity).map { key, value in (key == "name" ? "fileName" : key, value) }
        return .object([("id", .string(entity.id.description))] + fields)
    }
}
