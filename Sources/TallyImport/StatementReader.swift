import CSV
import Foundation
import TallyCore

/// How to read a statement: which layouts, which currency, whose account.
public struct StatementOptions: Sendable {
    /// Layouts to try, in order (default: every built-in one).
    public var layouts: [StatementLayout] = StatementLayout.builtIn
    /// The header's row number (1-based, as the file counts); 0: there is no header row. Nil: found by names.
    public var headerRow: Int?
    public var encoding: StatementEncoding?
    /// The currency of rows without a currency column.
    public var currency = "KRW"
    /// Which account the statement is of: part of every import key without a bank's id, so the
    /// same purchase on two cards is two transactions.
    public var account = ""
    /// The ledger's account the statement is of (a card statement → that card's account): every
    /// row it makes names it. It is not part of the import keys (rows imported before it was
    /// given stay the same transactions); `account` is.
    public var accountId: UUID?
    /// Dates without an offset are local time here.
    public var timeZone = TimeZone.current
    /// In a one-column statement, a positive amount is spending (a card statement) or income
    /// (a bank account's signed column).
    public var positiveIsIncome = false
    public var delimiter: UnicodeScalar = ","
    /// The longest reading the file may take (`StatementBounds`).
    public var timeLimit: Duration = .seconds(60)

    public init() {}
}

public enum StatementReader {
    /// Cells that mark a total or subtotal row.
    static let totalMarks: Set<String> = ["합계", "총계", "소계", "총합계", "합계금액", "누계", "total", "totals", "subtotal", "grandtotal", "sum"]

