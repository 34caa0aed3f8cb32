import Foundation
import TallyCore

/// Reads OFX and QFX statements: OFX 1.x (SGML: tags often left unclosed) and 2.x (XML). Both
/// are a tree of `<TAG>value` elements; a statement's transactions are its `<STMTTRN>` blocks,
/// each with `TRNAMT` (negative: money out), `DTPOSTED`, `FITID` (the bank's id, unique per
/// account) and `NAME`/`PAYEE`/`MEMO`. OFX is not XML until version 2, so its tags are scanned
/// here: nothing nests inside a transaction's fields, and only those fields are read.
public enum OFXReader {
    public static func read(_ bytes: [UInt8], options: StatementOptions) throws(StatementError) -> StatementContents {
        let text = try decode(bytes)
        guard text.range(of: "<OFX>", options: .caseInsensitive) != nil else { throw StatementError("not an OFX file (no <OFX>)") }
        let defaultCurrency = field("CURDEF", in: text).map { $0.uppercased() }.flatMap { Currency.isValid($0) ? $0 : nil } ?? options.currency
        // FITIDs are unique per account: the account's ids are part of each key. The bank's id
        // is looked for once (a card statement has none: looked for per row, each search read
        // the whole file, and a card statement of 20,000 rows ran out of time).
        let bankID = field("BANKID", in: text)
        let account = options.account.isEmpty ? [bankID, field("ACCTID", in: text)].compactMap { $0 }.joined(separator: "/") : options.account
        var statement = StatementContents(rows: [], skipped: [], bad: [], layouts: [("", "ofx")], encoding: nil)
        // A file may hold several accounts: each transaction is of the last account named before it.
        let accounts = options.account.isEmpty ? blocks("ACCTID", in: text).map { ($0.startIndex, field("ACCTID", in: "<ACCTID>" + $0) ?? "") } : []
        var accountAt = 0
        let bounds = StatementBounds(timeLimit: options.timeLimit)
        for (number, block) in blocks("STMTTRN", in: text).enumerated() {
            try bounds.checkTime(row: number + 1)
            while accountAt + 1 < accounts.count, accounts[accountAt + 1].0 < block.startIndex { accountAt += 1 }
            let rowAccount =
                accounts.indices.contains(accountAt) && accounts[accountAt].0 < block.startIndex
                ? [bankID, accounts[accountAt].1].compactMap { $0 }.joined(separator: "/") : nil
            let row = number + 1
            do throws(StatementError) {
                guard let amountText = field("TRNAMT", in: block) else { throw StatementError("no TRNAMT") }
                let currency = field("CURSYM", in: block).map { $0.uppercased() }.flatMap { Currency.isValid($0) ? $0 : nil } ?? defaultCurrency
                // OFX allows a comma as the decimal point (and has no thousands separators).
                guard let signed = try StatementValues.amount(amountText.replacingOccurrences(of: ",", with: "."), currency: currency), signed != 0 else {
                    throw StatementError("an amount of 0")
                }
                guard let posted = field("DTPOSTED", in: block) else { throw StatementError("no DTPOSTED") }
                let payee = field("NAME", in: block) ?? field("PAYEE", in: block)
                statement.rows.append(
                    StatementRow(
                        sheet: "", row: row, date: try date(posted, timeZone: options.timeZone), amount: Int64(signed.magnitude),
                        kind: signed < 0 ? "expense" : "income", isRefund: false, currency: currency,
                        payee: payee.map { String($0.prefix(Limits.maxShortTextLength)) },
                        memo: field("MEMO", in: block).map { String($0.prefix(Limits.maxMemoLength)) },
                        reference: field("FITID", in: block)))
                statement.rows[statement.rows.count - 1].account = rowAccount
            } catch {
                statement.bad.append(StatementNote(sheet: "", row: row, reason: error.description))
            }
        }
        statement.rows = StatementReader.keys(statement.rows, account: account, multipleSheets: false)
        return statement
    }

