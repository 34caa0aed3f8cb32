import Foundation
import Testing
import TallyCore
@testable import TallyLedger
import TallyLog
import TallyTestSupport

/// `GET /v1/expenses` writes its page straight from SQLite's rows (`ExpensePageJSON`): it must
/// be, byte for byte, the page `ViewJSON` renders from `ExpenseRow`s, for every kind of row
/// and filter.
@Suite struct ExpensePageTests {
    @Test func pagesWrittenFromRowsEqualThePagesRenderedFromRecords() throws {
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
                #expect(direct == ledger.views.pageJSON(page).serialized, "\(parameters) after \(cursor ?? "-")")
                #expect(try JSONSerialization.jsonObject(with: Data(direct.utf8)) is [String: Any])
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
