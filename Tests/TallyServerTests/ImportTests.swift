import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TallyCore
import TallyImport
import TallyLog
@testable import TallyLedger
import TallyStore
import TallyTestSupport
import ZIPFoundation

/// Statement imports (issue 19), with statement files written here in the shapes banks and
/// card companies hand out: each transaction once, however often or overlapping the imports.
@Suite struct ImportTests {
    static let seoul = TimeZone(identifier: "Asia/Seoul")!

    static func options(_ configure: (inout StatementOptions) -> Void = { _ in }) -> StatementOptions {
        var options = StatementOptions()
        options.timeZone = seoul
        configure(&options)
        return options
    }

    /// A Samsung-card-like CSV in CP949: a title and a period above the header, `yyyy.mm.dd`
    /// dates, `원` amounts with commas, a cancellation, a blank line and a 합계 row.
    static let cardCSV = """
        삼성카드 이용내역서
        조회기간: 2026.11.01 ~ 2026.11.30

        이용일,가맹점,이용금액,할부,비고
        2026.11.03,김밥천국,"9,500원",일시불,
        2026.11.04,스타벅스 강남점,"5,600원",일시불,
        2026.11.04,스타벅스 강남점,"5,600원",일시불,
        2026.11.05,스타벅스 강남점,"-5,600원",일시불,취소
        2026.11.07,이마트,"1,234,000원",3개월,
        ,,,,
        합계,,"1,249,100원",,
        """

    func entities(_ ledger: Ledger, _ type: EntityType) throws -> [LedgerState.Entity] {
        try ledger.projector.database.read { try ProjectionQueries.liveEntities($0, type: type) }
    }

    @Test func aCP949CardStatementImportsOnceWithRefundsAndTotalsSkipped() async throws {
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        let bytes = try StatementEncoding.encodeCP949(Self.cardCSV)
        #expect(String(validating: bytes, as: UTF8.self) == nil, "really CP949, not UTF-8")
        let first = try await ledger.importFile(
            bytes, fileName: "삼성카드_202611.csv", format: "csv", options: Self.options(), dryRun: false, skipBadRows: false, actor: "cli:test")
        #expect(first.encoding == StatementEncoding.cp949.rawValue && first.layouts.map(\.layout) == ["samsung-card"])
        #expect(first.created.count == 5 && first.duplicates.isEmpty && first.bad.isEmpty)
        #expect(first.skipped.map(\.reason).sorted() == ["blank", "total"] && first.skipped.map(\.row).sorted() == [10, 11])
        let rows = first.created.map(\.row)
        #expect(rows.map(\.amount) == [9_500, 5_600, 5_600, 5_600, 1_234_000])
        #expect(rows.map(\.kind) == ["expense", "expense", "expense", "income", "expense"] && rows.map(\.isRefund) == [false, false, false, true, false])
        #expect(rows[0].payee == "김밥천국" && rows[0].date.description == "2026-11-03T12:00:00+09:00" && rows[0].row == 5)
        #expect(rows[3].memo == nil, "비고 is not a column this layout reads")

        // The two identical purchases on the 4th stay two; importing again creates nothing.
        let second = try await ledger.importFile(
            bytes, fileName: "again.csv", format: "csv", options: Self.options(), dryRun: false, skipBadRows: false, actor: "cli:test")
        #expect(second.created.isEmpty && second.duplicates.count == 5 && second.importID == nil)
        let expenses = try entities(ledger, .expense)
        #expect(expenses.count == 5)
        #expect(expenses.filter { $0.value(.tags) == .strings(["refund"]) }.count == 1)

        // The import is one entry in the audit trail: who, which file, its digest.
        let imports = try ledger.views.imports()
        #expect(imports.count == 1 && imports[0].id == .uuid(first.importID!))
        #expect(imports[0].value(.name) == .string("삼성카드_202611.csv") && imports[0].value(.count) == .int(5))
        let digest = SHA256Hex.of(bytes)
        #expect(imports[0].value(.digest) == .string(digest))
        let trail = try ledger.views.audit(.uuid(first.importID!))
        #expect(trail.events.count == 1 && trail.events[0].event.actor == "cli:test")
        #expect(expenses.allSatisfy { $0.value(.importId) == .uuid(first.importID!) })
    }

    @Test func anOverlappingStatementCreatesOnlyTheNewRows() async throws {
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        let header = "거래일자,내용,출금,입금,잔액\n"
        let october = header + "2026.10.30,월세,\"700,000\",,1000000\n2026.11.01,급여,,\"3,000,000\",4000000\n2026.11.02,편의점,\"4,500\",,3995500\n"
        let november =
            header
            + "2026.11.01,급여,,\"3,000,000\",4000000\n2026.11.02,편의점,\"4,500\",,3995500\n2026.11.03,약국,\"12,000\",,3983500\n2026.11.04,편의점,\"4,500\",,3979000\n"
        let a = try await ledger.importFile(
            Array(october.utf8), fileName: "a.csv", format: "csv", options: Self.options(), dryRun: false, skipBadRows: false, actor: "t")
        #expect(a.created.count == 3 && a.layouts.map(\.layout) == ["shinhan-bank"])
        #expect(a.created.map(\.row.kind) == ["expense", "income", "expense"])
        let b = try await ledger.importFile(
            Array(november.utf8), fileName: "b.csv", format: "csv", options: Self.options(), dryRun: false, skipBadRows: false, actor: "t")
        #expect(b.duplicates.map(\.row.row) == [2, 3] && b.created.map(\.row.payee) == ["약국", "편의점"])
        #expect(try entities(ledger, .expense).count == 5)
        #expect(try ledger.views.imports().count == 2)
    }