    /// UTF-8 (OFX 2, or `ENCODING:UTF-8`), else Windows-1252 (`CHARSET:1252`, OFX 1's usual).
    static func decode(_ bytes: [UInt8]) throws(StatementError) -> String {
        if StatementEncoding.firstInvalidUTF8(bytes[...]) == nil { return String(decoding: bytes, as: UTF8.self) }
        return try StatementEncoding.windows1252(bytes)
    }

    /// The text of each `<tag>` … `</tag>` block (or up to the next `<tag>` when not closed).
    /// Each block's close is looked for only up to the next open tag: one pass over the text.
    static func blocks(_ tag: String, in text: String) -> [Substring] {
        var opens: [Range<String.Index>] = []
        var from = text.startIndex
        while let open = text.range(of: "<\(tag)>", options: .caseInsensitive, range: from..<text.endIndex) {
            opens.append(open)
            from = open.upperBound
            if opens.count > Limits.maxImportRows { break }
        }
        return opens.enumerated().map { position, open in
            let limit = position + 1 < opens.count ? opens[position + 1].lowerBound : text.endIndex
            let close = text.range(of: "</\(tag)>", options: .caseInsensitive, range: open.upperBound..<limit)
            return text[open.upperBound..<(close?.lowerBound ?? limit)]
        }
    }

    /// The value of the first `<tag>value` in `text`: up to the next `<`, trimmed, SGML
    /// entities (&amp; &lt; &gt;) read. Nil if absent or empty.
    static func field(_ tag: String, in text: some StringProtocol) -> String? {
        guard let open = text.range(of: "<\(tag)>", options: .caseInsensitive) else { return nil }
        let after = text[open.upperBound...]
        let value = after[..<(after.firstIndex(of: "<") ?? after.endIndex)].trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
        return value.isEmpty ? nil : BidiControls.neutralized(String(value.prefix(1_000)))  // see StatementReader.read
    }

    /// `YYYYMMDD[HHMMSS[.XXX]][[±h[.mm]][:TZ]]`: with a bracketed offset, that instant; without,
    /// local time in `timeZone` (a date alone is noon, like every imported date).
    static func date(_ text: String, timeZone: TimeZone) throws(StatementError) -> DateTime {
        let problem = StatementError("'\(text.prefix(40))' is not an OFX date")
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard digits.count == 8 || digits.count >= 14 else { throw problem }
        let n = digits.map { Int(String($0))! }
        func number(_ range: Range<Int>) -> Int { range.reduce(0) { $0 * 10 + n[$1] } }
        let (year, month, day) = (number(0..<4), number(4..<6), number(6..<8))
        let (hour, minute, second) = digits.count >= 14 ? (number(8..<10), number(10..<12), number(12..<14)) : (12, 0, 0)
        guard hour < 24, minute < 60, second < 60 else { throw problem }
        if let open = text.firstIndex(of: "["), let close = text.firstIndex(of: "]"), open < close {
            var zone = Substring(text[text.index(after: open)..<close].split(separator: ":").first ?? "")
            let sign = zone.hasPrefix("-") ? -1 : 1
            if zone.hasPrefix("-") || zone.hasPrefix("+") { zone = zone.dropFirst() }
            let parts = zone.split(separator: ".", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), parts.allSatisfy({ (1...2).contains($0.count) && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
                let hours = Int(parts[0]), hours <= 18, let extra = parts.count > 1 ? Int(parts[1]) : 0, extra < 60
            else { throw problem }
            let minutes = sign * (hours * 60 + extra)
            guard abs(minutes) <= DateTime.maxOffsetMinutes else { throw problem }
            let iso = String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d%@%02d:%02d", year, month, day, hour, minute, second, minutes < 0 ? "-" : "+", abs(minutes) / 60,
                abs(minutes) % 60)
            guard let date = DateTime(iso8601: iso) else { throw problem }
            return try StatementValues.kept(date, text)
        }
        guard let date = StatementValues.local(year, month, day, hour, minute, second, timeZone) else { throw problem }
        return try StatementValues.kept(date, text)
    }
}
