import Foundation
import TallyCore

/// Realistic drafts for tests and benchmarks: the writes a household ledger sees.
public enum SampleEvents {
    public static let foodCategory = UUID(uuidString: "6f1c1a52-8d59-4b4e-9a1e-0b7d8c5b2a01")!

    /// A create of an expense with typical fields.
    public static func expenseCreate(id: UUID = UUID(), amount: Int64 = 12_000, memo: String = "점심 김밥", actor: String = "cli:test") -> EventDraft {
        EventDraft(
            entityType: .expense, entityID: .uuid(id), operation: .create,
            properties: [
                .kind: .string("expense"), .amount: .int(amount), .currency: .string("KRW"),
                .date: .dateTime(DateTime(epochMillis: 1_772_323_200_000, offsetMinutes: 540)), .categoryId: .uuid(foodCategory),
                .payment: .string("card"), .memo: .string(memo), .tags: .strings(["lunch", "work"]), .repeat: .string("none"),
            ], actor: actor)
    }

    /// A create of a daily recurring rule from `start`, paying `1,000 + index` won to "rule `index`".
    public static func dailyRule(start: DateTime, index: Int, actor: String = "bench") -> EventDraft {
        EventDraft(
            entityType: .recurring, entityID: .uuid(UUID()), operation: .create,
            properties: [
                .cadence: .string("daily"), .startDate: .dateTime(start), .monthEnd: .string("clamp"), .kind: .string("expense"),
                .amount: .int(Int64(1_000 + index)), .currency: .string("KRW"), .payee: .string("rule \(index)"),
            ], actor: actor)
    }

    /// An update of one expense's amount and memo.
    public static func expenseUpdate(id: UUID, amount: Int64, actor: String = "cli:test") -> EventDraft {
        EventDraft(
            entityType: .expense, entityID: .uuid(id), operation: .update,
            properties: [.amount: .int(amount), .memo: .string("수정 \(amount)")], actor: actor)
    }

    /// One draft of every kind: create/update/delete of each entity type, every value type.
    public static func everyKind() -> [EventDraft] {
        let expense = UUID(), category = UUID(), todo = UUID()
        return [
            EventDraft(
                entityType: .category, entityID: .uuid(category), operation: .create,
                properties: [.name: .string("Food"), .kind: .string("expense"), .icon: .string("🍚"), .parentId: .null], actor: "a"),
            EventDraft(entityType: .category, entityID: .uuid(category), operation: .update, properties: [.name: .string("Meals")], actor: "a"),
            expenseCreate(id: expense),
            expenseUpdate(id: expense, amount: 99),
            EventDraft(
                entityType: .expense, entityID: .uuid(expense), operation: .update,
                properties: [.attachments: .strings([String(repeating: "ab", count: 32)]), .categoryId: .null], actor: "b"),
            EventDraft(entityType: .expense, entityID: .uuid(expense), operation: .delete, actor: "b"),
            EventDraft(
                entityType: .todo, entityID: .uuid(todo), operation: .create,
                properties: [
                    .title: .string("No coffee for 9 days"), .checks: .bools([true, false, true, true, false, false, true, true, true]),
                    .isChallenge: .bool(true), .isCompleted: .bool(false),
                    .startDate: .dateTime(DateTime(epochMillis: -86_400_000, offsetMinutes: -300)),
                ], actor: "c"),
            EventDraft(entityType: .todo, entityID: .uuid(todo), operation: .update, properties: [.isCompleted: .bool(true)], actor: "c"),
            EventDraft(entityType: .todo, entityID: .uuid(todo), operation: .delete, actor: "c"),
            EventDraft(entityType: .category, entityID: .uuid(category), operation: .delete, actor: "a"),
            EventDraft(entityType: .setting, entityID: .settingKey("theme"), operation: .create, properties: [.value: .json("\"dark\"")], actor: "d"),
            EventDraft(entityType: .setting, entityID: .settingKey("theme"), operation: .update, properties: [.value: .json("{\"a\":[1,2]}")], actor: "d"),
            EventDraft(
                entityType: .setting, entityID: .settingKey("local.widget"), operation: .create, properties: [.value: .json("1")], actor: "d", isLocalOnly: true
            ),
            EventDraft(entityType: .setting, entityID: .settingKey("theme"), operation: .delete, actor: "d"),
        ]
    }
}