    @Test func aBadRowRefusesTheWholeFileUnlessSkippedAndADryRunWritesNothing() async throws {
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        let csv =
            "Date,Description,Debit,Credit\n2026-11-01,Rent,\"1,000,000\",\n2026-11-02,Coffee,abc,\n2026-13-01,Nowhere,100,\n2026-11-03,Both,100,200\n2026-11-04,Salary,,\"3,200,000.00\"\n"
        let bytes = Array(csv.utf8)
        let before = try ledger.views.projectedIndex()
        await #expect {
            try await ledger.importFile(bytes, fileName: "bank.csv", format: "csv", options: Self.options(), dryRun: false, skipBadRows: false, actor: "t")
        } throws: { error in
            guard let refused = error as? StatementRefused else { return false }
            return refused.bad.map(\.row) == [3, 4, 5] && refused.bad[0].reason.contains("'abc' is not an amount")
                && refused.bad[1].reason.contains("not a date") && refused.bad[2].reason.contains("both a debit and a credit")
        }
        #expect(try ledger.views.projectedIndex() == before, "nothing written")
        let dry = try await ledger.importFile(bytes, fileName: "bank.csv", format: "csv", options: Self.options(), dryRun: true, skipBadRows: false, actor: "t")
        #expect(dry.dryRun && dry.created.count == 2 && dry.bad.count == 3)
        #expect(try ledger.views.projectedIndex() == before, "a dry run writes nothing")
        let skipping = try await ledger.importFile(
            bytes, fileName: "bank.csv", format: "csv", options: Self.options(), dryRun: false, skipBadRows: true, actor: "t")
        #expect(skipping.created.map(\.row.amount) == [1_000_000, 3_200_000] && skipping.bad.count == 3)
        #expect(skipping.created.map(\.row.kind) == ["expense", "income"])
    }

    @Test func utf16TabSeparatedTextWithABOMIsRead() async throws {
        let text = "Date\tPayee\tAmount\n2026-11-01\t카페\t$12.50\n"
        var bytes: [UInt8] = [0xFF, 0xFE]
        for unit in text.utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let statement = try StatementReader.csv(
            bytes,
            options: Self.options {
                $0.delimiter = "\t"; $0.currency = "USD"
            })
        #expect(statement.encoding == StatementEncoding.utf16le.rawValue && statement.rows.count == 1)
        #expect(statement.rows[0].amount == 1_250 && statement.rows[0].currency == "USD" && statement.rows[0].payee == "카페")
    }

    @Test func amountsAndDatesInTheShapesStatementsUse() async throws {
        for (text, minor) in [
            ("1,234,000", 1_234_000), ("1,234,000원", 1_234_000), ("₩12,000", 12_000), ("-5,000", -5_000), ("(5,000)", -5_000),
            ("5,000-", -5_000), ("+3,200,000", 3_200_000), ("KRW 900", 900), ("12.00", 12), (" 7 원 ", 7),
        ] as [(String, Int64)] {
            #expect(try StatementValues.amount(text, currency: "KRW") == minor, "\(text)")
        }
        #expect(try StatementValues.amount("$12.5", currency: "USD") == 1_250)
        #expect(try StatementValues.amount("", currency: "KRW") == nil)
        for bad in ["12.5", "1,2a", "--5", "1e5", "9999999999999999", "１２", "(5", ".5"] {
            #expect(throws: StatementError.self, "\(bad)") { try StatementValues.amount(bad, currency: "KRW") }
        }
        // Commas group thousands, nothing else: a decimal comma is a bad row, not 100 times the amount.
        #expect(try StatementValues.amount("$1,234.50", currency: "USD") == 123_450)
        #expect(try StatementValues.amount("1,00,000.00", currency: "INR") == 10_000_000, "lakhs, as Indian statements group")
        #expect(try StatementValues.amount("12,34,567", currency: "KRW") == 1_234_567)
        for bad in ["12,50", "1,2,3", "1,,000", ",000", "1,0000", "1234,567", "1,234,56", "-12,50원", "1,234.5,0", "0,500", "-0,250", "1,00,00"] {
            #expect(throws: StatementError.self, "\(bad)") { try StatementValues.amount(bad, currency: "KRW") }
            #expect(throws: StatementError.self, "\(bad)") { try StatementValues.amount(bad, currency: "USD") }
        }
        // Random amounts written the ways statements write them read back exactly.
        var rng = SplitMix64(seed: 19)
        for _ in 0..<500 {
            let value = Int64.random(in: 1...999_999_999_999, using: &rng)
            let grouped = value.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))
            let text = [grouped, grouped + "원", "₩" + grouped, "(" + grouped + ")", grouped + "-", "-" + grouped].randomElement(using: &rng)!
            let negative = text.hasPrefix("(") || text.hasSuffix("-") || text.hasPrefix("-")
            #expect(try StatementValues.amount(text, currency: "KRW") == (negative ? -value : value), "\(text)")
        }
        func date(_ text: String, serial: Bool = false) throws -> String {
            try StatementValues.date(text, timeZone: Self.seoul, serialDays: serial).description
        }
        #expect(try date("20251201") == "2025-12-01T12:00:00+09:00")
        #expect(try date("2026.11.21") == "2026-11-21T12:00:00+09:00" && date("2026.11.21.") == "2026-11-21T12:00:00+09:00")
        #expect(try date("2026.11.21 14:03:22") == "2026-11-21T14:03:22+09:00" && date("2026-11-21 14:03") == "2026-11-21T14:03:00+09:00")
        #expect(try date("26.11.21") == "2026-11-21T12:00:00+09:00" && date("2026/11/21") == "2026-11-21T12:00:00+09:00")
        #expect(try date("46347", serial: true) == "2026-11-21T12:00:00+09:00", "an Excel serial day")
        #expect(try date("46347.5", serial: true) == "2026-11-21T12:00:00+09:00")
        for bad in ["2026.02.30", "20261301", "46347", "2026-11-21 25:00", "yesterday", "2026.11", "0000.01.01"] {
            #expect(throws: StatementError.self, "\(bad)") { try date(bad) }
        }
    }

    // MARK: - Workbooks

    /// An .xlsx written the way Excel writes one: shared strings, numbers as numbers, a date
    /// as a serial day in one row, a title row above the header, a 합계 row; a sheet per
    /// card holder.
    static func cardWorkbook(holders: [(name: String, rows: [[String]])]) throws -> Data {
        let archive = try Archive(data: Data(), accessMode: .create)
        var strings: [String] = []
        func shared(_ text: String) -> Int {
            if let index = strings.firstIndex(of: text) { return index }
            strings.append(text)
            return strings.count - 1
        }
        func add(_ path: String, _ xml: String) throws {
            let data = Data(xml.utf8)
            try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) { (position: Int64, size: Int) in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        var sheetsXML = "", relsXML = ""
        for (number, holder) in holders.enumerated() {
            var rowsXML = ""
            let all = [["\(holder.name)님 카드 이용대금 명세서"], []] + [["이용일자", "이용가맹점", "이용금액", "승인번호"]] + holder.rows
            for (index, row) in all.enumerated() {
                var cells = ""
                for (column, value) in row.enumerated() where !value.isEmpty {
                    let reference = "\(["A", "B", "C", "D", "E"][column])\(index + 1)"
                    if value.hasPrefix("#") {  // a number cell (an amount, or a serial date)
                        cells += #"<c r="\#(reference)"><v>\#(value.dropFirst())</v></c>"#
                    } else {
                        cells += #"<c r="\#(reference)" t="s"><v>\#(shared(value))</v></c>"#
                    }
                }
                rowsXML += #"<row r="\#(index + 1)">\#(cells)</row>"#
            }
            try add(
                "xl/worksheets/sheet\(number + 1).xml",
                #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>\#(rowsXML)</sheetData></worksheet>"#
            )
            sheetsXML += #"<sheet name="\#(holder.name)" sheetId="\#(number + 1)" r:id="rId\#(number + 1)"/>"#
            relsXML +=
                #"<Relationship Id="rId\#(number + 1)" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet\#(number + 1).xml"/>"#
        }
        try add(
            "xl/workbook.xml",
            #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>\#(sheetsXML)</sheets></workbook>"#
        )
        try add(
            "xl/_rels/workbook.xml.rels",
            #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">\#(relsXML)</Relationships>"#
        )
        let items = strings.map {
            #"<si><t xml:space="preserve">\#($0.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;"))</t></si>"#
        }.joined()
        try add(
            "xl/sharedStrings.xml",
            #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="\#(strings.count)" uniqueCount="\#(strings.count)">\#(items)</sst>"#
        )
        return archive.data!
    }

    @Test func aFamilyCardWorkbookImportsEverySheetOnceKeepingTheHolder() async throws {
        let workbook = try Self.cardWorkbook(holders: [
            (
                "홍길동",
                [
                    ["20261101", "GS25 역삼점", "1,500", "30000001"], ["20261102", "쿠팡", "#23900", "30000002"], ["#46329", "넷플릭스", "#17000", "30000003"],
                    ["합계", "", "#42400", ""],
                ]
            ),
            (
                "김영희",
                [
                    ["20261101", "GS25 역삼점", "1,500", "40000001"], ["20261103", "올리브영 & 약국", "#-8000", "40000002"],
                    ["2026.02.30", "없는 날", "#100", "40000003"],
                ]
            ),
        ])
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        let report = try await ledger.importFile(
            Array(workbook), fileName: "family.xlsx", format: "xlsx", options: Self.options(), dryRun: false, skipBadRows: true, actor: "t")
        #expect(report.layouts.map(\.layout) == ["shinhan-card", "shinhan-card"])
        #expect(report.created.count == 5 && report.skipped.map(\.reason) == ["total"], "\(report.bad)")
        #expect(report.bad.map { "\($0.sheet) \($0.row)" } == ["김영희 6"], "February 30th")
        let rows = report.created.map(\.row)
        #expect(rows.map(\.sheet) == ["홍길동", "홍길동", "홍길동", "김영희", "김영희"])
        #expect(rows[2].date.description == "2026-11-03T12:00:00+09:00", "serial day 46329")
        #expect(rows.map(\.amount) == [1_500, 23_900, 17_000, 1_500, 8_000] && rows[4].isRefund && rows[4].payee == "올리브영 & 약국")
        // The same purchase on both holders' cards is two expenses, paid by each.
        let expenses = try entities(ledger, .expense)
        #expect(Set(expenses.compactMap { if case .string(let p)? = $0.value(.payment) { p } else { nil } }) == ["홍길동", "김영희"])
        let again = try await ledger.importFile(
            Array(workbook), fileName: "family.xlsx", format: "xlsx", options: Self.options(), dryRun: false, skipBadRows: true, actor: "t")
        #expect(again.created.isEmpty && again.duplicates.count == 5)
    }

    @Test func hostileWorkbooksAreRefusedWithAReason() async throws {
        for (bytes, expected) in [
            (Data("PK\u{3}\u{4}garbage".utf8), "not an .xlsx"), (Data(), "not an .xlsx"), (Data(repeating: 0, count: 4096), "not an .xlsx"),
        ] {
            #expect { try StatementReader.xlsx(bytes, options: Self.options()) } throws: { ($0 as? StatementError)?.description.contains(expected) == true }
        }
        // A zip that is no workbook, and a workbook naming a sheet it lacks.
        let empty = try Archive(data: Data(), accessMode: .create)
        try empty.addEntry(with: "hello.txt", type: .file, uncompressedSize: Int64(2), provider: { (_: Int64, _: Int) in Data("hi".utf8) })
        #expect { try StatementReader.xlsx(empty.data!, options: Self.options()) } throws: {
            ($0 as? StatementError)?.description.contains("no xl/workbook.xml") == true
        }
        let lying = try Archive(data: Data(), accessMode: .create)
        let workbook = Data(#"<workbook xmlns:r="r"><sheets><sheet name="A" sheetId="1" r:id="rId9"/></sheets></workbook>"#.utf8)
        try lying.addEntry(
            with: "xl/workbook.xml", type: .file, uncompressedSize: Int64(workbook.count),
            provider: { (p: Int64, s: Int) in workbook.subdata(in: Int(p)..<Int(p) + s) })
        #expect { try StatementReader.xlsx(lying.data!, options: Self.options()) } throws: {
            ($0 as? StatementError)?.description.contains("does not hold") == true
        }
        // A CSV of binary noise: neither UTF-8 nor CP949.
        #expect(throws: StatementError.self) {
            try StatementReader.csv([0xFF, 0x00, 0x80, 0x81, 0xFF, 0xFE, 0x00], options: Self.options { $0.encoding = .cp949 })
        }
        // No header anywhere: refused, naming what to do.
        #expect { try StatementReader.csv(Array("a,b\n1,2\n".utf8), options: Self.options()) } throws: {
            ($0 as? StatementError)?.description.contains("--column") == true
        }
    }

    @Test func twoReplicasImportingTheSameStatementApartKeepOneExpensePerRow() async throws {
        let (here, there) = (try ServerFixture(), try ServerFixture())
        let bytes = try StatementEncoding.encodeCP949(Self.cardCSV)
        for fixture in [here, there] {
            _ = try await fixture.service.ledger.importFile(
                bytes, fileName: "card.csv", format: "csv", options: Self.options(), dryRun: false, skipBadRows: false, actor: "t")
        }
        try await here.exchangeBundles(with: there)
        for fixture in [here, there] {
            #expect(try entities(fixture.service.ledger, .expense).count == 5)
            #expect(try fixture.service.ledger.views.imports().count == 1)
            #expect(try fixture.service.views.conflicts(entity: nil).isEmpty)
        }
    }
}

