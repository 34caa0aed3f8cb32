import Foundation
import Synchronization
import TallyCore

/// The amounts and dates of statement cells, in the shapes Korean (and other) banks and card
/// companies write them.
public enum StatementValues {
    /// The currencies each mark an amount may carry can stand for.
    static let currencyMarks: [String: Set<String>] = [
        "KRW": ["KRW"], "USD": ["USD"], "EUR": ["EUR"], "JPY": ["JPY"], "원": ["KRW"], "₩": ["KRW"], "￦": ["KRW"], "€": ["EUR"], "円": ["JPY"],
        "¥": ["JPY", "CNY"], "$": ["USD", "CAD", "AUD", "NZD", "HKD", "SGD", "TWD", "MXN", "ARS", "CLP", "COP"],
    ]

    /// An amount in minor units of `currency`: `1,234,000`, `1,234,000원`, `₩12,000`, `$12.50`,
    /// `-5,000`, `(5,000)`, `5,000-`, `+3,200,000`. Nil for an empty cell; throws for anything
    /// else, or more decimals than the currency has, or an amount past ±10^15, or a mark of
    /// another currency than `currency` (`JPY 1000` in a dollar statement).
    public static func amount(_ text: String, currency: String) throws(StatementError) -> Int64? {
        if let plain = plainAmount(text, currency: currency) { return plain }
        var body = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if body.isEmpty { return nil }
        var negative = false
        if body.hasPrefix("("), body.hasSuffix(")") { negative = true; body = String(body.dropFirst().dropLast()) }
        /// A mark dropped from the amount, once it is checked to be the row's currency's: `JPY
        /// 1000` in a USD statement is not 1000 dollars.
        func drop(_ unit: String) throws(StatementError) {
            guard let currencies = Self.currencyMarks[unit], !currencies.contains(currency) else { return }
            throw StatementError("'\(text.prefix(40))' is an amount in \(currencies.sorted().joined(separator: " or ")), not \(currency)")
        }
        for unit in ["KRW", "USD", "EUR", "JPY", "원", "₩", "￦", "$", "€", "¥", "円"] {
            if body.hasSuffix(unit) {
                try drop(unit)
                body = String(body.dropLast(unit.count))
            }
            if body.hasPrefix(unit) {
                try drop(unit)
                body = String(body.dropFirst(unit.count))
            }
            body = body.trimmingCharacters(in: .whitespaces)
        }
        // Any of (5), 5- and -5 is negative, however many of them a cell uses.
        if body.hasSuffix("-") { negative = true; body = String(body.dropLast()) }
        if body.hasPrefix("-") { negative = true; body = String(body.dropFirst()) } else if body.hasPrefix("+") { body = String(body.dropFirst()) }
        for unit in ["₩", "￦", "$", "€", "¥"] where body.hasPrefix(unit) {
            try drop(unit)
            body = String(body.dropFirst(unit.count))
        }
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        let digits = Currency.minorUnitDigits[currency] ?? 2
        guard (1...2).contains(parts.count), let grouped = parts.first, isGroupedByThousands(grouped) else {
            throw StatementError("'\(text.prefix(40))' is not an amount")
        }
        let whole = grouped.filter { $0 != "," }
        guard !whole.isEmpty, whole.count <= 15, whole.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw StatementError("'\(text.prefix(40))' is not an amount")
        }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else { throw StatementError("'\(text.prefix(40))' is not an amount") }
        while fraction.count > digits, fraction.hasSuffix("0") { fraction.removeLast() }
        guard fraction.count <= digits else { throw StatementError("'\(text.prefix(40))' has more decimals than \(currency) has (\(digits))") }
        fraction += String(repeating: "0", count: digits - fraction.count)
        guard let value = Int64(String(whole) + fraction), value <= 1_000_000_000_000_000 else {
            throw StatementError("'\(text.prefix(40))' is too large an amount")
        }
        return negative ? -value : value
    }

    /// Whether the commas of an amount's whole part (if any) group it by thousands — `1,234,000`,
    /// or in lakhs, as Indian statements write it, `12,34,567` — not `12,50` (a decimal comma,
    /// which read as grouping would make $12.50 into $1,250.00), `0,500`, `1,2,3` or `1,,000`.
    /// Such a cell is a bad row, named, not a wrong amount.
    static func isGroupedByThousands(_ whole: Substring) -> Bool {
        guard whole.contains(",") else { return true }
        let groups = whole.split(separator: ",", omittingEmptySubsequences: false)
        guard let first = groups.first, first.first != "0", groups.last?.count == 3 else { return false }
        let middle = groups.dropFirst().dropLast()
        let thousands = (1...3).contains(first.count) && middle.allSatisfy { $0.count == 3 }
        let lakhs = (1...2).contains(first.count) && middle.allSatisfy { $0.count == 2 }
        return thousands || lakhs
    }

    /// The common shapes — digits grouped by commas, maybe a `-`, maybe `원` — read in one pass
    /// over the bytes (an import reads hundreds of thousands); nil for anything else, which the
    /// general reader then takes (or refuses).
    static func plainAmount(_ text: String, currency: String) -> Int64? {
        var utf8 = Substring(text).utf8[...]
        if utf8.suffix(3).elementsEqual([0xEC, 0x9B, 0x90]) { utf8 = utf8.dropLast(3) }  // 원
        var negative = false
        if utf8.first == UInt8(ascii: "-") { negative = true; utf8 = utf8.dropFirst() }
        guard !utf8.isEmpty, (Currency.minorUnitDigits[currency] ?? 2) == 0 else { return nil }
        var value: Int64 = 0
        var digits = 0
        var sinceComma: Int?  // digits since the last comma, once there is one
        var startsWithZero = false
        for byte in utf8 {
            if byte == UInt8(ascii: ",") {
                // Thousands only (see `isGroupedByThousands`): else the general reader names it.
                guard sinceComma.map({ $0 == 3 }) ?? ((1...3).contains(digits) && !startsWithZero) else { return nil }
                sinceComma = 0
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            if digits == 0 { startsWithZero = byte == UInt8(ascii: "0") }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            digits += 1
            sinceComma? += 1
            if digits > 15 { return nil }
        }
        guard digits > 0, sinceComma.map({ $0 == 3 }) ?? true else { return nil }
        return negative ? -value : value
    }

    /// A date (and maybe a time): `20251201`, `2026.11.21`, `2026.11.21.`, `2026-11-21`,
    /// `2026/11/21`, `25.12.01` (20YY), each maybe followed by ` 14:03` or ` 14:03:22`, or ISO
    /// 8601 with an offset (`2026-11-21T14:03:22.5+09:00`, kept as written); with
    /// `serialDays`, also an Excel serial day number (`45992`, `45992.5`: days since
    /// 1899-12-30, how a spreadsheet stores a date cell). Local time in `timeZone`; a date
    /// alone is noon there (so that it stays on its day in any nearby offset).
    public static func date(_ text: String, timeZone: TimeZone, serialDays: Bool) throws(StatementError) -> DateTime {
        try kept(try anyDate(text, timeZone: timeZone, serialDays: serialDays), text)
    }

    /// `date` as the ledger keeps it: between the years 1 and 9999, in UTC and where it was
    /// written (the expense field's rule, `DateTime.outOfRange`) — else that row cannot be read, as any bad date (one
    /// that passed here refused the whole import when it was written, new categories and all).
    public static func kept(_ date: DateTime, _ text: String) throws(StatementError) -> DateTime {
        guard date.outOfRange == nil else {
            throw StatementError("'\(text.trimmingCharacters(in: .whitespacesAndNewlines).prefix(40))' is not a date between the years 1 and 9999")
        }
        return date
    }

    private static func anyDate(_ text: String, timeZone: TimeZone, serialDays: Bool) throws(StatementError) -> DateTime {
        if let plain = plainDate(text, timeZone: timeZone) { return plain }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        // ISO 8601 with an offset (a Tally export's dates): that instant, as written.
        if trimmed.utf8.count > 10, trimmed.contains("T"), let instant = DateTime(iso8601: trimmed, timeZone: timeZone) { return instant }
        let problem = StatementError("'\(trimmed.prefix(40))' is not a date")
        if serialDays, let serial = Double(trimmed), serial.isFinite, (1...2_958_465).contains(serial), !trimmed.contains("e"), !trimmed.contains("E") {
            let seconds = Int64((serial * 86_400).rounded()) - 25_569 * 86_400  // 1899-12-30 → 1970-01-01
            let day = DateTime(epochMillis: seconds * 1000, offsetMinutes: 0).localFields
            let time = serial.truncatingRemainder(dividingBy: 1) == 0 ? (12, 0, 0) : (day.hour, day.minute, day.second)
            guard let date = local(day.year, day.month, day.day, time.0, time.1, time.2, timeZone) else { throw problem }
            return date
        }
        let pieces = trimmed.split(whereSeparator: { $0 == " " || $0 == "T" }).map(String.init)
        guard (1...2).contains(pieces.count) else { throw problem }
        var datePart = pieces[0]
        if datePart.hasSuffix(".") { datePart.removeLast() }
        var fields: [Int]
        if datePart.count == 8, datePart.allSatisfy({ $0.isASCII && $0.isNumber }) {
            fields = [Int(datePart.prefix(4))!, Int(datePart.dropFirst(4).prefix(2))!, Int(datePart.suffix(2))!]
        } else {
            let parts = datePart.split(whereSeparator: { $0 == "." || $0 == "-" || $0 == "/" })
            guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.count <= 4 && $0.allSatisfy { $0.isASCII && $0.isNumber } }) else { throw problem }
            fields = parts.map { Int($0)! }
            if parts[0].count == 2, parts[1].count <= 2, parts[2].count <= 2 { fields[0] += 2000 } else if parts[0].count != 4 { throw problem }
        }
        var (hour, minute, second) = (12, 0, 0)
        if pieces.count == 2 {
            let time = pieces[1].split(separator: ":").map { Int($0) }
            guard (2...3).contains(time.count), time.allSatisfy({ $0 != nil }), let h = time[0], let m = time[1], (0..<24).contains(h), (0..<60).contains(m)
            else { throw problem }
            (hour, minute, second) = (h, m, time.count == 3 ? time[2]! : 0)
            guard (0..<60).contains(second) else { throw problem }
        }
        guard let date = local(fields[0], fields[1], fields[2], hour, minute, second, timeZone) else { throw problem }
        return date
    }

    /// `YYYYMMDD`, `YYYY.MM.DD`, `YYYY-MM-DD` or `YYYY/MM/DD` alone, read from the bytes in
    /// one pass; nil for anything else (the general reader takes it).
    static func plainDate(_ text: String, timeZone: TimeZone) -> DateTime? {
        let bytes = Array(text.utf8)
        let digitsAt: [Int]
        switch bytes.count {
        case 8: digitsAt = Array(0..<8)
        case 10:
            guard bytes[4] == bytes[7], [UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "/")].contains(bytes[4]) else { return nil }
            digitsAt = [0, 1, 2, 3, 5, 6, 8, 9]
        default: return nil
        }
        var n: [Int] = []
        for position in digitsAt {
            let byte = bytes[position]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            n.append(Int(byte - UInt8(ascii: "0")))
        }
        return local(n[0] * 1000 + n[1] * 100 + n[2] * 10 + n[3], n[4] * 10 + n[5], n[6] * 10 + n[7], 12, 0, 0, timeZone)
    }

    /// A real local date-time in `timeZone`, or nil (Feb 30, year 0). Remembered: a statement
    /// has many rows on few days, and the calendar's arithmetic is the slow part.
    static func local(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int, _ timeZone: TimeZone) -> DateTime? {
        let key = LocalKey(fields: [year, month, day, hour, minute, second], zone: timeZone.identifier)
        if let known = recent.withLock({ $0[key] }) { return known }
        let date = computeLocal(year, month, day, hour, minute, second, timeZone)
        recent.withLock { cache in
            if cache.count > 50_000 { cache.removeAll() }
            cache[key] = date
        }
        return date
    }

    private struct LocalKey: Hashable {
        var fields: [Int]
        var zone: String
    }

    private static let recent = Mutex<[LocalKey: DateTime?]>([:])

    private static func computeLocal(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int, _ timeZone: TimeZone) -> DateTime? {
        guard (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
        let text = String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", year, month, day, hour, minute, second)
        guard let wall = DateTime(iso8601: text) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        guard let instant = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)) else {
            return nil
        }
        let millis = Int64(instant.timeIntervalSince1970.rounded()) * 1000
        let offset = Int16(clamping: (wall.epochMillis - millis) / 60_000)
        guard abs(Int(offset)) <= DateTime.maxOffsetMinutes else { return nil }
        return DateTime(epochMillis: millis, offsetMinutes: offset)
    }
}
