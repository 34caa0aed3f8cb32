import Foundation

/// Amounts as decimal text, so that what the store held reaches the importer without a detour
/// through `Double` formatting: a REAL `12.3` is `"12.3"` (not `"12.300000000000001"`), and a
/// Decimal stored as text keeps its digits.
enum DecimalText {
    /// `value` in plain decimal notation with the fewest digits that read back as exactly
    /// `value` (Swift's shortest round-trip digits, written without an exponent): 12.5 → "12.5",
    /// 12.0 → "12", 1e-05 → "0.00001", -0.0 → "0". Nil for NaN and the infinities.
    static func plain(_ value: Double) -> String? {
        guard value.isFinite else { return nil }
        return expand(value.description)
    }

    /// A number written as Swift's `Double.description` writes it ("-1.25e-05", "12.0",
    /// "1e+16"), rewritten without exponent, trailing zeros or trailing point. Nil for anything
    /// else, and for exponents past ±400 (no Double has one).
    static func expand(_ text: String) -> String? {
        var body = Substring(text)
        var negative = false
        if body.first == "-" {
            negative = true
            body = body.dropFirst()
        }
        var exponent = 0
        if let marker = body.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            guard let value = Int(body[body.index(after: marker)...]), (-400...400).contains(value) else { return nil }
            exponent = value
            body = body[..<marker]
        }
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        let whole: Substring = parts[0]
        let fraction: Substring = parts.count == 2 ? parts[1] : ""
        var digits = Array(whole.utf8) + Array(fraction.utf8)
        guard !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        // Where the decimal point falls within `digits` once the exponent is applied.
        var point = whole.utf8.count + exponent
        if point < 0 {
            digits.insert(contentsOf: repeatElement(UInt8(ascii: "0"), count: -point), at: 0)
            point = 0
        }
        if point > digits.count {
            digits.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: point - digits.count))
        }
        let integerDigits = Array(digits[..<point].drop(while: { $0 == UInt8(ascii: "0") }))
        var fractionDigits = Array(digits[point...])
        while fractionDigits.last == UInt8(ascii: "0") { fractionDigits.removeLast() }
        var result = integerDigits.isEmpty ? "0" : String(decoding: integerDigits, as: UTF8.self)
        if !fractionDigits.isEmpty { result += "." + String(decoding: fractionDigits, as: UTF8.self) }
        if negative && result != "0" { result = "-" + result }
        return result
    }

    /// Whether `text` is a plain decimal literal: an optional `-`, digits, and optionally a point
    /// followed by digits; at most 40 characters. (`"12.50"`, `"-3"`; not `"1e3"`, `"12."`, `"abc"`.)
    static func isPlainDecimal(_ text: String) -> Bool {
        var bytes = Array(text.utf8)
        guard bytes.count <= 40 else { return false }
        if bytes.first == UInt8(ascii: "-") { bytes.removeFirst() }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2 else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty && part.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
    }
}
