import Foundation
import TallyCore
import TallyLedger
import TallyLog
import TallyTestSupport

/// Materialising recurring rules (issues 18 and 35): 100 daily rules started ten years ago,
/// all their occurrences created at once (`Ledger.materializeRecurrences`: each rule's
/// undecided days checked against what the replica ever held, then written in one bulk append
/// and projected from the log, `LedgerSession.writeAll`), events/s. Baseline in the same run: a
/// first load of the very events it wrote (fresh views of the same log, `Projector.catchUp`);
/// the same number of expense creates appended by `appendBulk` into a bare log is printed beside.
///
/// `materialize_recurrences_idle`: a pass over 1,000 rules with nothing due (each decided
/// through today by the pass before), in ms, against a first load of the 1,000 rules.
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
            (0..<rules).map { SampleEvents.dailyRule(start: start, index: $0, actor: "bench") })
        rulesWriter.close()
        let ledger = try Ledger(directory: directory)
        let began = Date()
        let created = try await ledger.materializeRecurrences(now: now)
        let elapsed = Date().timeIntervalSince(began)
        ledger.close()
        let firstLoad = try firstLoadRate(of: directory)

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
        print("recurring: first load of the same log \(Int(firstLoad)) events/s; appendBulk \(Int(Double(created) / bulkElapsed)) events/s")
        return [
            BenchmarkResult(
                name: "materialize_recurrences", value: Double(created) / elapsed, unit: "events/s", baseline: firstLoad,
                baselineName: "first load of the same log, events/s"),
            try await idlePass(rules: 1_000, now: now),
        ]
    }

    /// `rules` daily rules started yesterday, materialised once; then the median of 11 passes
    /// with nothing due, in ms.
    func idlePass(rules: Int, now: DateTime) async throws -> BenchmarkResult {
        let directory = try freshBenchDirectory("recurring-idle", in: workDirectory)
        let start = DateTime(epochMillis: now.epochMillis - 86_400_000, offsetMinutes: now.offsetMinutes)
        let writer = try directory.openWriter()
        _ = try writer.appendBulk(
            (0..<rules).map { SampleEvents.dailyRule(start: start, index: $0, actor: "bench") })
        writer.close()
        let ledger = try Ledger(directory: directory)
        let made = try await ledger.materializeRecurrences(now: now)
        var passes: [Double] = []
        for _ in 0..<11 {
            let began = Date()
            let again = try await ledger.materializeRecurrences(now: now)
            passes.append(Date().timeIntervalSince(began) * 1_000)
            guard again == 0 else { throw BenchError("an idle pass made \(again) occurrences") }
        }
        ledger.close()
        let loadRate = try firstLoadRate(of: directory)
        print("recurring: \(rules) rules, \(made) occurrences made by the first pass; passes with nothing due \(passes.map { String(format: "%.1f", $0) })")
        return BenchmarkResult(
            name: "materialize_recurrences_idle", value: passes.sorted()[passes.count / 2], unit: "ms",
            baseline: Double(rules + made) / loadRate * 1_000, baselineName: "first load of the \(rules) rules and their occurrences, ms")
    }
}