/// The tests import files as the front ends do: the ledger takes rows, `StatementReader` reads
/// the file (issue 30: the ledger knows no file format).
extension Ledger {
    func importFile(
        _ bytes: [UInt8], fileName: String, format: String, options: StatementOptions, dryRun: Bool, skipBadRows: Bool,
        actor: String
    ) async throws -> ImportReport {
        try await importFile(bytes, fileName: fileName, format: format, dryRun: dryRun, skipBadRows: skipBadRows, actor: actor) { bytes in
            try StatementReader.file(bytes, format: format, options: options)
        }
    }
}

extension LedgerViews {
    func exportCSVBytes(from: DateTime?, to: DateTime?) throws -> [UInt8] { try StatementWriter.csv(try exportTable(from: from, to: to)) }
}

extension ImportTests {
    static func post(_ client: some TestClientProtocol, _ uri: String, token: String, bytes: [UInt8], type: String = "text/csv") async throws -> TestResponse {
        var headers: HTTPFields = [.authorization: "Bearer \(token)", .contentType: type]
        headers[.contentLength] = String(bytes.count)
        return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(bytes: bytes))
    }

    @Test func aCardStatementImportedIntoItsAccountNamesIt() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let card = try await client.create("/v1/accounts", #"{"name": "Card", "kind": "card", "openingDate": "2026-01-01"}"#, token: fixture.readWrite)
            let other = try await client.create("/v1/accounts", #"{"name": "Other", "kind": "card", "openingDate": "2026-01-01"}"#, token: fixture.readWrite)
            let statement = Array("Date,Description,Amount\n2026-11-01,Coffee,4500\n2026-11-02,Lunch,9000\n".utf8)
            let imported = try await Self.post(client, "/v1/imports?accountId=\(card)", token: fixture.readWrite, bytes: statement)
            #expect(imported.status == .created && (imported.object["created"] as? [Any])?.count == 2, "\(String(buffer: imported.body))")
            func balance(_ name: String) async throws -> Int? {
                let items = try await client.send(.get, "/v1/balances", token: fixture.readOnly).object["items"] as? [[String: Any]] ?? []
                return items.first { $0["name"] as? String == name }?["balance"] as? Int
            }
            #expect(try await balance("Card") == -13_500)
            // The same statement again, naming another account: the same transactions, nothing new
            // (the import keys are the statement's, scoped by `account` alone).
            let same = try await Self.post(client, "/v1/imports?accountId=\(other)", token: fixture.readWrite, bytes: statement)
            #expect(same.status == .ok && (same.object["created"] as? [Any])?.isEmpty == true, "\(String(buffer: same.body))")
            // The same purchases on another card, said so with `account`: other transactions.
            let again = try await Self.post(client, "/v1/imports?accountId=\(other)&account=other", token: fixture.readWrite, bytes: statement)
            #expect(again.status == .created && (again.object["created"] as? [Any])?.count == 2)
            let (otherBalance, cardBalance) = (try await balance("Other"), try await balance("Card"))
            #expect(otherBalance == -13_500 && cardBalance == -13_500)

            let before = fixture.service.ledger.appendedIndex
            let notID = try await Self.post(client, "/v1/imports?accountId=card", token: fixture.readWrite, bytes: statement)
            #expect(notID.status == .badRequest && notID.object["error"] != nil)
            let missing = try await Self.post(client, "/v1/imports?accountId=\(UUID().uuidString)&account=x", token: fixture.readWrite, bytes: statement)
            #expect(missing.status == .conflict && missing.object["error"] != nil, "\(String(buffer: missing.body))")
            #expect(fixture.service.ledger.appendedIndex == before, "nothing was written")
        }
    }

    @Test func theAPIImportsAStatementOnceAndRefusesWhatItCannotRead() async throws {
        let fixture = try ServerFixture()
        let card = try StatementEncoding.encodeCP949(Self.cardCSV)
        try await fixture.test { client in
            let dry = try await Self.post(client, "/v1/imports?dryRun=true&name=card.csv", token: fixture.readWrite, bytes: card)
            #expect(dry.status == .ok && (dry.object["created"] as? [Any])?.count == 5 && dry.object["importId"] is NSNull)
            #expect(try fixture.service.ledger.views.imports().isEmpty, "a dry run writes nothing")
            let first = try await Self.post(client, "/v1/imports?name=%EC%B9%B4%EB%93%9C.csv", token: fixture.readWrite, bytes: card)
            #expect(first.status == .created && first.object["encoding"] as? String == "cp949", "\(String(buffer: first.body))")
            let again = try await Self.post(client, "/v1/imports", token: fixture.readWrite, bytes: card)
            #expect(again.status == .ok && (again.object["created"] as? [Any])?.isEmpty == true && (again.object["duplicates"] as? [Any])?.count == 5)
            let list = try await client.send(.get, "/v1/imports", token: fixture.readOnly)
            let items = list.object["items"] as? [[String: Any]] ?? []
            #expect(items.count == 1 && items[0]["fileName"] as? String == "카드.csv" && items[0]["count"] as? Int == 5)

            // A bad row: 422 listing it, nothing written; with skipBadRows, the rest.
            let bank = Array("Date,Description,Amount\n2026-11-01,Rent,1000\n2026-11-02,Coffee,abc\n".utf8)
            let refused = try await Self.post(client, "/v1/imports", token: fixture.readWrite, bytes: bank)
            let error = refused.object["error"] as? [String: Any] ?? [:]
            #expect(refused.status == .unprocessableContent && error["code"] as? String == "bad_rows")
            #expect((error["rows"] as? [[String: Any]])?.first?["row"] as? Int == 3)
            #expect(try fixture.service.ledger.views.imports().count == 1)
            let skipping = try await Self.post(client, "/v1/imports?skipBadRows=true", token: fixture.readWrite, bytes: bank)
            #expect(skipping.status == .created && (skipping.object["bad"] as? [Any])?.count == 1)

            // Hostile requests: each 4xx with a JSON error, nothing written.
            let before = try fixture.service.views.projectedIndex()
            for (uri, bytes, status) in [
                ("/v1/imports?bogus=1", card, HTTPResponse.Status.badRequest), ("/v1/imports", [], .badRequest), ("/v1/imports?format=pdf", card, .badRequest),
                ("/v1/imports?mapping=nope", card, .badRequest), ("/v1/imports?currency=krw", card, .badRequest),
                ("/v1/imports?headerRow=-1", card, .badRequest),
                ("/v1/imports?dryRun=yes", card, .badRequest), ("/v1/imports?encoding=latin1", card, .badRequest),
                ("/v1/imports?delimiter=%7C", card, .badRequest),
                ("/v1/imports?account=%01x", card, .badRequest), ("/v1/imports?format=xlsx", card, .badRequest),
                ("/v1/imports", Array("PK\u{3}\u{4}not a zip".utf8), .badRequest), ("/v1/imports?encoding=utf-8", card, .badRequest),
                ("/v1/imports?headerRow=99", card, .badRequest), ("/v1/imports", [0xFF, 0xFE, 0x41], .badRequest),
            ] as [(String, [UInt8], HTTPResponse.Status)] {
                let response = try await Self.post(client, uri, token: fixture.readWrite, bytes: bytes)
                #expect(response.status == status, "\(uri): \(String(buffer: response.body))")
                #expect(response.errorCode != nil, "\(uri)")
            }
            #expect(try await Self.post(client, "/v1/imports", token: fixture.readOnly, bytes: card).status == .forbidden)
            // The data out, for a read token: CSV with a BOM, JSON lines; bad parameters 400.
            let csv = try await client.send(.get, "/v1/export?format=csv&from=2026-11-01&to=2026-12-01", token: fixture.readOnly)
            #expect(
                csv.status == .ok && csv.headers[.contentType] == "text/csv; charset=utf-8"
                    && Array(csv.body.readableBytesView.prefix(3)) == [0xEF, 0xBB, 0xBF])
            #expect(String(buffer: csv.body).split(separator: "\r\n").count == 1 + 5 + 1, "header, the card's five rows and the bank's one")
            let lines = try await client.send(.get, "/v1/export?format=jsonl", token: fixture.readOnly)
            #expect(lines.status == .ok && String(buffer: lines.body).split(separator: "\n").count == 6 + 2, "six expenses and two imports")
            let none = try await client.send(.get, "/v1/export?format=jsonl&from=2030-01-01", token: fixture.readOnly)
            #expect(String(buffer: none.body).split(separator: "\n").count == 2, "only the two imports: no expense from 2030 on")
            #expect(fixture.service.ledger.exportTurns.counts == (0, 0), "each export's turn given back once it was sent")
            for uri in ["/v1/export?format=xml", "/v1/export?from=yesterday", "/v1/export?bogus=1"] {
                let response = try await client.send(.get, uri, token: fixture.readOnly)
                #expect(response.status == .badRequest && response.errorCode != nil, "\(uri)")
            }
            #expect(try fixture.service.views.projectedIndex() == before)
        }
    }
}

