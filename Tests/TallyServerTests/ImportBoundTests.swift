import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TallyCore
@testable import TallyImport
@testable import TallyLedger
import TallyTestSupport
import ZIPFoundation

/// Issue 29: what reading a statement may cost — columns per row, bytes per cell, time — and
/// how many imports one ledger reads at once.
@Suite struct ImportBoundTests {
    static func csv(_ text: String, _ configure: (inout StatementOptions) -> Void = { _ in }) throws(StatementError) -> StatementContents {
        try StatementReader.csv(Array(text.utf8), options: ImportTests.options(configure))
    }

    @Test func aRowOfTooManyColumnsOrACellOfTooManyBytesIsRefusedNamingTheLimit() throws {
        let wideHeader = "date,amount," + (0..<StatementBounds.maxColumns).map { "c\($0)" }.joined(separator: ",")
        #expect { try Self.csv(wideHeader + "\n2026-11-01,100\n") } throws: {
            "\($0)".contains("at most \(StatementBounds.maxColumns)") && "\($0)".contains("row 1")
        }
        let bigCell = "date,amount,memo\n2026-11-01,100,\"" + String(repeating: "가", count: 2_000) + "\"\n"
        #expect { try Self.csv(bigCell) } throws: { "\($0)".contains("at most \(StatementBounds.maxCellBytes)") && "\($0)".contains("row 2 column 3") }
        // Within the bounds: delimiters and line breaks inside quotes are a cell's text.
        let fits =
            "date,amount,memo," + (3..<StatementBounds.maxColumns).map { "c\($0)" }.joined(separator: ",")
            + "\n2026-11-01,100,\"a, \"\"quoted\"\"\nline\"" + String(repeating: ",", count: StatementBounds.maxColumns - 3) + "\n"
        let statement = try Self.csv(fits)
        #expect(statement.rows.count == 1 && statement.rows[0].memo == "a, \"quoted\"\nline")
        // The same bounds hold for rows from a workbook (or any sheet).
        let sheet = StatementSheet(name: "Sheet1", rows: [(1, ["date", "amount"] + Array(repeating: "x", count: StatementBounds.maxColumns))])
        #expect { try StatementReader.read([sheet], options: ImportTests.options(), serialDays: true) } throws: { "\($0)".contains("sheet 'Sheet1' row 1") }
    }

    /// Found by a hostile run: 9 MB of blank lines (3,000,000 rows of ",,") made a report of
    /// 131 MB and held 3.8 GB. More blank, total or unreadable rows than `maxNotedRows` are
    /// refused, not listed; fewer are listed as before.
    @Test func aFileOfBlankOrUnreadableRowsIsRefusedNotListed() throws {
        let blank = "date,amount,payee\n" + String(repeating: ",,\n", count: StatementReader.maxNotedRows + 1)
        #expect { try Self.csv(blank) } throws: { "\($0)".contains("blank, totals or unreadable") }
        let bad =
            "date,amount,payee\n" + String(repeating: "x,y,z\n", count: StatementReader.maxNotedRows / 2 + 1)
            + String(repeating: ",,\n", count: StatementReader.maxNotedRows / 2)
        #expect { try Self.csv(bad) } throws: { "\($0)".contains("blank, totals or unreadable") }
        let fine = try Self.csv("date,amount,payee\n" + String(repeating: ",,\n", count: 1_000) + "2026-11-01,1000,x\n")
        #expect(fine.skipped.count == 1_000 && fine.rows.count == 1)
    }

    /// Issue 29's review: the pre-check read quotes differently from CSV.swift (a `"` inside
    /// an unquoted cell is text), so columns and a giant cell hid from it; and a CR-only file
    /// was one long row.
    @Test func thePreCheckReadsQuotesAndLineEndsAsTheParserDoes() throws {
        let hidden = String(repeating: "a\"" + String(repeating: ",", count: 300) + "a\",", count: 2)
        #expect { try Self.csv("date,amount\n" + hidden + "\n") } throws: { "\($0)".contains("row 2 has more than \(StatementBounds.maxColumns) columns") }
        let giant = "date,amount,memo\n2026-11-01,1,x\"" + String(repeating: "y", count: 5_000) + "\n"
        #expect { try Self.csv(giant) } throws: { "\($0)".contains("row 2 column 3 holds more than") }
        // A lone quote inside a quoted cell (`"a"x`): CSV.swift reads on inside the quotes, across lines.
        let lone = "date,amount,memo\n2026-11-01,1,\"a\"x\n" + String(repeating: "y,\n", count: 2_000) + "\"\n"
        #expect { try Self.csv(lone) } throws: { "\($0)".contains("row 2 column 3 holds more than") }
        let unclosed = "date,amount,memo\n2026-11-01,1,\"" + String(repeating: "y,\n", count: 2_000)
        #expect { try Self.csv(unclosed) } throws: { "\($0)".contains("row 2 column 3") }
        let rows = (1...300).map { "2026-11-01,\($0)" }
        #expect(try Self.csv("date,amount\r" + rows.joined(separator: "\r") + "\r").rows.count == 300, "CR line ends")
        #expect(try Self.csv("date,amount\r\n" + rows.joined(separator: "\r\n")).rows.count == 300, "CR LF line ends")
    }

    /// A statement's own unpaired directional controls are dropped, not a reason to refuse it
    /// (the ledger refuses text holding one; the row is a bank's text, not a person's).
    @Test func unpairedControlsInAStatementAreDropped() throws {
        let statement = try Self.csv("date,amount,memo\n2026-11-01,100,card\u{202E} payment\n")
        #expect(statement.rows.first?.memo == "card payment")
    }

    /// A workbook of one sheet holding `rowsXML`.
    static func workbook(_ rowsXML: String) throws -> Data {
        let archive = try Archive(data: Data(), accessMode: .create)
        func add(_ path: String, _ xml: String) throws {
            let data = Data(xml.utf8)
            try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) { (position: Int64, size: Int) in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        let main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
            relationships = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
        try add("xl/worksheets/sheet1.xml", #"<worksheet xmlns="\#(main)"><sheetData>\#(rowsXML)</sheetData></worksheet>"#)
        try add(
            "xl/workbook.xml", #"<workbook xmlns="\#(main)" xmlns:r="\#(relationships)"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>"#)
        try add(
            "xl/_rels/workbook.xml.rels",
            #"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="\#(relationships)/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#
        )
        return archive.data!
    }

    /// Issue 29's review: a 6 KB workbook of 100,000 rows each naming one far-right cell took
    /// 2 GB as XMLCoder's tree and padded rows. Elements are counted before XMLCoder parses,
    /// and padded cells as rows are built.
    @Test func aWorkbookOfManyTinyRowsIsRefusedBeforeItIsBuilt() throws {
        let padded = try Self.workbook(String(repeating: #"<row><c r="IV1"/></row>"#, count: 20_000))
        #expect(padded.count < 64 << 10)
        #expect { try StatementReader.xlsx(padded, options: ImportTests.options()) } throws: { "\($0)".contains("more than \(WorkbookReader.maxCells) cells") }
        let many = try Self.workbook(String(repeating: "<row><c/></row>", count: 150_000))
        #expect { try StatementReader.xlsx(many, options: ImportTests.options()) } throws: {
            "\($0)".contains("more than \(WorkbookReader.maxElements) XML elements")
        }
        let far = try Self.workbook(#"<row><c r="IW1"/></row>"#)
        #expect { try StatementReader.xlsx(far, options: ImportTests.options()) } throws: { "\($0)".contains("past column \(StatementBounds.maxColumns)") }
    }

    /// A workbook's bytes with the first central directory record patched by `patch` (given
    /// the bytes and the record's offset), its entries stored rather than deflated.
    static func patchedWorkbook(_ patch: (inout [UInt8], Int) -> Void) throws -> Data {
        let archive = try Archive(data: Data(), accessMode: .create)
        let xml = Data(#"<workbook><sheets/></workbook>"#.utf8)
        try archive.addEntry(with: "xl/workbook.xml", type: .file, uncompressedSize: Int64(xml.count), compressionMethod: .none) {
            (position: Int64, size: Int) in xml.subdata(in: Int(position)..<Int(position) + size)
        }
        var bytes = [UInt8](try #require(archive.data))
        let end = bytes.count - 22
        #expect(bytes[end..<end + 4] == [0x50, 0x4B, 0x05, 0x06])
        let directory = Int(bytes[end + 16]) | Int(bytes[end + 17]) << 8 | Int(bytes[end + 18]) << 16 | Int(bytes[end + 19]) << 24
        patch(&bytes, directory)
        return Data(bytes)
    }

    /// Found by review: ZIPFoundation finds a stored entry's data descriptor by its
    /// uncompressed size, which the directory check did not look at — a size past the file's
    /// end built an inverted range and killed the process. Sizes of ZIP64 (in the record, or
    /// in a ZIP64 extra field or end record, which ZIPFoundation would take unchecked) are
    /// refused too.
    @Test func aZipWhoseSizesLeadPastItsEndIsRefusedNotATrap() throws {
        func refused(_ data: Data) -> Bool {
            do {
                _ = try StatementReader.xlsx(data, options: ImportTests.options())
                return false
            } catch { return "\(error)".contains("not a zip archive, or a damaged one") }
        }
        let plain = try Self.patchedWorkbook { _, _ in }
        #expect(!refused(plain), "the unpatched workbook passes the directory check")
        let descriptorPastTheEnd = try Self.patchedWorkbook { bytes, record in
            bytes[record + 8] |= 0x08  // a data descriptor follows the data…
            (bytes[record + 24], bytes[record + 25], bytes[record + 26], bytes[record + 27]) = (0xFF, 0xFF, 0xFF, 0x7F)  // …after 2 GiB
        }
        #expect(refused(descriptorPastTheEnd))
        let zip64Size = try Self.patchedWorkbook { bytes, record in
            (bytes[record + 24], bytes[record + 25], bytes[record + 26], bytes[record + 27]) = (0xFF, 0xFF, 0xFF, 0xFF)
        }
        #expect(refused(zip64Size))
        let unknownMethod = try Self.patchedWorkbook { bytes, record in bytes[record + 10] = 99 }
        #expect(refused(unknownMethod))
        // A ZIP64 locator between the directory and the end record.
        var located = [UInt8](plain)
        let locator: [UInt8] = [0x50, 0x4B, 0x06, 0x07] + [UInt8](repeating: 0, count: 12) + [1, 0, 0, 0]
        located.insert(contentsOf: locator, at: located.count - 22)
        #expect(refused(Data(located)))
        // A ZIP64 end record that says what the end record says (Apache Commons Compress writes
        // one) is read; one that says otherwise is not.
        func withZIP64Record(entries: UInt64? = nil) -> Data {
            var bytes = [UInt8](plain)
            let end = bytes.count - 22
            func little(_ value: UInt64, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
            let field = { (at: Int, count: Int) in (0..<count).reduce(UInt64(0)) { $0 | UInt64(bytes[end + at + $1]) << (8 * UInt64($1)) } }
            let (count, size, offset) = (field(10, 2), field(12, 4), field(16, 4))
            let record =
                [0x50, 0x4B, 0x06, 0x06] + little(44, 8) + [45, 0, 45, 0] + little(0, 8) + little(entries ?? count, 8) + little(entries ?? count, 8)
                + little(size, 8) + little(offset, 8)
            let locator = [0x50, 0x4B, 0x06, 0x07] + little(0, 4) + little(UInt64(end), 8) + little(1, 4)
            bytes.insert(contentsOf: record + locator, at: end)
            return Data(bytes)
        }
        #expect(!refused(withZIP64Record()), "a ZIP64 end record that agrees")
        #expect(refused(withZIP64Record(entries: 7)), "one that does not")
    }

    /// Found by review: a quote inside a comment (or a processing instruction, or CDATA)
    /// opened a "quoted value" to the next quote, and every element after it went uncounted —
    /// 16 MiB of `<row/>` past the element cap, into XMLCoder's ~1 KB a node. Nor may a part
    /// declare a document type (entities expand).
    @Test func elementsAfterAQuoteInACommentAreCounted() throws {
        let rows = String(repeating: "<row/>", count: 1_000)
        for hiding in ["<!-- ' -->", "<?pi \" ?>", "<![CDATA[ ' ]]>"] {
            let shape = WorkbookReader.xmlShape(Data(("<?xml version=\"1.0\"?>" + hiding + "<worksheet><sheetData>" + rows + "</sheetData></worksheet>").utf8))
            #expect(shape.elements == 1_002 && shape.depth == 3 && !shape.declares, "\(hiding): \(shape)")
        }
        let quotedAngle = WorkbookReader.xmlShape(Data(#"<a x="'>"><b/></a>"#.utf8))
        #expect(quotedAngle.depth == 2 && quotedAngle.elements == 2, "a quoted '>' is an attribute's text: \(quotedAngle)")
        #expect(WorkbookReader.xmlShape(Data(#"<!DOCTYPE a [<!ENTITY x "y">]><a/>"#.utf8)).declares)
        let hidden = try Self.workbook("<!-- ' -->" + String(repeating: "<row><c/></row>", count: 150_000))
        #expect { try StatementReader.xlsx(hidden, options: ImportTests.options()) } throws: {
            "\($0)".contains("more than \(WorkbookReader.maxElements) XML elements")
        }
    }

    /// Found by review: each sheet was looked up with a walk of every relationship and every
    /// zip entry — 60,000 sheets took about an hour — and no time limit was checked meanwhile.
    /// A workbook names at most `maxSheets`.
    @Test func aWorkbookOfTooManySheetsIsRefused() throws {
        let archive = try Archive(data: Data(), accessMode: .create)
        let sheets = (0...WorkbookReader.maxSheets).map { #"<sheet name="S\#($0)" sheetId="\#($0 + 1)" r:id="rId\#($0)"/>"# }.joined()
        let xml = Data(#"<workbook xmlns:r="r"><sheets>\#(sheets)</sheets></workbook>"#.utf8)
        try archive.addEntry(with: "xl/workbook.xml", type: .file, uncompressedSize: Int64(xml.count), compressionMethod: .deflate) {
            (position: Int64, size: Int) in xml.subdata(in: Int(position)..<Int(position) + size)
        }
        #expect { try StatementReader.xlsx(try #require(archive.data), options: ImportTests.options()) } throws: {
            "\($0)".contains("more than \(WorkbookReader.maxSheets) sheets")
        }
    }

    /// Found by review: a card statement's OFX has no BANKID, and each row looked for one
    /// through the whole file — 20,000 rows took minutes and ran out of time.
    @Test func aCardStatementOFXWithoutABankIDIsReadWithinTheTimeLimit() throws {
        let rows = (1...20_000).map { "<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20261101<TRNAMT>-\($0).00<FITID>f\($0)<NAME>Shop\n" }.joined()
        let ofx =
            "<OFX><CREDITCARDMSGSRSV1><CCSTMTRS><CURDEF>USD<CCACCTFROM><ACCTID>4111</CCACCTFROM><BANKTRANLIST>\n" + rows
            + "</BANKTRANLIST></CCSTMTRS></CREDITCARDMSGSRSV1></OFX>\n"
        let statement = try OFXReader.read(Array(ofx.utf8), options: ImportTests.options { $0.timeLimit = .seconds(30) })
        #expect(statement.rows.count == 20_000 && statement.bad.isEmpty)
    }

    /// Found by review: a date of the year 0 (or one that is before year 1 in UTC) was read
    /// as a date, and the ledger's field rule then refused the whole import when it was written
    /// — after the statement's new categories were — where it is one row that cannot be read.
    @Test func aDateOutsideTheYears1To9999IsARowThatCannotBeRead() throws {
        let text = "date,amount,category\n0000-01-01T00:00:00Z,5000,X > Y\n0001-01-01T00:00:00+01:00,5000,\n2026-11-21,3000,\n"
        let statement = try Self.csv(text)
        #expect(statement.rows.count == 1 && statement.rows.first?.amount == 3000)
        #expect(statement.bad.count == 2 && statement.bad.allSatisfy { $0.reason.contains("between the years 1 and 9999") }, "\(statement.bad)")
        let ofx = "<OFX><CURDEF>USD<STMTTRN><TRNAMT>-1.00<DTPOSTED>00000101<FITID>a\n<STMTTRN><TRNAMT>-2.00<DTPOSTED>20261101<FITID>b\n</OFX>"
        let read = try OFXReader.read(Array(ofx.utf8), options: ImportTests.options())
        #expect(read.rows.count == 1 && read.bad.count == 1, "\(read.bad)")
    }

    /// Found by review: a debit written negative was read as income, and a currency's mark was
    /// dropped unread — `JPY 1000` in a dollar statement was 1,000 dollars, `$12` in a won one ₩12.
    @Test func aDebitIsSpendingWhateverItsSignAndAnotherCurrencysMarkIsNotDropped() throws {
        let debits = try Self.csv("date,debit,credit\n2026-11-21,-12.50,\n2026-11-22,,-3.00\n") { $0.currency = "USD" }
        #expect(debits.rows.map(\.kind) == ["expense", "income"] && debits.rows.map(\.amount) == [1250, 300], "\(debits.rows)")
        let marked = try Self.csv("date,amount\n2026-11-21,JPY 1000\n2026-11-22,$12.50\n2026-11-23,¥5\n") { $0.currency = "USD" }
        #expect(marked.rows.map(\.amount) == [1250], "\(marked.rows)")
        #expect(marked.bad.count == 2 && marked.bad.allSatisfy { $0.reason.contains("not USD") }, "\(marked.bad)")
        let won = try Self.csv("date,amount\n2026-11-21,$12\n2026-11-22,\"12,000원\"\n2026-11-23,₩500\n") { $0.currency = "KRW" }
        #expect(won.rows.map(\.amount) == [12_000, 500] && won.bad.count == 1, "\(won.rows) \(won.bad)")
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
            // Refused before its file is read (an empty one would be a 400 once read): uploads
            // wait in memory only as many as the slots (found by a hostile run: eight slow 60 MiB
            // uploads held 500 MB before any was refused).
            let unread = try await ImportTests.post(client, "/v1/imports?dryRun=true", token: fixture.readWrite, bytes: [])
            #expect(unread.status == .tooManyRequests, "\(String(buffer: unread.body))")
            fixture.service.ledger.importsUnderWay.withLock { $0 -= 1 }
            #expect(try await ImportTests.post(client, "/v1/imports?dryRun=true", token: fixture.readWrite, bytes: bank).status == .ok)
            #expect(fixture.service.ledger.importsUnderWay.withLock { $0 } == Ledger.maxImportsAtOnce - 1, "an import gives its place back")
        }
    }

    /// A slot is held only inside the `withImportSlot` call that made it: one kept past it holds
    /// nothing (the import then needs a slot of its own, and none is free), while one still held
    /// lets its import through with every other slot taken.
    @Test func aSlotKeptPastItsCallHoldsNothing() async throws {
        let fixture = try ServerFixture()
        let ledger = fixture.service.ledger
        let bank = Array("Date,Description,Amount\n2026-11-01,Rent,1000\n".utf8)
        let read: @Sendable ([UInt8]) throws -> StatementContents = { try StatementReader.file($0, format: "csv", options: StatementOptions()) }
        func importHolding(_ slot: ImportSlot) async throws -> ImportReport {
            try await ledger.importFile(bank, fileName: "bank.csv", format: "csv", dryRun: true, skipBadRows: false, actor: "test", holding: slot, read: read)
        }
        let kept = try await ledger.withImportSlot { $0 }
        ledger.importsUnderWay.withLock { $0 = Ledger.maxImportsAtOnce }
        await #expect { _ = try await importHolding(kept) } throws: { "\($0)".contains("imports are under way") }
        ledger.importsUnderWay.withLock { $0 = 0 }
        try await ledger.withImportSlot { slot in
            ledger.importsUnderWay.withLock { $0 = Ledger.maxImportsAtOnce }
            defer { ledger.importsUnderWay.withLock { $0 = 1 } }  // this slot's own, given back as the call ends
            let report = try await importHolding(slot)
            #expect(report.created.count == 1)
        }
        #expect(ledger.importsUnderWay.withLock { $0 } == 0)
    }
}