    /// What a statement's bytes are: a zip (an .xlsx), an OFX/QFX file, else CSV.
    public static func format(of bytes: [UInt8]) -> String {
        if bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return "xlsx" }
        let head = String(decoding: bytes.prefix(4_096), as: UTF8.self).uppercased()
        return head.contains("OFXHEADER") || head.contains("<OFX>") ? "ofx" : "csv"
    }

    /// Reads a statement file's bytes of `format` (csv, xlsx or ofx) — what the CLI and the API
    /// hand `Ledger.importFile` as its reader.
    public static func file(_ bytes: [UInt8], format: String, options: StatementOptions) throws -> StatementContents {
        guard options.account.count <= Limits.maxShortTextLength, !ControlCharacters.occur(in: options.account)
        else {
            throw ValidationError(field: "account", "must be at most \(Limits.maxShortTextLength) characters without control characters")
        }
        var statement: StatementContents
        switch format {
        case "csv": statement = try csv(bytes, options: options)
        case "xlsx": statement = try xlsx(Data(bytes), options: options)
        case "ofx": statement = try OFXReader.read(bytes, options: options)
        default: throw ValidationError(field: "format", "must be csv, xlsx or ofx")
        }
        statement.accountId = options.accountId
        return statement
    }

    /// Reads a CSV file's bytes (any of `StatementEncoding`) as one sheet.
    public static func csv(_ bytes: [UInt8], options: StatementOptions) throws(StatementError) -> StatementContents {
        let bounds = StatementBounds(timeLimit: options.timeLimit)
        let (text, encoding) = try StatementEncoding.decode(bytes, as: options.encoding)
        try StatementBounds.checkCSV(text, delimiter: options.delimiter)
        let reader: CSVReader
        do { reader = try CSVReader(string: text, hasHeaderRow: false, delimiter: options.delimiter) } catch {
            throw StatementError("not a CSV file: \(error)")
        }
        var rows: [(number: Int, cells: [String])] = []
        while let record = reader.next() {
            // Blank lines are records too: 3 bytes each, 3,000,000 of them in 9 MB.
            // (A header and the lines before it besides: `StatementLayout` looks for it in the first 50.)
            guard rows.count < Limits.maxImportRows + 50 else { throw StatementError("the file holds more than \(Limits.maxImportRows) rows; split it") }
            rows.append((rows.count + 1, record))
            if let error = reader.error { throw StatementError("not a CSV file (record \(rows.count)): \(error)") }
            try bounds.checkTime(row: rows.count)
        }
        if let error = reader.error { throw StatementError("not a CSV file (record \(rows.count + 1)): \(error)") }
        var statement = try read([StatementSheet(name: "", rows: rows)], options: options, serialDays: false, bounds: bounds)
        statement.encoding = encoding.rawValue
        return statement
    }

    /// Reads every sheet of an `.xlsx` workbook.
    public static func xlsx(_ data: Data, options: StatementOptions) throws(StatementError) -> StatementContents {
        let bounds = StatementBounds(timeLimit: options.timeLimit)
        return try read(try WorkbookReader.sheets(of: data), options: options, serialDays: true, bounds: bounds)
    }

    /// The most blank, total and unreadable rows one statement may have (each is listed in the
    /// report, a statement's real rows are `Limits.maxImportRows`).
    public static let maxNotedRows = 100_000

    /// Reads sheets: each one's header row found (or given), then every row after it a
    /// transaction, a blank or total row (skipped), or a bad row.
    /// Every row is held to `StatementBounds` (columns, cell bytes) before its header is
    /// looked for, and reading stops at `bounds`' time limit.
    public static func read(
        _ sheets: [StatementSheet], options: StatementOptions, serialDays: Bool,
        bounds: StatementBounds? = nil
    ) throws(StatementError) -> StatementContents {
        let bounds = bounds ?? StatementBounds(timeLimit: options.timeLimit)
        for sheet in sheets {
            for row in sheet.rows { try StatementBounds.check(row.cells, row: row.number, sheet: sheet.name) }
        }
        var statement = StatementContents(rows: [], skipped: [], bad: [], layouts: [], encoding: nil)
        for sheet in sheets {
            let label = sheet.name.isEmpty ? "" : "sheet '\(sheet.name)' "
            var start = 0
            var layout = options.layouts.first ?? StatementLayout.named("generic")!
            var columns: [ColumnRole: Int] = [:]
            if let headerRow = options.headerRow {
                if headerRow > 0 {
                    guard let position = sheet.rows.firstIndex(where: { $0.number == headerRow }) else {
                        throw StatementError("\(label)has no row \(headerRow) to be the header")
                    }
                    let header = sheet.rows[position].cells
                    if let (chosen, found) = StatementLayout.best(for: header, among: options.layouts) {
                        (layout, columns) = (chosen, found)
                    } else {
                        columns = layout.columns(in: header)
                    }
                    start = position + 1
                }
            } else if let found = StatementLayout.findHeader(in: sheet, layouts: options.layouts) {
                (start, layout, columns) = (found.position + 1, found.layout, found.columns)
            } else if sheet.rows.allSatisfy({ $0.cells.allSatisfy { $0.trimmingCharacters(in: .whitespaces).isEmpty } }) {
                continue  // an empty sheet (a workbook's unused Sheet2)
            } else if layout.positions.isEmpty {
                throw StatementError(
                    "\(label)has no header row naming a date and an amount (or debit/credit) column in its first 50 rows; "
                        + "name the columns (--column date=이용일 --column amount=이용금액) or give --header-row")
            }
            for (role, position) in layout.positions { columns[role] = position }
            guard StatementLayout.isReadable(columns) else {
                throw StatementError("\(label)layout '\(layout.name)' finds no date and amount (or debit/credit) column")
            }
            statement.layouts.append((sheet.name, layout.name))
            // Each row alone, on every core (a statement may hold 100,000), then kept in order.
            let (name, found) = (sheet.name, columns)
            let outcomes = try InParallel.map(Array(sheet.rows[start...])) { row throws(StatementError) in
                try readRow(row, sheet: name, columns: found, options: options, serialDays: serialDays, bounds: bounds)
            }
            for outcome in outcomes {
                switch outcome {
                case .transaction(let row): statement.rows.append(row)
                case .skipped(let note): statement.skipped.append(note)
                case .bad(let note): statement.bad.append(note)
                }
            }
            // Each such row is a line in the report: a file of nothing else is no statement,
            // and its report would be hundreds of megabytes.
            guard statement.skipped.count + statement.bad.count <= maxNotedRows else {
                throw StatementError(
                    "more than \(maxNotedRows) of the file's rows are blank, totals or unreadable; is it a statement? Take those rows out, or split it")
            }
        }
        statement.rows = keys(statement.rows, account: options.account, multipleSheets: sheets.count > 1)
        return statement
    }

    /// What one row of a statement's body is.
    enum RowOutcome: Sendable {
        case transaction(StatementRow)
        /// Blank, or a total.
        case skipped(StatementNote)
        /// Unreadable, with why.
        case bad(StatementNote)
    }

    /// Reads one row of a sheet's body, whose header found `columns`.
    static func readRow(
        _ row: (number: Int, cells: [String]), sheet: String, columns: [ColumnRole: Int], options: StatementOptions, serialDays: Bool, bounds: StatementBounds
    ) throws(StatementError) -> RowOutcome {
        try bounds.checkTime(row: row.number)
        // A bank's text, not a person's: an unpaired directional control in it is
        // dropped (the ledger refuses text holding one), not a reason to refuse the file.
        let cells = row.cells.map { BidiControls.neutralized(trimmed($0)) }
        if cells.allSatisfy(\.isEmpty) { return .skipped(StatementNote(sheet: sheet, row: row.number, reason: "blank")) }
        let date = columns[.date].flatMap { column in
            cells.indices.contains(column) ? try? StatementValues.date(cells[column], timeZone: options.timeZone, serialDays: serialDays) : nil
        }
        if date == nil, cells.contains(where: { $0.utf8.count <= 40 && totalMarks.contains(StatementLayout.normalize($0)) }) {
            return .skipped(StatementNote(sheet: sheet, row: row.number, reason: "total"))
        }
        do throws(StatementError) {
            return .transaction(try transaction(cells, columns, sheet: sheet, row: row.number, options: options, serialDays: serialDays, date: date))
        } catch {
            return .bad(StatementNote(sheet: sheet, row: row.number, reason: error.description))
        }
    }

    /// A cell without surrounding blanks (most have none: checked before Foundation trims).
    static func trimmed(_ cell: String) -> String {
        guard let first = cell.unicodeScalars.first, let last = cell.unicodeScalars.last,
            Whitespace.contains(first) || Whitespace.contains(last)
        else { return cell }
        return cell.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// One transaction from a row's cells.
    static func transaction(
        _ cells: [String], _ columns: [ColumnRole: Int], sheet: String, row: Int, options: StatementOptions,
        serialDays: Bool, date parsed: DateTime?
    ) throws(StatementError) -> StatementRow {
        func cell(_ role: ColumnRole) -> String? {
            guard let index = columns[role], cells.indices.contains(index), !cells[index].isEmpty else { return nil }
            return cells[index]
        }
        guard let dateText = cell(.date) else { throw StatementError("no date") }
        let date: DateTime
        if let parsed { date = parsed } else { date = try StatementValues.date(dateText, timeZone: options.timeZone, serialDays: serialDays) }
        let currency = cell(.currency)?.uppercased() ?? options.currency
        guard Currency.isValid(currency) else { throw StatementError("'\(currency.prefix(10))' is not a currency code") }
        var signed: Int64
        if let text = cell(.amount), let amount = try StatementValues.amount(text, currency: currency) {
            signed = options.positiveIsIncome ? -amount : amount  // positive: spending
        } else {
            let debit = try cell(.debit).flatMap { text throws(StatementError) in try StatementValues.amount(text, currency: currency) } ?? 0
            let credit = try cell(.credit).flatMap { text throws(StatementError) in try StatementValues.amount(text, currency: currency) } ?? 0
            guard (debit == 0) != (credit == 0) else {
                throw StatementError(debit == 0 ? "no amount" : "both a debit and a credit")
            }
            // A debit is spending and a credit income, whichever sign a bank writes them with.
            signed = debit != 0 ? Int64(clamping: debit.magnitude) : -Int64(clamping: credit.magnitude)
        }
        guard signed != 0 else { throw StatementError("an amount of 0") }
        guard signed.magnitude <= UInt64(Limits.maxAmount) else { throw StatementError("an amount past \(Limits.maxAmount) minor units") }
        for role in [ColumnRole.payee, .memo, .payment, .tags, .category] {
            if let text = cell(role), ControlCharacters.occur(in: text, allowingTabAndNewline: true) {
                throw StatementError("the \(role.rawValue) holds control characters")
            }
        }
        let isCard = columns[.amount] != nil && !options.positiveIsIncome
        var kind = signed > 0 ? "expense" : "income"
        if columns[.kind] != nil {  // the kind is given: the amount is its size
            guard let given = cell(.kind), ["income", "expense"].contains(given) else { throw StatementError("the kind must be income or expense") }
            guard signed > 0 || columns[.amount] == nil else { throw StatementError("with a kind column, the amount is positive") }
            kind = given
        }
        let short = { (text: String) in String(text.prefix(Limits.maxShortTextLength)) }
        var transaction = StatementRow(
            sheet: sheet, row: row, date: date, amount: signed.magnitude > UInt64(Int64.max) ? .max : Int64(signed.magnitude),
            kind: kind, isRefund: isCard && signed < 0 && columns[.kind] == nil, currency: currency,
            payee: cell(.payee).map(short), memo: cell(.memo).map { String($0.prefix(Limits.maxMemoLength)) },
            reference: cell(.reference))
        if columns[.kind] != nil {  // a Tally export: its formula guards come off
            transaction.payee = transaction.payee.map(unguarded)
            transaction.memo = transaction.memo.map(unguarded)
        }
        transaction.payment = cell(.payment).map(unguarded).map(short)
        transaction.tags = Array(
            Set(unguarded(cell(.tags) ?? "").split(separator: ";").map { short($0.trimmingCharacters(in: .whitespaces)) }.filter { !$0.isEmpty })
        ).sorted()
        guard transaction.tags.count <= Limits.maxTags else { throw StatementError("more than \(Limits.maxTags) tags") }
        if let path = cell(.category).map(unguarded) {
            let names = path.components(separatedBy: " > ").map { $0.trimmingCharacters(in: .whitespaces) }
            guard names.count <= 8, names.allSatisfy({ !$0.isEmpty && $0.count <= Limits.maxNameLength }) else {
                throw StatementError("'\(path.prefix(40))' is not a category path (names separated by ' > ')")
            }
            transaction.categoryPath = names
        }
        return transaction
    }

    /// `number` with leading zeros to `width` digits (what `%04d` gives, without `String(format:)`:
    /// a quarter of reading a large statement went to it).
    static func padded(_ number: Int, _ width: Int) -> String {
        let digits = String(number.magnitude)
        return (number < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count - (number < 0 ? 1 : 0))) + digits
    }

    /// Gives each row its import key: `ref:` and the statement's id where it has one; else
    /// `row:` and a hash of the account (and the sheet, in a workbook of several), the date
    /// (its day and time as written), the signed amount and currency, the payee and memo, and
    /// the row's occurrence number among identical ones in this file — so two identical
    /// purchases on one day stay two, and the same statement read again gives the same keys.
    static func keys(_ rows: [StatementRow], account: String, multipleSheets: Bool) -> [StatementRow] {
        // Each row's text on every core; then, in order, the rows without a reference numbered
        // among those alike — alike as `String`s are, canonically equivalent (an NFC payee and
        // its NFD twin count as one text, as they always did), but hashed by the bytes of their
        // NFC form: a `String` key hashes its text normalised, which for Korean payees was most
        // of what reading a statement cost.
        let texts = InParallel.map(rows) { row in
            let text = keyText(of: row, account: account, multipleSheets: multipleSheets)
            return (text: text, alike: UTF8Key(text: row.reference == nil ? canonical(text) : ""))
        }
        var seen: [UTF8Key: Int] = [:]
        seen.reserveCapacity(rows.count)
        return zip(rows, texts).map { row, texts in
            var row = row
            let text = texts.text
            if row.reference != nil {
                row.importKey = text
            } else {
                let key = texts.alike
                let count = seen[key, default: 0] + 1
                seen[key] = count
                row.importKey = "row:" + text + "\u{1F}" + String(count)
            }
            return row
        }
    }

    /// A text compared and hashed by its UTF-8 bytes, all at once (a `String` normalises its
    /// text to hash it, and an array of bytes hashes them one by one).
    struct UTF8Key: Hashable {
        let text: String

        static func == (left: UTF8Key, right: UTF8Key) -> Bool { left.text.utf8.elementsEqual(right.text.utf8) }

        func hash(into hasher: inout Hasher) {
            var text = text
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    /// `text` in Unicode's composed normal form (NFC): as it is when every scalar is one NFC
    /// keeps as it is whatever follows (below U+0300, or a precomposed Hangul syllable — a
    /// statement's usual text), else composed by Foundation.
    static func canonical(_ text: String) -> String {
        text.unicodeScalars.allSatisfy { $0.value < 0x300 || (0xAC00...0xD7A3).contains($0.value) } ? text : text.precomposedStringWithCanonicalMapping
    }

    /// A row's import key when it has a reference, else the fields rows alike share.
    static func keyText(of row: StatementRow, account: String, multipleSheets: Bool) -> String {
        let scope = (row.account ?? account) + (multipleSheets ? "\u{1F}" + row.sheet : "")
        // The date as written (its wall-clock fields), not as an instant: the same file read
        // under another time zone gives the same keys.
        let f = row.date.localFields
        let written =
            padded(f.year, 4) + "-" + padded(f.month, 2) + "-" + padded(f.day, 2) + "T"
            + padded(f.hour, 2) + ":" + padded(f.minute, 2) + ":" + padded(f.second, 2)
        let money = [row.kind, String(row.amount), row.currency].joined(separator: "\u{1F}")
        if let reference = row.reference {
            // A cancellation or an instalment often carries its purchase's approval number:
            // the day, kind and amount keep them apart.
            return "ref:" + [scope, reference, String(written.prefix(10)), money].joined(separator: "\u{1F}")
        }
        return [scope, written, money, row.payee ?? "", row.memo ?? ""].joined(separator: "\u{1F}")
    }
}