extension ImportTests {
    /// An OFX 1.x statement as banks send it: SGML with unclosed tags, Windows-1252 text.
    static let ofx1: [UInt8] = {
        let before = """
            OFXHEADER:100
            DATA:OFXSGML
            VERSION:102
            CHARSET:1252

            <OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0</STATUS></SONRS></SIGNONMSGSRSV1>
            <BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD
            <BANKACCTFROM><BANKID>121000248<ACCTID>1234567<ACCTTYPE>CHECKING</BANKACCTFROM>
            <BANKTRANLIST><DTSTART>20261101
            <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20261102120000[-5:EST]<TRNAMT>-12.50<FITID>20261102-1<NAME>CAF
            """
        let after = """
            CLAIR &amp; CO<MEMO>latte
            <STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20261103<TRNAMT>2500.00<FITID>20261103-1<NAME>PAYROLL
            <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>2026110<TRNAMT>-1.00<FITID>bad-date<NAME>X
            </BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>
            """
        return Array(before.utf8) + [0xC9] + Array(after.utf8)  // É in Windows-1252
    }()

    @Test func ofxStatementsImportEachTransactionByItsFITIDOnce() async throws {
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        let report = try await ledger.importFile(
            Self.ofx1, fileName: "bank.qfx", format: "ofx", options: Self.options(), dryRun: false, skipBadRows: true, actor: "t")
        #expect(report.created.count == 2 && report.bad.map(\.row) == [3])
        let rows = report.created.map(\.row)
        #expect(rows[0].kind == "expense" && rows[0].amount == 1_250 && rows[0].currency == "USD" && rows[0].payee == "CAFÉCLAIR & CO")
        #expect(rows[0].date.description == "2026-11-02T12:00:00-05:00" && rows[0].memo == "latte")
        #expect(rows[1].kind == "income" && rows[1].amount == 250_000 && rows[1].date.description == "2026-11-03T12:00:00+09:00")
        // OFX 2 (XML) of the same account, one transaction again and one new: only the new one.
        let ofx2 = """
            <?xml version="1.0" encoding="UTF-8"?><?OFX OFXHEADER="200" VERSION="220"?>
            <OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD</CURDEF><BANKACCTFROM><BANKID>121000248</BANKID><ACCTID>1234567</ACCTID></BANKACCTFROM>
            <BANKTRANLIST><STMTTRN><TRNTYPE>CREDIT</TRNTYPE><DTPOSTED>20261103</DTPOSTED><TRNAMT>2500.00</TRNAMT><FITID>20261103-1</FITID><NAME>PAYROLL</NAME></STMTTRN>
            <STMTTRN><TRNTYPE>DEBIT</TRNTYPE><DTPOSTED>20261104093000[+9:KST]</DTPOSTED><TRNAMT>-3.99</TRNAMT><FITID>20261104-7</FITID><NAME>편의점</NAME></STMTTRN>
            </BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>
            """
        let second = try await ledger.importFile(
            Array(ofx2.utf8), fileName: "bank.ofx", format: "ofx", options: Self.options(), dryRun: false, skipBadRows: false, actor: "t")
        #expect(second.duplicates.count == 1 && second.created.map(\.row.payee) == ["편의점"])
        #expect(second.created.first?.row.date.description == "2026-11-04T09:30:00+09:00")
        #expect(throws: StatementError.self) { try OFXReader.read(Array("hello".utf8), options: Self.options()) }
    }
}

