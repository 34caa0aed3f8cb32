import Foundation
import Testing
import TallyCore
@testable import TallyLedger
import TallyLog
@testable import TallyStore
import TallyTestSupport

/// The bulk write path (issue 35): a materialisation large enough to write a new generation of
/// the views, with single writes going on meanwhile — each of them is shown when its write
/// returns and stays shown after the swap, and the views end as a rebuild makes them.
@Suite struct BulkWriteTests {
    let folder = TemporaryDirectory("tally-bulk-write")

    @Test func writesDuringABulkThatMakesNewViewsAreAllShown() async throws {
        let directory = try DataDirectory.create(path: folder.file("bulk"), name: "bulk")
        // Six daily rules started ten years ago, straight into the log (a rule created through
        // the ledger is materialised at once): one pass makes ~22,000 occurrences, more than
        // `freshGenerationFrom`, in a ledger whose views hold six rules.
        let now = DateTime.nowHere
        let start = DateTime(epochMillis: now.epochMillis - 3_650 * 86_400_000, offsetMinutes: now.offsetMinutes)
        let writer = try directory.openWriter()
        _ = try writer.appendBulk(
            (0..<6).map { SampleEvents.dailyRule(start: start, index: $0, actor: "t") })
        writer.close()
        let ledger = try Ledger(directory: directory)
        defer { ledger.close() }
        let generationBefore = ProjectionDatabase.currentGeneration(directory)
        let bulk = Task { try await ledger.materializeRecurrences(now: now) }
        var written: [UUID] = []
        for index in 0..<40 {
            let (entity, _) = try await ledger.create(.expense, [.amount: .int(Int64(index + 1)), .payee: .string("single")], actor: "t")
            guard case .string(let text)? = entity.member("id"), let id = UUID(uuidString: text) else { Issue.record("no id"); return }
            _ = try ledger.written(.expense, id)  // shown when its write returns
            written.append(id)
        }
        let made = try await bulk.value
        let due = try ledger.views.recurringRuleEntities().reduce(0) { $0 + (try RecurringRule($1).dueDays(now: now).count) }
        #expect(made == due)
        #expect(due > 20_000)
        #expect(ProjectionDatabase.currentGeneration(directory) != generationBefore, "the bulk wrote new views")
        for id in written { _ = try ledger.written(.expense, id) }
        #expect(try ledger.views.expenses(try ExpenseQuery([("payee", "single"), ("limit", "100")])).rows.count == 40)
        #expect(try ProjectionRebuilder.rebuild(directory, verifyOnly: true).differences.isEmpty)
    }

    @Test func aLedgerWhoseViewsLackMoreThanTheyShowIsOpenedWithNewViews() async throws {
        let directory = try DataDirectory.create(path: folder.file("behind"), name: "behind")
        var ledger = try Ledger(directory: directory)
        _ = try await ledger.create(.expense, [.amount: .int(1)], actor: "t")
        ledger.close()
        // What a node catching a ledger up from the cluster's archive does: events reach the
        // log without the views (a copied log, a replay).
        let writer = try directory.openWriter()
        _ = try writer.appendBulk((0..<21_000).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) })
        writer.close()
        let before = ProjectionDatabase.currentGeneration(directory)
        ledger = try Ledger(directory: directory)
        defer { ledger.close() }
        #expect(ledger.opening.caughtUp == 21_000)
        #expect(ProjectionDatabase.currentGeneration(directory) != before, "written anew, not 21,000 events into views of one")
        #expect(try ledger.views.expenses(try ExpenseQuery([("limit", "1")])).rows.count == 1)
        #expect(try ProjectionRebuilder.rebuild(directory, verifyOnly: true).differences.isEmpty)
    }
}

/// A batch's drafts are validated on every core and checked against the ledger in order: the
/// error a refused batch gives names its first bad draft, whichever check finds it, and
/// nothing of the batch is written.
@Suite struct BatchCheckTests {
    let folder = TemporaryDirectory("tally-batch-check")

    @Test func aRefusedBatchNamesItsFirstBadDraftAndWritesNothing() async throws {
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file("ledger"), name: "ledger"))
        defer { ledger.close() }
        let missing = UUID()
        var drafts = uncategorised(6_000)
        // Draft 10 names a category the ledger does not have (found by the in-order check);
        // draft 5,000 has an amount no schema allows (found by the parallel validation).
        drafts[10].properties[.categoryId] = .uuid(missing)
        drafts[5_000].properties[.amount] = .string("lots")
        #expect {
            _ = try ledger.session.writeAll(actor: "t") { _ in drafts }
        } throws: { error in
            "\(error)".contains(missing.lowercased)
        }
        drafts[10].properties[.categoryId] = nil
        #expect {
            _ = try ledger.session.writeAll(actor: "t") { _ in drafts }
        } throws: { error in
            (error as? ValidationError)?.field == "amount"
        }
        #expect(ledger.writer.head.lastIndex == 0, "nothing of either batch was written")
        drafts[5_000].properties[.amount] = .int(1)
        #expect(try ledger.session.writeAll(actor: "t") { _ in drafts } == 6_000)
    }
}

/// Whether ids were ever held, asked in bulk (what an import asks of every row): the answer is
/// the same whether the lookup asks about each id or, asked about more ids than the ledger
/// holds, reads every id the ledger holds.
@Suite struct HeldAmongTests {
    let folder = TemporaryDirectory("tally-held-among")

    @Test func bothWaysOfAskingGiveTheSameIds() async throws {
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file("ledger"), name: "ledger"))
        defer { ledger.close() }
        let drafts = uncategorised(1_200)
        _ = try ledger.session.writeAll(actor: "t") { _ in drafts }
        let deleted = drafts[7].entityID
        _ = try ledger.session.writeAll(actor: "t") { _ in [EventDraft(entityType: .expense, entityID: deleted, operation: .delete, actor: "t")] }
        let held = Set(drafts.prefix(300).map(\.entityID))  // a deleted one among them: it was held
        let few = Array(held) + (0..<100).map { _ in EntityID.uuid(UUID()) }  // fewer than the ledger holds: one query per 500
        let many = Array(held) + (0..<2_000).map { _ in EntityID.uuid(UUID()) }  // more: the ledger's ids read
        #expect(try ledger.views.store.withLookup { try $0.held(among: few) } == held)
        #expect(try ledger.views.store.withLookup { try $0.held(among: many) } == held)
        #expect(try ledger.views.store.withLookup { try $0.live(deleted) } == nil, "deleted, yet held once")
    }
}

/// `count` expense creates that name no category (the samples name one a new ledger lacks).
private func uncategorised(_ count: Int) -> [EventDraft] {
    (0..<count).map {
        var draft = SampleEvents.expenseCreate(amount: Int64($0 + 1))
        draft.properties[.categoryId] = nil
        return draft
    }
}
