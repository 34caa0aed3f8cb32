import Foundation
import TallyCore

/// Reads OFX and QFX statements: OFX 1.x (SGML: tags often left unclosed) and 2.x (XML). Both
/// are a tree of `<TAG>value` elements; a statement's transactions are its `<STMTTRN>` blocks,
/// each with `TRNAMT` (negative: money out), `DTPOSTED`, `FITID` (the bank's id, unique per
/// account) and `NAME`/`PAYEE`/`MEMO`. OFX is not XML until version 2, so its tags are scanned
/// here: nothing nests inside a transaction's fields, and only those fields are read.
public enum OFXReader {
    public static func read(_ bytes: [UInt8], options: StatementOptions) throws(StatementError) -> Statement {
        let text = try decode(bytes)
        guard text.range(of: "<OFX>", options: .caseInsensitive) != nil else { throw StatementError("not an OFX file (no <OFX>)") }
        let defaultCurrency = field("CURDEF", in: text).map { $0.uppercased() }.flatMap { Currency.isValid($0) ? $0 : nil } ?? options.currency
        // FITIDs are unique per account: the account's ids are part of each key.
        let account = options.account.isEmpty ? [field("BANKID", in: text), field("ACCTID", in: text)].compactMap { $0 }.joined(separator: "/") : options.account
        var statement = Statement(rows: [], skipped: [], bad: [], layouts: [("", "ofx")], encoding: nil)
        for (number, block) in blocks("STMTTRN", in: text).enumerated() {
            let row = number + 1
            do throws(StatementError) {
                guard let amountText = field("TRNAMT", in: block) else { throw StatementError("no TRNAMT") }
                let currency = field("CURRENCY", in: block).flatMap { field("CURSYM", in: $0) }?.uppercased() ?? defaultCurrency
                guard let signed = try StatementValues.amount(amountText, currency: currency), signed != 0 else { throw StatementError("an amount of 0") }
                guard let posted = field("DTPOSTED", in: block) else { throw StatementError("no DTPOSTED") }
                let payee = field("NAME", in: block) ?? field("PAYEE", in: block)
                statement.rows.append(StatementRow(
                    sheet: "", row: row, date: try date(posted, timeZone: options.timeZone), amount: Int64(signed.magnitude),
                    kind: signed < 0 ? "expense" : "income", isRefund: false, currency: currency,
                    payee: payee.map { String($0.prefix(Limits.maxShortTextLength)) }, memo: field("MEMO", in: block).map { String($0.prefix(Limits.maxMemoLength)) },
                    reference: field("FITID", in: block)))
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
    static func blocks(_ tag: String, in text: String) -> [Substring] {
        var blocks: [Substring] = []
        var rest = text[...]
        while let open = rest.range(of: "<\(tag)>", options: .caseInsensitive) {
            let after = rest[open.upperBound...]
            let close = after.range(of: "</\(tag)>", options: .caseInsensitive)
            let next = after.range(of: "<\(tag)>", options: .caseInsensitive)
            let end = [close?.lowerBound, next?.lowerBound].compactMap { $0 }.min() ?? after.endIndex
            blocks.append(after[..<end])
            rest = after[end...]
            if blocks.count > Limits.maxImportRows { break }
        }
        return blocks
    }

    /// The value of the first `<tag>value` in `text`: up to the next `<`, trimmed, SGML
    /// entities (&amp; &lt; &gt;) read. Nil if absent or empty.
    static func field(_ tag: String, in text: some StringProtocol) -> String? {
        guard let open = text.range(of: "<\(tag)>", options: .caseInsensitive) else { return nil }
        let after = text[open.upperBound...]
        let value = after[..<(after.firstIndex(of: "<") ?? after.endIndex)].trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
        return value.isEmpty ? nil : String(value.prefix(1_000))
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
            let zone = text[text.index(after: open)..<close].split(separator: ":").first.map(String.init) ?? ""
            let parts = zone.split(separator: ".")
            guard let hours = Double(parts.first ?? ""), abs(hours) <= 18 else { throw problem }
            let minutes = Int(hours * 60) + (parts.count > 1 ? (hours < 0 ? -1 : 1) * (Int(parts[1]) ?? 0) : 0)
            let iso = String(format: "%04d-%02d-%02dT%02d:%02d:%02d%@%02d:%02d", year, month, day, hour, minute, second, minutes < 0 ? "-" : "+", abs(minutes) / 60, abs(minutes) % 60)
            guard let date = DateTime(iso8601: iso) else { throw problem }
            return date
        }
        guard let date = StatementValues.local(year, month, day, hour, minute, second, timeZone) else { throw problem }
        return date
    }
}