extension ImportTests {
    /// What an expense is, apart from its id and import bookkeeping: the values an export carries.
    static func comparable(_ ledger: Ledger) throws -> [String] {
        let paths = LedgerViews.categoryPaths(try ledger.views.categoryTree().map(\.category))
        var filter = ExpenseFilter()
        filter.limit = 100_000
        let rows = try ledger.projector.database.read { try ProjectionQueries.expenses($0, filter) }
        return rows.map { (row: ExpenseRow) -> String in
            let category: String = row.categoryId.flatMap { paths[$0] } ?? "-"
            let fields: [String] = [
                row.date, row.kind, String(row.amount), row.currency, category, row.payee ?? "-", row.payment ?? "-", row.memo ?? "-",
                row.tags.joined(separator: "|"),
            ]
            return fields.joined(separator: " ¦ ")
        }.sorted()
    }

    @Test func anExportImportedIntoAnEmptyReplicaGivesTheSameExpenses() async throws {
        let source = try ServerFixture()
        let ledger = source.service.ledger
        var rng = SplitMix64(seed: 2026)
        func category(_ name: String, parent: UUID? = nil) async throws -> UUID {
            var properties: PropertyMap = [.name: .string(name), .kind: .string("expense")]
            if let parent { properties[.parentId] = .uuid(parent) }
            let id = UUID()
            _ = try await ledger.create(.category, id: id, properties, actor: "t")
            return id
        }
        let food = try await category("식비")
        let categories = [food, try await category("점심, 저녁 \"외식\"", parent: food), try await category("Transport"), nil]
        for step in 0..<300 {
            let currency = ["KRW", "USD", "JPY", "KWD"].randomElement(using: &rng)!
            var properties: PropertyMap = [
                .kind: .string(step % 7 == 0 ? "income" : "expense"), .amount: .int(Int64.random(in: 1...9_999_999_999, using: &rng)),
                .currency: .string(currency), .repeat: .string("none"),
                .date: .dateTime(
                    DateTime(
                        epochMillis: 1_767_225_600_000 + Int64.random(in: 0...(400 * 86_400_000), using: &rng),
                        offsetMinutes: [540, 0, -300, 330].randomElement(using: &rng)!)),
            ]
            if let category = categories.randomElement(using: &rng)! { properties[.categoryId] = .uuid(category) }
            if Bool.random(using: &rng) { properties[.payee] = .string(["김밥천국", "Café \"Rouge\", Inc.", "=SUM(A1)", "a;b"].randomElement(using: &rng)!) }
            if Bool.random(using: &rng) { properties[.payment] = .string(["카드", "cash"].randomElement(using: &rng)!) }
            if Bool.random(using: &rng) {
                properties[.memo] = .string(["여러 줄\n메모", "comma, here", "  "].randomElement(using: &rng)!.trimmingCharacters(in: .whitespaces))
            }
            if properties[.memo] == .string("") { properties[.memo] = nil }
            if Bool.random(using: &rng) {
                properties[.tags] = .strings(Array(["work", "가족", "trip 2026"].shuffled(using: &rng).prefix(Int.random(in: 1...3, using: &rng))).sorted())
            }
            _ = try await ledger.create(.expense, properties, actor: "t")
        }
        let csv = try ledger.views.exportCSVBytes(from: nil, to: nil)
        #expect(csv.starts(with: [0xEF, 0xBB, 0xBF]), "a BOM for spreadsheet programs")
        let text = String(decoding: csv, as: UTF8.self)
        #expect(text.contains(",'=SUM(A1),") && !text.contains(",=SUM(A1),"), "no cell a spreadsheet would run as a formula")
        let target = try ServerFixture()
        let report = try await target.service.ledger.importFile(
            csv, fileName: "export.csv", format: "csv", options: Self.options(), dryRun: true, skipBadRows: false, actor: "t")
        #expect(report.layouts.map(\.layout) == ["tally-export"] && report.created.count == 300 && report.bad.isEmpty, "\(report.bad.prefix(3))")
        guard report.bad.isEmpty else { return }
        _ = try await target.service.ledger.importFile(
            csv, fileName: "export.csv", format: "csv", options: Self.options(), dryRun: false, skipBadRows: false, actor: "t")
        let (before, after) = (try Self.comparable(ledger), try Self.comparable(target.service.ledger))
        #expect(before == after)
        #expect(before.count == 300)
        // A second import of the same export changes nothing; a range export holds only its range.
        #expect(
            try await target.service.ledger.importFile(
                csv, fileName: "export.csv", format: "csv", options: Self.options(), dryRun: false, skipBadRows: false, actor: "t"
            ).created.isEmpty)
        let january = try ledger.views.exportCSVBytes(from: DateTime(iso8601: "2026-01-01T00:00:00Z"), to: DateTime(iso8601: "2026-02-01T00:00:00Z"))
        let lines = String(decoding: january.dropFirst(3), as: UTF8.self)
        #expect(!lines.contains("2025-") && lines.hasPrefix("date,kind,amount,currency,category"))
        // JSON lines: one object per live entity, every one parseable.
        let jsonl = try ledger.views.exportJSONLines()
        let objects = String(decoding: jsonl, as: UTF8.self).split(separator: "\n").map {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.count == 303 && objects.allSatisfy { $0?["type"] != nil && $0?["id"] != nil })
    }
}

