import Foundation
import Logging
import TallyCore
import TallyLedger
import TallyLog
import TallyServer

/// `tally-bench reopen` (and part of `hosting`): what a write to a closed hosted ledger costs
/// beside a write to an open one — the price of every miss of the open set. One writer, in
/// this process; each sample opens a ledger as `tally serve --ledgers` does (`TallyService`
/// with `ViewConnections.few`), creates one expense and closes it. Two kinds of ledger:
/// small ones (five expenses and their views, as the hosting bench's; each opened once) and
/// a busy household's year (3,000 expenses, one durable write each, all in the open segment).
/// The baseline is the same create on a ledger kept open.
struct ReopenBenchmarks {
    let workDirectory: String
    let samples: Int

    private let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }

    func run() async throws -> [BenchmarkResult] {
        let folder = LedgerFolder(root: workDirectory + "/reopen")
        try? FileManager.default.removeItem(atPath: folder.root)
        defer { try? FileManager.default.removeItem(atPath: folder.root) }

        var small: [DataDirectory] = []
        for index in 0...samples {
            small.append(try await make(folder, "small\(index)", expenses: 5))
        }
        let kept = try await writes(small[samples], count: samples)
        let reopened = try await reopenedWrites(small[0..<samples])

        let year = try await make(folder, "year", expenses: 3_000)
        let keptYear = try await writes(year, count: samples / 4)
        let reopenedYear = try await reopenedWrites(Array(repeating: year, count: samples / 4)[...])
        return [
            BenchmarkResult(
                name: "hosting_reopen_write", value: quantile(reopened, 0.5) * 1e6, unit: "µs", baseline: quantile(kept, 0.5) * 1e6,
                baselineName: "median create on a small ledger kept open"),
            BenchmarkResult(
                name: "hosting_reopen_write_year", value: quantile(reopenedYear, 0.5) * 1e6, unit: "µs", baseline: quantile(keptYear, 0.5) * 1e6,
                baselineName: "median create on a year's ledger kept open"),
        ]
    }

    private func open(_ directory: DataDirectory) throws -> TallyService {
        try TallyService(directory: directory, logger: logger, viewConnections: .few)
    }

    private func write(_ service: TallyService, _ amount: Int) async throws {
        _ = try await service.ledger.create(.expense, [.amount: .int(Int64(amount + 1))], actor: "bench")
    }

    /// A ledger named `name` with `expenses` expenses, each written on its own.
    private func make(_ folder: LedgerFolder, _ name: String, expenses: Int) async throws -> DataDirectory {
        let service = try open(try folder.create(try LedgerName(name)))
        for amount in 0..<expenses { try await write(service, amount) }
        service.close()
        return service.ledger.directory
    }

    /// The seconds each of `count` creates took on `directory` kept open.
    private func writes(_ directory: DataDirectory, count: Int) async throws -> [Double] {
        let service = try open(directory)
        defer { service.close() }
        var seconds: [Double] = []
        for amount in 0..<count {
            let began = now()
            try await write(service, amount)
            seconds.append(now() - began)
        }
        return seconds
    }

    /// The seconds each open, create and close of `directories` took.
    private func reopenedWrites(_ directories: ArraySlice<DataDirectory>) async throws -> [Double] {
        var seconds: [Double] = []
        for (amount, directory) in directories.enumerated() {
            let began = now()
            let service = try open(directory)
            try await write(service, amount)
            service.close()
            seconds.append(now() - began)
        }
        return seconds
    }
}
