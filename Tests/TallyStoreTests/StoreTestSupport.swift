import Foundation
import GRDB
import Testing
@testable import TallyStore
import TallyLog
import TallyCore
import TallyTestSupport

/// Random ledger histories: creates, updates and deletes of every entity kind from a few
/// origins, with unique stamps, so merge results do not depend on arrival order.
enum RandomHistory {
    static let origins = (1...3).map { ReplicaID(string: "0000000\($0)-0000-0000-0000-000000000000")! }

    static func events(seed: UInt64, count: Int) -> [Event] {
        var rng = SplitMix64(seed: seed)
        let categoryIDs = (0..<4).map { _ in RandomEvents.uuid(&rng) }
        let expenseIDs = (0..<8).map { _ in RandomEvents.uuid(&rng) }
        let todoIDs = (0..<3).map { _ in RandomEvents.uuid(&rng) }
        let budgetIDs = (0..<3).map { _ in RandomEvents.uuid(&rng) }
        let accountIDs = (0..<3).map { _ in RandomEvents.uuid(&rng) }
        let transferIDs = (0..<5).map { _ in RandomEvents.uuid(&rng) }
        let lineIDs = (0..<6).map { _ in RandomEvents.uuid(&rng) }
        var sequences: [ReplicaID: UInt64] = [:]
        var events: [Event] = []
        for step in 0..<count {
            let origin = origins.randomElement(using: &rng)!
            sequences[origin, default: 0] += 1
            let type = [EntityType.expense, .expense, .expense, .category, .todo, .setting, .budget, .account, .transfer, .transfer, .line, .line]
                .randomElement(
                    using: &rng)!
            let operation: EventOperation = [.create, .create, .update, .update, .update, .delete].randomElement(using: &rng)!
            let entityID: EntityID
            var properties = PropertyMap()
            switch type {
            case .expense:
                entityID = .uuid(expenseIDs.randomElement(using: &rng)!)
                if operation == .create {
                    properties = [
                        .kind: .string(Bool.random(using: &rng) ? "expense" : "income"), .amount: .int(Int64.random(in: 1...100_000, using: &rng)),
                        .currency: .string(["KRW", "USD"].randomElement(using: &rng)!),
                        .date: .dateTime(
                            DateTime(
                                epochMillis: 1_767_225_600_000 + Int64.random(in: 0...(90 * 86_400_000), using: &rng),
                                offsetMinutes: [540, 0, -300].randomElement(using: &rng)!)),
                        .repeat: .string("none"),
                    ]
                }
                if Bool.random(using: &rng) { properties[.amount] = .int(Int64.random(in: 1...100_000, using: &rng)) }
                if Bool.random(using: &rng) { properties[.categoryId] = Bool.random(using: &rng) ? .uuid(categoryIDs.randomElement(using: &rng)!) : .null }
                if Bool.random(using: &rng) {
                    properties[.tags] = .strings(Array(["a", "b", "c"].shuffled(using: &rng).prefix(Int.random(in: 0...2, using: &rng))).sorted())
                }
                if Bool.random(using: &rng) { properties[.payment] = .string(["card", "cash"].randomElement(using: &rng)!) }
                if Bool.random(using: &rng) { properties[.memo] = .string("m\(step)") }
                if Bool.random(using: &rng) { properties[.accountId] = Bool.random(using: &rng) ? .uuid(accountIDs.randomElement(using: &rng)!) : .null }
            case .category:
                entityID = .uuid(categoryIDs.randomElement(using: &rng)!)
                if operation == .create { properties = [.name: .string("c\(step)"), .kind: .string("expense")] }
                if Bool.random(using: &rng) { properties[.parentId] = Bool.random(using: &rng) ? .uuid(categoryIDs.randomElement(using: &rng)!) : .null }
                if Bool.random(using: &rng) { properties[.name] = .string("n\(step)") }
            case .todo:
                entityID = .uuid(todoIDs.randomElement(using: &rng)!)
                if operation == .create {
                    properties = [.title: .string("t\(step)"), .checks: .bools([]), .isChallenge: .bool(false), .isCompleted: .bool(false)]
                }
                if Bool.random(using: &rng) { properties[.checks] = .bools((0..<Int.random(in: 0...5, using: &rng)).map { _ in Bool.random(using: &rng) }) }
            case .setting:
                entityID = .settingKey(["theme", "defaultCurrency"].randomElement(using: &rng)!)
                properties = [.value: .json("\(step)")]
            case .recurring, .importBatch, .rule, .rate, .settlement:  // not drawn above; they have their own tests
                entityID = .uuid(budgetIDs[0])
            case .account:
                entityID = .uuid(accountIDs.randomElement(using: &rng)!)
                if operation == .create {
                    properties = [
                        .name: .string("a\(step)"), .kind: .string(["bank", "card", "cash"].randomElement(using: &rng)!),
                        .currency: .string(["KRW", "USD"].randomElement(using: &rng)!), .openingBalance: .int(Int64.random(in: -50_000...50_000, using: &rng)),
                        .openingDate: .dateTime(
                            DateTime(epochMillis: 1_767_225_600_000 + Int64.random(in: 0...(90 * 86_400_000), using: &rng), offsetMinutes: 540)),
                        .isArchived: .bool(false),
                    ]
                }
                if Bool.random(using: &rng) { properties[.openingBalance] = .int(Int64.random(in: -50_000...50_000, using: &rng)) }
                if Bool.random(using: &rng) { properties[.currency] = .string(["KRW", "USD"].randomElement(using: &rng)!) }
            case .transfer:
                entityID = .uuid(transferIDs.randomElement(using: &rng)!)
                if operation == .create {
                    properties = [
                        .accountId: .uuid(accountIDs.randomElement(using: &rng)!), .toAccountId: .uuid(accountIDs.randomElement(using: &rng)!),
                        .amount: .int(Int64.random(in: 1...100_000, using: &rng)),
                        .date: .dateTime(DateTime(epochMillis: 1_767_225_600_000 + Int64.random(in: 0...(90 * 86_400_000), using: &rng), offsetMinutes: 0)),
                    ]
                }
                if Bool.random(using: &rng) { properties[.amount] = .int(Int64.random(in: 1...100_000, using: &rng)) }
                if Bool.random(using: &rng) { properties[.toAmount] = Bool.random(using: &rng) ? .int(Int64.random(in: 1...100_000, using: &rng)) : .null }
                if Bool.random(using: &rng) { properties[.toAccountId] = .uuid(accountIDs.randomElement(using: &rng)!) }
            case .line:
                // A split receipt's line; its expense may never have been created, or deleted.
                entityID = .uuid(lineIDs.randomElement(using: &rng)!)
                if operation == .create {
                    properties = [.expenseId: .uuid(expenseIDs.randomElement(using: &rng)!), .amount: .int(Int64.random(in: 1...50_000, using: &rng))]
                }
                if Bool.random(using: &rng) { properties[.amount] = .int(Int64.random(in: 1...50_000, using: &rng)) }
                if Bool.random(using: &rng) { properties[.categoryId] = Bool.random(using: &rng) ? .uuid(categoryIDs.randomElement(using: &rng)!) : .null }
                if Bool.random(using: &rng) { properties[.expenseId] = .uuid(expenseIDs.randomElement(using: &rng)!) }
            case .budget:
                entityID = .uuid(budgetIDs.randomElement(using: &rng)!)
                let month = { "2026-0\(Int.random(in: 1...3, using: &rng))" }
                if operation == .create {
                    properties = [.amount: .int(Int64.random(in: 1...100_000, using: &rng)), .currency: .string("KRW"), .fromMonth: .string(month())]
                }
                if Bool.random(using: &rng) { properties[.categoryId] = Bool.random(using: &rng) ? .uuid(categoryIDs.randomElement(using: &rng)!) : .null }
                if Bool.random(using: &rng) { properties[.toMonth] = Bool.random(using: &rng) ? .string(month()) : .null }
                if Bool.random(using: &rng) { properties[.amount] = .int(Int64.random(in: 1...100_000, using: &rng)) }
            }
            if operation == .delete { properties = [:] }
            if operation == .update, properties.isEmpty { properties[.memo] = .string("u\(step)") }
            events.append(
                Event(
                    origin: origin, sequence: sequences[origin]!,
                    timestamp: HybridTimestamp(millis: UInt64(1_000 + Int.random(in: 0...40, using: &rng)), counter: UInt32(step)),
                    actor: "test", entityType: type, entityID: entityID, operation: type == .setting && operation == .update ? .update : operation,
                    properties: properties, previousHash: .zero))
        }
        return events
    }