extension ImportTests {
    @Test func rulesCategoriseAndTagImportedRowsTheLongestMatchWinning() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            func post(_ path: String, _ body: String) async throws -> TestResponse { try await client.send(.post, path, token: fixture.readWrite, json: body) }
            let cafe = try await post("/v1/categories", #"{"name": "Cafe"}"#).object["id"] as? String ?? ""
            let food = try await post("/v1/categories", #"{"name": "Food"}"#).object["id"] as? String ?? ""
            for body in [
                #"{"pattern": "스타벅스", "categoryId": "\#(cafe)", "tags": ["coffee"]}"#, #"{"pattern": "스타*", "match": "matches", "tags": ["star"]}"#,
                #"{"pattern": "김밥", "categoryId": "\#(food)"}"#,
            ] {
                #expect(try await post("/v1/rules", body).status == .created, "\(body)")
            }
            let rules = try await client.send(.get, "/v1/rules", token: fixture.readOnly)
            #expect((rules.object["items"] as? [[String: Any]])?.count == 3)
            // Refused, naming the field; nothing written.
            for (body, status) in [
                (#"{}"#, HTTPResponse.Status.badRequest), (#"{"pattern": ""}"#, .badRequest), (#"{"pattern": "x", "match": "regex"}"#, .badRequest),
                (#"{"pattern": "x", "categoryId": "\#(UUID().uuidString)"}"#, .conflict),
                (#"{"pattern": "\#(String(repeating: "가", count: 200))"}"#, .badRequest), (#"{"pattern": "x", "tags": "coffee"}"#, .badRequest),
            ] {
                let response = try await post("/v1/rules", body)
                #expect(response.status == status && response.errorCode != nil, "\(body.prefix(60)): \(response.status)")
            }
            let report = try await fixture.service.ledger.importFile(
                try StatementEncoding.encodeCP949(Self.cardCSV), fileName: "card.csv", format: "csv",
                options: Self.options(), dryRun: false, skipBadRows: false, actor: "t")
            let byPayee = Dictionary(grouping: try entities(fixture.service.ledger, .expense)) { entity -> String in
                if case .string(let payee)? = entity.value(.payee) { payee } else { "" }
            }
            #expect(report.created.count == 5)
            for starbucks in byPayee["스타벅스 강남점"] ?? [] {
                #expect(starbucks.value(.categoryId) == .uuid(UUID(uuidString: cafe)!))
                let tags: [String] = if case .strings(let tags)? = starbucks.value(.tags) { tags } else { [] }
                #expect(tags.contains("coffee") && !tags.contains("star"), "the longer pattern wins: \(tags)")
            }
            #expect(byPayee["김밥천국"]?.first?.value(.categoryId) == .uuid(UUID(uuidString: food)!))
            #expect(byPayee["이마트"]?.first?.value(.categoryId) == nil, "no rule, no category")
        }
    }

    @Test func wildcardRulesMatchWholeTextsInLinearTime() async throws {
        func rule(_ pattern: String, wildcard: Bool) -> CategorisationRule {
            var entity = LedgerState.Entity(
                first: Event(
                    origin: ReplicaID(string: "00000001-0000-0000-0000-000000000000")!, sequence: 1,
                    timestamp: HybridTimestamp(millis: 1, counter: 0), actor: "t", entityType: .rule, entityID: .uuid(UUID()),
                    operation: .create, properties: [.pattern: .string(pattern), .match: .string(wildcard ? "matches" : "contains")],
                    previousHash: .zero))
            _ = entity.apply(
                Event(
                    origin: ReplicaID(string: "00000001-0000-0000-0000-000000000000")!, sequence: 1, timestamp: HybridTimestamp(millis: 1, counter: 0),
                    actor: "t", entityType: .rule, entityID: entity.id, operation: .create,
                    properties: [.pattern: .string(pattern), .match: .string(wildcard ? "matches" : "contains")], previousHash: .zero))
            return CategorisationRule(entity)!
        }
        #expect(rule("*마트*", wildcard: true).matches("이마트 역삼점") && !rule("마트*", wildcard: true).matches("이마트"))
        #expect(rule("gs25 ??점", wildcard: true).matches("GS25 역삼점") && !rule("gs25 ???점", wildcard: true).matches("GS25 역삼점"))
        #expect(rule("STAR", wildcard: false).matches("Starbucks") && !rule("starz", wildcard: false).matches("Starbucks"))
        let nasty = rule(String(repeating: "*a", count: 40) + "*b", wildcard: true)
        #expect(!nasty.matches(String(repeating: "a", count: 120)), "answers at all: exponential backtracking would not, here")
    }
}

extension ImportTests {
    /// The property: random expenses in four currencies, random rates set both ways on random
    /// days; a month's totals in KRW equal a brute-force computation of the documented rule,
    /// and every expense without a rate is listed.
    @Test(arguments: 0..<8) func summariesInOneCurrencyMatchAnIndependentComputation(seed: Int) async throws {
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        var rng = SplitMix64(seed: UInt64(seed) &+ 77)
        let day0 = DateTime(iso8601: "2026-03-01T12:00:00+09:00")!
        var rates: [(from: String, to: String, rate: Decimal, day: Int, id: String)] = []
        for _ in 0..<Int.random(in: 3...12, using: &rng) {
            let (from, to) = [("USD", "KRW"), ("KRW", "USD"), ("JPY", "KRW"), ("EUR", "KRW"), ("KRW", "JPY")].randomElement(using: &rng)!
            let text = "\(Int.random(in: 1...2_000, using: &rng)).\(Int.random(in: 0...99, using: &rng))"
            let offset = Int.random(in: 0...30, using: &rng)
            let day = DateTime(epochMillis: day0.epochMillis + Int64(offset) * 86_400_000, offsetMinutes: 540)
            let entity = try await ledger.setRate(from: from, to: to, rate: text, day: day, actor: "t")
            guard case .string(let id)? = entity.member("id") else { continue }
            rates.removeAll { $0.id == id }
            rates.append((from, to, Decimal(string: FieldKind.normalDecimal(text)!)!, day.localDayNumber, id))
        }
        var expenses: [(kind: String, amount: Int64, currency: String, day: Int, id: String)] = []
        for _ in 0..<60 {
            let currency = ["KRW", "USD", "JPY", "EUR", "GBP"].randomElement(using: &rng)!
            let date = DateTime(
                epochMillis: day0.epochMillis + Int64.random(in: -2...30, using: &rng) * 86_400_000 + Int64.random(in: 0...3_600_000, using: &rng),
                offsetMinutes: 540)
            guard date.localMonth == "2026-03" else { continue }
            let kind = Bool.random(using: &rng) ? "expense" : "income"
            let amount = Int64.random(in: 1...50_000_000, using: &rng)
            let (entity, _) = try await ledger.create(
                .expense, [.kind: .string(kind), .amount: .int(amount), .currency: .string(currency), .date: .dateTime(date), .repeat: .string("none")],
                actor: "t")
            guard case .string(let id)? = entity.member("id") else { continue }
            expenses.append((kind, amount, currency, date.localDayNumber, id))
        }
        // Brute force: for each expense, every rate of its pair either way on or before its day;
        // the latest day wins, a direct rate over an inverse one on the same day, then the greatest id.
        var (income, expense) = (Int64(0), Int64(0))
        var missing: Set<String> = []
        for item in expenses {
            var best: (day: Int, direct: Bool, id: String, rate: Decimal)?
            if item.currency == "KRW" { best = (Int.max, true, "", 1) }
            for rate in rates where rate.day <= item.day {
                let direct = rate.from == item.currency && rate.to == "KRW"
                guard direct || (rate.from == "KRW" && rate.to == item.currency) else { continue }
                let candidate = (rate.day, direct, rate.id, direct ? rate.rate : 1 / rate.rate)
                if best.map({ (candidate.0, candidate.1 ? 1 : 0, candidate.2) > ($0.day, $0.direct ? 1 : 0, $0.id) }) ?? true { best = candidate }
            }
            guard let rate = best?.rate else { missing.insert(item.id); continue }
            let digits = ["KRW": 0, "USD": 2, "JPY": 0, "EUR": 2][item.currency]!
            var value = Decimal(item.amount) * rate / pow(Decimal(10), digits)
            var rounded = Decimal()
            NSDecimalRound(&rounded, &value, 0, .plain)
            let minor = NSDecimalNumber(decimal: rounded).int64Value
            if item.kind == "income" { income += minor } else { expense += minor }
        }
        let (expectedIncome, expectedExpense, expectedMissing, count) = (income, expense, missing, expenses.count)
        try await fixture.test { client in
            let (income, expense, missing) = (expectedIncome, expectedExpense, expectedMissing)
            let response = try await client.send(.get, "/v1/summary?month=2026-03&in=KRW", token: fixture.readOnly)
            let converted = response.object["in"] as? [String: Any] ?? [:]
            #expect(converted["income"] as? Int64 == income && converted["expense"] as? Int64 == expense, "seed \(seed): \(converted) vs \(income), \(expense)")
            let unconverted = Set((converted["unconverted"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
            #expect(unconverted == missing && converted["unconvertedCount"] as? Int == missing.count)
            #expect(converted["converted"] as? Int == count - missing.count)
        }
    }

    @Test func badRatesAndCurrenciesAreRefused() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            for body in [
                #"{"currency": "USD", "toCurrency": "KRW", "rate": "abc", "date": "2026-03-01"}"#,
                #"{"currency": "USD", "toCurrency": "KRW", "rate": "-1", "date": "2026-03-01"}"#,
                #"{"currency": "USD", "toCurrency": "KRW", "rate": "0", "date": "2026-03-01"}"#,
                #"{"currency": "USD", "toCurrency": "KRW", "rate": 1e5, "date": "2026-03-01"}"#,
                #"{"currency": "USD", "toCurrency": "KRW", "rate": "1234567890123.5", "date": "2026-03-01"}"#,
                #"{"currency": "usd", "toCurrency": "KRW", "rate": "1", "date": "2026-03-01"}"#,
                #"{"currency": "USD", "toCurrency": "KRW", "rate": "1"}"#, #"{"currency": "USD", "toCurrency": "KRW", "rate": true, "date": "2026-03-01"}"#,
            ] {
                let response = try await client.send(.post, "/v1/rates", token: fixture.readWrite, json: body)
                #expect(response.status == .badRequest && response.errorCode != nil, "\(body): \(response.status)")
            }
            let good = try await client.send(
                .post, "/v1/rates", token: fixture.readWrite, json: #"{"currency": "USD", "toCurrency": "KRW", "rate": 1385.20, "date": "2026-03-01"}"#)
            #expect(good.status == .created && good.object["rate"] as? String == "1385.2", "normal form")
            for uri in ["/v1/summary?month=2026-03&in=krw", "/v1/summary?month=2026-03&in=KRWX", "/v1/summary?month=2026-03&in="] {
                #expect(try await client.send(.get, uri, token: fixture.readOnly).status == .badRequest, "\(uri)")
            }
        }
        await #expect(throws: ValidationError.self) { try await fixture.service.ledger.setRate(from: "KRW", to: "KRW", rate: "1", day: .nowHere, actor: "t") }
        #expect { try RateTable.read(Array("date,from,to,rate\n2026-03-01,USD,KRW,1385.2\n2026-03-02,USD,KRW,lots\n".utf8)) } throws: {
            ($0 as? StatementError)?.description.contains("row 3") == true
        }
        let table = try RateTable.read(Array("Date,From,To,Rate\n2026.03.01,usd,krw,1385.2\n20260302,JPY,KRW,9.41\n".utf8))
        #expect(table.map(\.rate) == ["1385.2", "9.41"] && table.map(\.from) == ["USD", "JPY"])
        #expect(try await fixture.service.ledger.setRates(table.map { ($0.from, $0.to, $0.rate, $0.day) }, actor: "t") == 2)
        #expect(try fixture.service.views.rates().count == 3, "2026-03-01 USD→KRW set again replaces, not adds")
    }
}

extension ImportTests {
    @Test func aSavedMappingReadsALayoutNoBuiltInKnows() async throws {
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        let csv = Array("우리카드\n사용일시,사용처,메모,결제금액\n2026/11/05 08:10,편의점,아침,\"3,000\"\n2026/11/06 19:00,식당,,\"21,000\"\n".utf8)
        #expect(throws: StatementError.self) { try StatementReader.csv(csv, options: Self.options()) }
        let woori = try SavedMapping.setting(
            "woori-card", columns: [(.date, "사용일시", nil), (.payee, "사용처", nil), (.memo, "메모", nil), (.amount, nil, 4)], headerRow: 2)
        _ = try await ledger.setSetting(woori.key, json: woori.json, actor: "t")
        #expect(throws: ValidationError.self) { try SavedMapping.setting("samsung-card", columns: [(.date, "x", nil)], headerRow: nil) }
        #expect(throws: ValidationError.self) { try SavedMapping.setting("bad name!", columns: [(.date, "x", nil)], headerRow: nil) }
        try await fixture.test { client in
            let response = try await Self.post(client, "/v1/imports?mapping=woori-card", token: fixture.readWrite, bytes: csv)
            #expect(response.status == .created, "\(String(buffer: response.body))")
            let created = response.object["created"] as? [[String: Any]] ?? []
            #expect(created.map { $0["amount"] as? Int } == [3_000, 21_000] && created.map { $0["payee"] as? String } == ["편의점", "식당"])
            #expect((created.first?["date"] as? String)?.hasPrefix("2026-11-05T08:10:00") == true, "the time as written, local time of the service")
            #expect((response.object["layouts"] as? [[String: Any]])?.first?["layout"] as? String == "woori-card")
            let unknown = try await Self.post(client, "/v1/imports?mapping=nobody", token: fixture.readWrite, bytes: csv)
            #expect(unknown.status == .badRequest && (unknown.object["error"] as? [String: Any])?["field"] as? String == "mapping")
        }
    }
}

/// What a hostile review found (each once a trap, a hang or a wrong answer).
extension ImportTests {
    @Test func hostileFilesFoundInReviewAreRefusedOrReadRight() async throws {
        // An OFX offset that overflowed: a bad row, no trap. Several accounts: each its own.
        let ofx =
            "<OFX><STMTRS><CURDEF>USD<BANKACCTFROM><ACCTID>A</BANKACCTFROM><BANKTRANLIST><STMTTRN><DTPOSTED>20261121120000[18.9223372036854775807:X]<TRNAMT>-1<FITID>1"
            + "<STMTTRN><DTPOSTED>20261121[-0.30]<TRNAMT>-1,50<FITID>2<CURRENCY><CURSYM>EUR</CURRENCY></BANKTRANLIST></STMTRS>"
            + "<STMTRS><BANKACCTFROM><ACCTID>B</BANKACCTFROM><BANKTRANLIST><STMTTRN><DTPOSTED>20261121<TRNAMT>-1,50<FITID>2</BANKTRANLIST></STMTRS></OFX>"
        let statement = try OFXReader.read(Array(ofx.utf8), options: Self.options())
        #expect(statement.bad.map(\.row) == [1] && statement.rows.count == 2)
        #expect(statement.rows.first?.date.offsetMinutes == -30 && statement.rows.first?.amount == 150 && statement.rows.first?.currency == "EUR")
        #expect(Set(statement.rows.map(\.importKey)).count == 2, "FITID 2 of account A and of account B are two transactions")
        // Workbooks: deep nesting, a directory pointing past the end, invalid UTF-8 in a name.
        let deep = try Self.rawWorkbook(sheet: "<worksheet><sheetData>" + String(repeating: "<row>", count: 5_000) + "</sheetData></worksheet>")
        #expect { try StatementReader.xlsx(deep, options: Self.options()) } throws: { ($0 as? StatementError)?.description.contains("nests deeper") == true }
        var truncated = try Self.rawWorkbook(sheet: "<worksheet><sheetData/></worksheet>")
        let end = truncated.count - 22
        truncated[end + 16] = 0xFF; truncated[end + 17] = 0xFF; truncated[end + 18] = 0x00  // the directory's offset past the end
        #expect { try StatementReader.xlsx(truncated, options: Self.options()) } throws: {
            ($0 as? StatementError)?.description.contains("not an .xlsx") == true
        }
        let badName = try Self.rawWorkbook(sheet: "<worksheet><sheetData><row><c\u{FFFD} r=\"A1\"/></row></sheetData></worksheet>", replacingFFFD: true)
        #expect(throws: StatementError.self) { try StatementReader.xlsx(badName, options: Self.options()) }
        // A dated row whose payee is TOTAL is a purchase; a dateless one is a total.
        let totals = try StatementReader.csv(Array("Date,Description,Amount\n2026-11-01,TOTAL,5000\n,Total,5000\n".utf8), options: Self.options())
        #expect(totals.rows.map(\.payee) == ["TOTAL"] && totals.skipped.map(\.reason) == ["total"] && totals.layouts.map(\.layout) == ["generic"])
        // A cancellation carrying its purchase's approval number is its own transaction.
        let card = try StatementReader.csv(
            Array("이용일,가맹점,이용금액,승인번호\n2026.11.01,서점,\"18,000\",777\n2026.11.03,서점,\"-18,000\",777\n".utf8), options: Self.options())
        #expect(Set(card.rows.map(\.importKey)).count == 2)
        // The same file read under two time zones gives the same keys.
        let csv = Array("Date,Description,Amount\n2026-11-01 09:00,Cafe,5000\n".utf8)
        let seoul = try StatementReader.csv(csv, options: Self.options()).rows.map(\.importKey)
        let utc = try StatementReader.csv(csv, options: Self.options { $0.timeZone = TimeZone(identifier: "UTC")! }).rows.map(\.importKey)
        #expect(seoul == utc)
        // A payee with a control character is a bad row (before anything is written).
        #expect(try StatementReader.csv(Array("Date,Description,Amount\n2026-11-01,a\u{1}b,5\n".utf8), options: Self.options()).bad.count == 1)
    }

    /// Issue 29: text an older event may hold with an unpaired directional control leaves in a
    /// CSV without it (it would reorder the cells after it in a spreadsheet); paired ones stay.
    @Test func exportedCellsDropUnpairedDirectionalControls() async throws {
        let bytes = try StatementWriter.csv(
            header: ["payee", "memo"], textColumns: [0, 1],
            rows: [["\u{202E}evil\u{202D}RTL", "\u{2067}שלום\u{2069}"], ["\u{202E}=1+1", "x"]])
        let text = String(decoding: bytes.dropFirst(3), as: UTF8.self)
        #expect(text.contains("evilRTL,\u{2067}שלום\u{2069}"), "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        #expect(text.contains("'=1+1"), "a formula behind an unpaired control is still guarded")
    }

    @Test func anExportImportedIntoItsOwnLedgerChangesNothing() async throws {
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        for amount in [1_000, 2_000] as [Int64] {
            _ = try await ledger.create(
                .expense, [.kind: .string("expense"), .amount: .int(amount), .currency: .string("KRW"), .date: .dateTime(.nowHere), .repeat: .string("none")],
                actor: "t")
        }
        let again = try await ledger.importFile(
            try ledger.views.exportCSVBytes(from: nil, to: nil), fileName: "mine.csv", format: "csv", options: Self.options(), dryRun: false,
            skipBadRows: false, actor: "t")
        #expect(again.created.isEmpty && again.duplicates.count == 2)
    }

    /// A minimal workbook whose one sheet is `sheet` (with `\u{FFFD}` written as the byte 0xFF if asked).
    static func rawWorkbook(sheet: String, replacingFFFD: Bool = false) throws -> Data {
        let archive = try Archive(data: Data(), accessMode: .create)
        func add(_ path: String, _ data: Data) throws {
            try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) { (position: Int64, size: Int) in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        try add("xl/workbook.xml", Data(#"<workbook xmlns:r="r"><sheets><sheet name="A" sheetId="1" r:id="rId1"/></sheets></workbook>"#.utf8))
        try add("xl/_rels/workbook.xml.rels", Data(#"<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>"#.utf8))
        var bytes = Array(sheet.utf8)
        if replacingFFFD, let at = bytes.firstRange(of: [0xEF, 0xBF, 0xBD]) { bytes.replaceSubrange(at, with: [0xFF]) }
        try add("xl/worksheets/sheet1.xml", Data(bytes))
        return archive.data!
    }
}

/// SHA-256 hex of bytes (what an import records as the file's digest).
enum SHA256Hex {
    static func of(_ bytes: [UInt8]) -> String {
        var hasher = Crypto.SHA256()
        hasher.update(data: bytes)
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}

import Crypto

extension ImportTests {
    /// A ledger may hold any number of categorisation rules, and a wildcard rule costs up to a
    /// cell's text × its pattern a row (here ~260,000 steps: a memo of 4,096 `a`s against `*`
    /// and 62 `a`s and a `b`): an import matches its rows until a deadline, then is refused
    /// whole with the reason, nothing written. (Without the deadline, a dry run of these 400
    /// rows took 264 s of both cores.) Rows the ledger holds already are not matched.
    @Test func matchingRowsAgainstCostlyRulesIsRefusedAtItsDeadline() async throws {
        let folder = TemporaryDirectory("tally-import-rules-deadline")
        let ledger = try Ledger(
            directory: try DataDirectory.create(path: folder.file("ledger"), name: "ledger"), limits: LedgerLimits(categorisingTime: .seconds(1)))
        defer { ledger.close() }
        let day = try #require(DateTime(iso8601: "2026-11-01T00:00:00Z"))
        func statement(_ key: String, categoryPath: [String]? = nil) -> StatementContents {
            let rows = (1...400).map { number in
                StatementRow(
                    sheet: "", row: number, date: day, amount: Int64(number), kind: "expense", isRefund: false,
                    currency: "KRW", payee: "shop", memo: String(repeating: "a", count: 4_096), reference: nil, categoryPath: categoryPath,
                    importKey: "\(key) \(number)")
            }
            return StatementContents(rows: rows, skipped: [], bad: [], layouts: [], encoding: nil)
        }
        // Imported before there were rules: held, so not matched when imported again.
        let held = statement("held")
        #expect(
            try await ledger.importStatement(held, fileName: "h.csv", format: "csv", digest: "h", dryRun: false, skipBadRows: false, actor: "t").created.count
                == 400)
        let pattern = "*" + String(repeating: "a", count: 62) + "b"
        for _ in 0..<50 {
            _ = try await ledger.create(.rule, [.pattern: .string(pattern), .match: .string("matches"), .tags: .strings(["costly"])], actor: "t")
        }
        let again = try await ledger.importStatement(held, fileName: "h.csv", format: "csv", digest: "h", dryRun: false, skipBadRows: false, actor: "t")
        #expect(again.created.isEmpty && again.duplicates.count == 400, "duplicates are not matched: in time")

        let rows = statement("row", categoryPath: ["New", "Costly"]).rows
        for dryRun in [true, false] {
            let started = ContinuousClock.now
            do {
                _ = try await ledger.importStatement(
                    statement("row", categoryPath: ["New", "Costly"]), fileName: "a.csv", format: "csv", digest: "d", dryRun: dryRun, skipBadRows: false,
                    actor: "t")
                Issue.record("imported")
            } catch let error as ValidationError {
                #expect(error.message.contains("categorisation rules took longer than"), "\(error)")
            }
            #expect(ContinuousClock.now - started < .seconds(8), "refused near its deadline")
        }
        #expect(try ledger.views.store.liveEntities(.expense).count == 400, "nothing written")
        #expect(try ledger.views.store.liveEntities(.category).isEmpty, "not even the rows' new categories")

        // A short row is matched in time, and gets its rule's tag.
        var short = rows[0]
        short.memo = String(repeating: "a", count: 62) + "b"
        let kept = try await ledger.importStatement(
            StatementContents(rows: [short], skipped: [], bad: [], layouts: [], encoding: nil),
            fileName: "b.csv", format: "csv", digest: "e", dryRun: false, skipBadRows: false, actor: "t")
        #expect(kept.created.count == 1)
        #expect(try ledger.views.store.liveEntities(.expense).filter { $0.value(.tags) == .strings(["costly"]) }.count == 1)
    }
}
