import Foundation

/// Sample data for load tests, crash tests and benchmarks — a synthetic household ledger: 20 categories (5 with 3 sub-categories each), then each
/// expense created and updated four times.
public enum SyntheticLedger {
    /// The first `count` events of the synthetic ledger.
    public static func drafts(count: Int) -> [EventDraft] {
        var drafts: [EventDraft] = []
        drafts.reserveCapacity(count)
        var categories: [UUID] = []
        for top in 0..<5 where drafts.count < count {
            let parent = UUID()
            categories.append(parent)
            drafts.append(
                EventDraft(
                    entityType: .category, entityID: .uuid(parent), operation: .create,
                    properties: [.name: .string("Category \(top)"), .kind: .string("expense")], actor: "debug:bulk-load"))
            for sub in 0..<3 where drafts.count < count {
                let child = UUID()
                categories.append(child)
                drafts.append(
                    EventDraft(
                        entityType: .category, entityID: .uuid(child), operation: .create,
                        properties: [.name: .string("Sub \(top).\(sub)"), .kind: .string("expense"), .parentId: .uuid(parent)], actor: "debug:bulk-load"))
            }
        }
        var expense = UUID()
        var step = 0
        while drafts.count < count {
            if step % 5 == 0 {
                expense = UUID()
                let day = Int64(step / 5 % 1_095)
                drafts.append(
                    EventDraft(
                        entityType: .expense, entityID: .uuid(expense), operation: .create,
                        properties: [
                            .kind: .string(step % 50 == 0 ? "income" : "expense"), .amount: .int(Int64(1_000 + step % 997 * 100)),
                            .currency: .string("KRW"), .date: .dateTime(DateTime(epochMillis: 1_704_067_200_000 + day * 86_400_000, offsetMinutes: 540)),
                            .categoryId: .uuid(categories[step / 5 % categories.count]), .payment: .string(["card", "cash", "transfer"][step % 3]),
                            .memo: .string("점심 \(step % 31)"), .tags: .strings(step % 2 == 0 ? ["work"] : []), .repeat: .string("none"),
                        ], actor: "debug:bulk-load"))
            } else {
                drafts.append(
                    EventDraft(
                        entityType: .expense, entityID: .uuid(expense), operation: .update,
                        properties: [.amount: .int(Int64(1_000 + step)), .memo: .string("수정 \(step)")], actor: "debug:bulk-load"))
            }
            step += 1
        }
        return drafts
    }
}
