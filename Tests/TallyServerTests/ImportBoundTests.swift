import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TallyCore
import TallyImport
@testable import TallyLedger
import TallyTestSupport

/// Issue 29: what reading a statement may cost — columns per row, bytes per cell, time — and
/// how many imports one ledger reads at once.
@Suite struct ImportBoundTests {
    static func csv(_ text: String, _ configure: (inout StatementOptions) -> Void = { _ in }) throws(StatementError) -> Statement {
        try StatementReader.csv(Array(text.utf8), options: ImportTests.options(configure))
    }

    @Test func aRowOfTooManyColumnsOrACellOfTooManyBytesIsRefusedNamingTheLimit() throws {
        let wideHeader = "date,amount," + (0..<StatementBounds.maxColumns).map { "c\($0)" }.joined(separator: ",")
        #expect { try Self.csv(wideHeader + "\n2026-11-01,100\n") } throws: { "\($0)".contains("at most \(StatementBounds.maxColumns)") && "\($0)".contains("row 1") }
        let bigCell = "date,amount,memo\n2026-11-01,100,\"" + String(repeating: "가", count: 2_000) + "\"\n"
        #expect { try Self.csv(bigCell) } throws: { "\($0)".contains("at most \(StatementBounds.maxCellBytes)") && "\($0)".contains("row 2 column 3") }
        // Within the bounds: delimiters and line breaks inside quotes are a cell's text.
        let fits = "date,amount,memo," + (3..<StatementBounds.maxColumns).map { "c\($0)" }.joined(separator: ",")
            + "\n2026-11-01,100,\"a, \"\"quoted\"\"\nline\"" + String(repeating: ",", count: StatementBounds.maxColumns - 3) + "\n"
        let statement = try Self.csv(fits)
        #expect(statement.rows.count == 1 && statement.rows[0].memo == "a, \"quoted\"\nline")
        // The same bounds hold for rows from a workbook (or any sheet).
        let sheet = StatementSheet(name: "Sheet1", rows: [(1, ["date", "amount"] + Array(repeating: "x", count: StatementBounds.maxColumns))])
        #expect { try StatementReader.read([sheet], options: ImportTests.options(), serialDays: true) } throws: { "\($0)".contains("sheet 'Sheet1' row 1") }
    }

    @Test func readingStopsAtItsTimeLimit() {
        let rows = (1...2_000).map { "2026-11-01,\($0)" }.joined(separator: "\n")
        #expect { try Self.csv("date,amount\n" + rows) { $0.timeLimit = .zero } } throws: { "\($0)".contains("took longer than") }
        #expect(throws: Never.self) { try Self.csv("date,amount\n" + rows) }
    }

    /// The wide CSV of issue 29 (a million columns, 9.9 MB) over HTTP: a 400 naming the bound,
    /// nothing written.
    @Test func aMillionColumnCSVIsRefusedOverHTTP() async throws {
        let fixture = try ServerFixture()
        var wide = "date,amount"
        for column in 0..<1_000_000 { wide += ",c\(column)" }
        let text = wide + "\n2026-11-01,100\n"
        try await fixture.test { client in
            let before = try fixture.service.views.projectedIndex()
            let answer = try await ImportTests.post(client, "/v1/imports?dryRun=true", token: fixture.readWrite, bytes: Array(text.utf8))
            let error = answer.object["error"] as? [String: Any] ?? [:]
            #expect(answer.status == .badRequest && error["code"] as? String == "invalid_statement")
            #expect((error["message"] as? String)?.contains("at most \(StatementBounds.maxColumns)") == true, "\(error)")
            #expect(try fixture.service.views.projectedIndex() == before)
        }
    }

    /// Two imports under way (their places held here, as two slow statements would): a third
    /// is 429, and once one ends the next goes through.
    @Test func aThirdImportAtOnceIsTooManyRequests() async throws {
        let fixture = try ServerFixture()
        let bank = Array("Date,Description,Amount\n2026-11-01,Rent,1000\n".utf8)
        try await fixture.test { client in
            fixture.service.ledger.importsUnderWay.withLock { $0 = Ledger.maxImportsAtOnce }
            let refused = try await ImportTests.post(client, "/v1/imports?dryRun=true", token: fixture.readWrite, bytes: bank)
            let error = refused.object["error"] as? [String: Any] ?? [:]
            #expect(refused.status == .tooManyRequests && error["code"] as? String == "too_many_imports", "\(String(buffer: refused.body))")
            fixture.service.ledger.importsUnderWay.withLock { $0 -= 1 }
            #expect(try await ImportTests.post(client, "/v1/imports?dryRun=true", token: fixture.readWrite, bytes: bank).status == .ok)
            #expect(fixture.service.ledger.importsUnderWay.withLock { $0 } == Ledger.maxImportsAtOnce - 1, "an import gives its place back")
        }
    }
}
