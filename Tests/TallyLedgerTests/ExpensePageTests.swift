import Foundation
import Testing
import TallyCore
@testable import TallyLedger
import TallyLog
import TallyTestSupport

/// Expenses are written as JSON straight from SQLite's rows (`ViewRecordJSON`, by the columns
/// `ViewTable` derives from the spec): every item of every page must be the expense's merged
/// state rendered by its spec (`EntitySpec.fieldsJSON`) — key by key, in order — with what the
/// views add: the category's names after it, `missingAttachments` after the attachments.
@Suite struct ExpensePageTests {
    /// The expense `entity` as its spec renders it, with the views' additions.
    static func expected(_ entity: LedgerState.Entity, categoryNames: [UUID: (name: String, parent: String?)], held: Set<String>) -> JSONText {
        var fields: [(String, JSONText)] = [("id", .string(entity.id.description))]
        for (key, value) in EntitySpec.expense.fieldsJSON(of: entity) {
            fields.append((key, value))
            if key == "categoryId" {
                let names = entity.value(.categoryId).flatMap { if case .uuid(let id) = $0 { categoryNames[id] } else { nil } }
                fields.append(("categoryName", names.map { .string($0.name) } ?? .null))
                fields.append(("parentCategoryName", names?.parent.map(JSONText.string) ?? .null))
            }
            if key == "attachments", case .array(let digests) = value {
                fields.append(("missingAttachments", .array(digests.filter { if case .string(let digest) = $0 { !held.contains(digest) } else { true } })))
            }
        }
        return .object(fields)
    }

    @Test func pagesWrittenFromRowsAreTheSpecsRenderingOfEachExpense() throws {
        let folder = TemporaryDirectory()
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file("data"), name: "pages"))
        defer { ledger.close() }
        var rng = SplitMix64(seed: 20)
        let texts = ["", "점심 김밥", "a\"quote\"", "back\\slash", "line\nbreak\ttab", "\u{01}control", "☕️ café", "/slash", "  spaced  "]
        let parent = UUID(), child = UUID(), lone = UUID()
        var drafts: [EventDraft] = [
            EventDraft(
                entityType: .category, entityID: .uuid(parent), operation: .create, properties: [.name: .string("식비 \"food\""), .kind: .string("expense")],
                actor: "cli:test"),
            EventDraft(
                entityType: .category, entityID: .uuid(child), operation: .create,
                properties: [.name: .string("커피"), .kind: .string("expense"), .parentId: .uuid(parent)], actor: "cli:test"),
            EventDraft(
                entityType: .category, entityID: .uuid(lone), operation: .create, properties: [.name: .string("lone"), .kind: .string("expense")],
                actor: "cli:test"),
        ]
        let held = try BlobStore(directory: ledger.directory).store(Data("receipt".utf8)).digest
        let missing = String(repeating: "ab", count: 32)
        for index in 0..<240 {
            var properties: PropertyMap = [
                .kind: .string(index % 7 == 0 ? "income" : "expense"),
                .amount: .int(Int64.random(in: -5...Int64.max / 2, using: &rng) >> Int64.random(in: 0...60, using: &rng)),
                .currency: .string(["KRW", "USD", "JPY"].randomElement(using: &rng)!),
                // Several on the same instant, so the cursor's tie-break by id is exercised.
                .date: .dateTime(
                    DateTime(epochMillis: 1_772_323_200_000 + Int64(index / 3) * 3_600_000, offsetMinutes: [540, 0, -300].randomElement(using: &rng)!)),
                .repeat: .string("none"),
            ]
            if Bool.random(using: &rng) { properties[.categoryId] = .uuid([parent, child, lone, UUID()].randomElement(using: &rng)!) }
            if Bool.random(using: &rng) { properties[.payee] = .string(texts.randomElement(using: &rng)!) }
            if Bool.random(using: &rng) { properties[.memo] = .string(texts.randomElement(using: &rng)!) }
            if Bool.random(using: &rng) { properties[.payment] = .string(texts.randomElement(using: &rng)!) }
            if Bool.random(using: &rng) {
                properties[.tags] = .strings(
                    Array(["a", "점심", "q\"t", "x\\y", "\u{FEFF}bom", "\u{2028}"].shuffled(using: &rng).prefix(Int.random(in: 0...3, using: &rng))).sorted())
            }
            if Int.random(in: 0...3, using: &rng) == 0 {
                properties[.attachments] = .strings([held, missing].shuffled(using: &rng).prefix(Int.random(in: 1...2, using: &rng)).sorted())
            }
            drafts.append(EventDraft(entityType: .expense, entityID: .uuid(UUID()), operation: .create, properties: properties, actor: "cli:test"))
        }
        _ = try ledger.writer.appendLogged(drafts)  // straight into the log: attachments this replica lacks, too
        try ledger.projector.catchUp()

        let entities = Dictionary(uniqueKeysWithValues: try ledger.views.store.liveEntities(.expense).map { ($0.id.description, $0) })
        let names: [UUID: (name: String, parent: String?)] = [parent: ("식비 \"food\"", nil), child: ("커피", "식비 \"food\""), lone: ("lone", nil)]
        var compared = 0
        for parameters in [
            [], [("month", "2026-03")], [("kind", "income")], [("category", parent.lowercased)], [("tag", "점심")],
            [("text", "quote")], [("limit", "1")], [("limit", "7")], [("limit", "1000")], [("from", "2026-03-02"), ("to", "2026-03-05")],
        ] {
            var cursor: String?
            repeat {
                let query = try ExpenseQuery(parameters + (cursor.map { [("cursor", $0)] } ?? []))
                let direct = try ledger.views.expensesPageJSON(query).serialized
                let page = try ledger.views.expenses(query)
                guard case .object(let pageFields) = try StrictJSON.parse(Array(direct.utf8)), case .array(let items)? = pageFields.first?.1 else {
                    Issue.record("not a page: \(direct)")
                    return
                }
                #expect(items.count == page.rows.count)
                for (item, row) in zip(items, page.rows) {
                    let entity = try #require(entities[row.id])
                    let expected = try StrictJSON.parse(Array(Self.expected(entity, categoryNames: names, held: [held]).serialized.utf8))
                    #expect(item == expected, "\(parameters) after \(cursor ?? "-"): \(item.canonicalText)")
                    #expect(
                        try ledger.views.entityJSON(.expense, id: try #require(UUID(uuidString: row.id))).map {
                            try StrictJSON.parse(Array($0.serialized.utf8))
                        } == item)
                }
                cursor = page.nextCursor
                compared += page.rows.count
            } while cursor != nil
        }
        #expect(compared > 400)
        // What was written is what every reading shows: a tag's leading U+FEFF too.
        let bom = try #require(try ledger.views.expenses(try ExpenseQuery([("tag", "\u{FEFF}bom")])).rows.first)
        #expect(bom.tags.contains("\u{FEFF}bom"))
        #expect(try ledger.views.entityJSON(.expense, id: try #require(UUID(uuidString: bom.id)))?.serialized.contains("\"\u{FEFF}bom\"") == true)
    }
}