    static func logged(_ events: [Event]) -> [LoggedEvent] {
        events.enumerated().map { LoggedEvent(index: UInt64($0.offset + 1), event: $0.element, hash: .zero, segment: "", frameOffset: 0) }
    }
}

/// An empty, migrated views database in memory.
func emptyViews() throws -> DatabaseQueue {
    let queue = try DatabaseQueue()
    try ProjectionDatabase.migrate(queue)
    return queue
}

/// Applies events one transaction per `batch` events, as the projector does.
func applyIncrementally(_ events: [LoggedEvent], to queue: DatabaseQueue, batches: [Int]) throws {
    var start = 0
    var batchIndex = 0
    while start < events.count {
        let size = max(1, batches.isEmpty ? 1 : batches[batchIndex % batches.count])
        let end = min(events.count, start + size)
        try queue.write { db in _ = try Projector.applyBatch(Array(events[start..<end]), db) }
        start = end
        batchIndex += 1
    }
}

func rebuilt(_ events: [LoggedEvent]) throws -> DatabaseQueue {
    var state = LedgerState()
    for logged in events { state.apply(logged.event) }
    let queue = try emptyViews()
    try queue.write { try ProjectionRebuilder.writeViews(of: state, lastIndex: UInt64(events.count), $0) }
    return queue
}

/// The same views written as a new generation is (`fillNewGeneration`: states from a second
/// connection into a side file, then copied in), in a file under `folder`.
func rebuiltAsNewGeneration(_ events: [LoggedEvent], in folder: TemporaryDirectory) throws -> DatabaseQueue {
    var state = LedgerState()
    for logged in events { state.apply(logged.event) }
    let path = folder.file("generation-\(UUID().uuidString).sqlite")
    let queue = try DatabaseQueue(path: path)
    try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = OFF") }
    try ProjectionDatabase.migrate(queue)
    try ProjectionRebuilder.fillNewGeneration(queue, at: path, from: state, lastIndex: UInt64(events.count))
    #expect(!FileManager.default.fileExists(atPath: path + "-states"), "the side file is removed")
    return queue
}
