import Foundation
import TallyCore
import TallyLedger
import TallyLog

/// Materialising recurring rules (issue 18): 100 daily rules started ten years ago, all
/// their occurrences created at once (`Ledger.materializeRecurrences`: each due day checked
/// against what the replica ever held, then written and projected in durable batches of
/// 10,000), events/s. Baseline in the same run: the same number of expense creates appended
/// by `appendBulk` into a bare log (no checks, no views).
struct RecurrenceBenchmarks {
    let workDirectory: String
    let rules: Int
    let years: Int

    func run() async throws -> [BenchmarkResult] {
        let directory = try freshBenchDirectory("recurring", in: workDirectory)
        let now = DateTime.nowHere
        let start = DateTime(epochMillis: now.epochMillis - Int64(years) * 365 * 86_400_000, offsetMinutes: now.offsetMinutes)
        // The rules go straight into the log (creating one through the Ledger materialises it at
        // once, which would time the rules one by one); opening the Ledger projects them.
        let rulesWriter = try directory.openWriter()
        _ = try rulesWriter.appendBulk(
            (0..<rules).map { index in
                EventDraft(
                    entityType: .recurring, entityID: .uuid(UUID()), operation: .create,
                    properties: [
                        .cadence: .string("daily"), .startDate: .dateTime(start), .monthEnd: .string("clamp"), .kind: .string("expense"),
                        .amount: .int(Int64(1_000 + index)), .currency: .string("KRW"), .payee: .string("rule \(index)"),
                    ], actor: "bench")
            })
        rulesWriter.close()
        let ledger = try Ledger(directory: directory)
        defer { ledger.close() }
        let began = Date()
        let created = try await ledger.materializeRecurrences(now: now)
        let elapsed = Date().timeIntervalSince(began)

        // Baseline: the same number of creates, appended in bulk into a bare log.
        let bare = try freshBenchDirectory("recurring-bare", in: workDirectory)
        let writer = try bare.openWriter()
        let drafts = (0..<created).map { index in
            EventDraft(
                entityType: .expense, entityID: .uuid(UUID()), operation: .create,
                properties: [
                    .kind: .string("expense"), .amount: .int(1_000), .currency: .string("KRW"), .date: .dateTime(now), .repeat: .string("daily"),
                    .payee: .string("rule \(index % rules)"),
                ], actor: "bench")
        }
        let bulkStart = Date()
        _ = try writer.appendBulk(drafts)
        let bulkElapsed = Date().timeIntervalSince(bulkStart)
        writer.close()
        print("recurring: \(created) occurrences of \(rules) daily rules over \(years) years in \(String(format: "%.2f", elapsed)) s")
        return [
            BenchmarkResult(
                name: "materialize_recurrences", value: Double(created) / elapsed, unit: "events/s",
                baseline: Double(created) / bulkElapsed, baselineName: "appendBulk of as many expense creates (no checks, no views)")
        ]
    }
}
