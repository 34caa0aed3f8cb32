import Foundation

extension FieldSpec {
    /// `value` in normal form if the field accepts it (text trimmed, sets sorted without
    /// duplicates, JSON canonical) under the rules of event schema `schemaVersion`; throws a
    /// `ValidationError` naming the field otherwise.
    public func normalize(_ value: PropertyValue, schemaVersion: UInt16 = Event.currentSchemaVersion) throws(ValidationError) -> PropertyValue {
        if value == .null {
            guard isNullable else { throw ValidationError(field: name.jsonName, "must not be null") }
            return .null
        }
        return try kind.normalize(value, field: name.jsonName, refusingUnpairedBidi: schemaVersion >= Event.bidiRuleSchemaVersion)
    }
}

extension FieldKind {
    /// `text` as a positive decimal in normal form (`0012.50` → `12.5`), or nil.
    public static func normalDecimal(_ text: String) -> String? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }), !parts[0].isEmpty,
            parts.count == 1 || !parts[1].isEmpty
        else { return nil }
        let whole = parts[0].drop { $0 == "0" }
        var fraction = parts.count == 2 ? parts[1] : ""
        while fraction.last == "0" { fraction.removeLast() }
        guard whole.count <= 12, fraction.count <= 12, !(whole.isEmpty && fraction.isEmpty) else { return nil }
        return (whole.isEmpty ? "0" : String(whole)) + (fraction.isEmpty ? "" : "." + fraction)
    }

    /// `refusingUnpairedBidi`: text must not hold an unpaired directional control
    /// (`BidiControls`); events of schema versions before the rule keep theirs.
    func normalize(_ value: PropertyValue, field: String, refusingUnpairedBidi: Bool = true) throws(ValidationError) -> PropertyValue {
        switch self {
        case .choice(let choices):
            guard case .string(let raw) = value, choices.contains(raw) else {
                throw ValidationError(field: field, "must be one of \(choices.joined(separator: ", "))")
            }
            return value
        case .amount:
            guard case .int(let amount) = value else { throw ValidationError(field: field, "must be an integer number of minor units") }
            guard amount > 0, amount <= Limits.maxAmount else {
                throw ValidationError(field: field, "must be between 1 and \(Limits.maxAmount) minor units")
            }
            return value
        case .signedAmount:
            guard case .int(let amount) = value else { throw ValidationError(field: field, "must be an integer number of minor units") }
            guard amount >= -Limits.maxAmount, amount <= Limits.maxAmount else {
                throw ValidationError(field: field, "must be between -\(Limits.maxAmount) and \(Limits.maxAmount) minor units")
            }
            return value
        case .currency:
            guard case .string(let code) = value, Currency.isValid(code) else {
                throw ValidationError(field: field, "must be an ISO 4217 code in capitals, such as KRW or USD")
            }
            return value
        case .dateTime:
            guard case .dateTime(let date) = value else { throw ValidationError(field: field, "must be an ISO 8601 date-time with offset") }
            if let problem = date.outOfRange { throw ValidationError(field: field, problem) }
            return value
        case .reference:
            guard case .uuid = value else { throw ValidationError(field: field, "must be a UUID") }
            return value
        case .month:
            guard case .string(let text) = value, Self.isMonth(text) else { throw ValidationError(field: field, "must be a month, YYYY-MM") }
            return value
        case .decimal:
            guard case .string(let text) = value, let normal = Self.normalDecimal(text) else {
                throw ValidationError(field: field, "must be a positive decimal number with at most 12 digits before the point and 12 after, e.g. 1385.2")
            }
            return .string(normal)
        case .count(let max):
            guard case .int(let number) = value, (1...Int64(max)).contains(number) else {
                throw ValidationError(field: field, "must be a whole number from 1 to \(max)")
            }
            return value
        case .days(let maxCount):
            guard case .strings(let days) = value, days.allSatisfy({ Recurrence.day($0) != nil }) else {
                throw ValidationError(field: field, "must be a list of days, YYYY-MM-DD")
            }
            if days.count > maxCount { throw ValidationError(field: field, "at most \(maxCount) days") }
            return Self.isStrictlyAscending(days) ? value : .strings(Array(Set(days)).sorted())
        case .text(let maxLength, let nonEmpty):
            guard case .string(let raw) = value else { throw ValidationError(field: field, "must be a string") }
            return .string(try Self.checkedText(raw, maxLength: maxLength, nonEmpty: nonEmpty, field: field, refusingUnpairedBidi: refusingUnpairedBidi))
        case .textSet(let maxCount, let maxLength):
            guard case .strings(let texts) = value else { throw ValidationError(field: field, "must be a list of strings") }
            if texts.count > maxCount { throw ValidationError(field: field, "at most \(maxCount) items") }
            // Already a normal set (what every stored event holds): no copy, no sort.
            if Self.isStrictlyAscending(texts), texts.allSatisfy({ Self.isNormalText($0, maxLength: maxLength, nonEmpty: true) }) { return value }
            var cleaned: Set<String> = []
            for text in texts {
                cleaned.insert(try Self.checkedText(text, maxLength: maxLength, nonEmpty: true, field: field, refusingUnpairedBidi: refusingUnpairedBidi))
            }
            return .strings(cleaned.sorted())
        case .digests(let maxCount):
            guard case .strings(let digests) = value else { throw ValidationError(field: field, "must be a list of SHA-256 hex digests") }
            let isDigest = { (text: String) in text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) } }
            if !digests.allSatisfy(isDigest) { throw ValidationError(field: field, "each must be a lowercase SHA-256 hex digest") }
            if digests.count > maxCount { throw ValidationError(field: field, "at most \(maxCount) items") }
            return Self.isStrictlyAscending(digests) ? value : .strings(Set(digests).sorted())
        case .bools(let maxCount):
            guard case .bools(let flags) = value else { throw ValidationError(field: field, "must be a list of booleans") }
            if flags.count > maxCount { throw ValidationError(field: field, "at most \(maxCount) items") }
            return value
        case .bool:
            guard case .bool = value else { throw ValidationError(field: field, "must be true or false") }
            return value
        case .json(let maxBytes):
            guard case .json(let json) = value else { throw ValidationError(field: field, "must be a JSON value") }
            if json.utf8.count > maxBytes { throw ValidationError(field: field, "must be at most \(maxBytes) bytes of JSON") }
            return .json(try CanonicalJSON.normalize(json, field: field))
        case .shares(let maxCount):
            let problem = ValidationError(field: field, "must be an object of 1 to \(maxCount) names to whole numbers from 1 to \(Limits.maxAmount)")
            guard case .json(let json) = value, json.utf8.count <= 64 * 1024, case .object(let pairs)? = try? StrictJSON.parse(Array(json.utf8)),
                (1...maxCount).contains(pairs.count)
            else { throw problem }
            var people: [(String, JSONText)] = []
            for (name, number) in pairs {
                let trimmed = try Self.checkedText(name, maxLength: 64, nonEmpty: true, field: field, refusingUnpairedBidi: refusingUnpairedBidi)
                let whole: Int64
                switch number {
                case .integer(let value): whole = value
                case .number(let text): guard let value = text.wholeNumberWithZeroFraction else { throw problem }; whole = value
                default: throw problem
                }
                guard (1...Limits.maxAmount).contains(whole), !people.contains(where: { $0.0 == trimmed }) else { throw problem }
                people.append((trimmed, .int(whole)))
            }
            return .json(JSONText.object(people.sorted { $0.0 < $1.0 }).serialized)
        }
    }

    /// Text trimmed of surrounding blanks, after checking its length in Unicode code points as
    /// sent (what JSON Schema's maxLength counts), that it holds no control characters but
    /// newline and tab, and (`refusingUnpairedBidi`) no unpaired directional control.
    static func checkedText(_ raw: String, maxLength: Int, nonEmpty: Bool, field: String, refusingUnpairedBidi: Bool = true) throws(ValidationError) -> String {
        // Most text is already in normal form: one pass over it decides (an incoming bundle
        // checks every event's text, at hundreds of thousands a second; Foundation's trimming
        // and Unicode property lookups for every character cost more than the rest of the check).
        if isNormalText(raw, maxLength: maxLength, nonEmpty: nonEmpty) { return raw }
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)  // the slow path: something to refuse or trim
        if nonEmpty, trimmed.isEmpty { throw ValidationError(field: field, "must not be empty") }
        if raw.unicodeScalars.count > maxLength { throw ValidationError(field: field, "must be at most \(maxLength) characters") }
        if containsControlCharacter(raw, allowingNewlineAndTab: true) { throw ValidationError(field: field, "must not contain control characters") }
        if refusingUnpairedBidi, !BidiControls.arePaired(raw) {
            throw ValidationError(
                field: field,
                "holds a right-to-left or left-to-right override, embedding or isolate (U+202A–202E, U+2066–2069) "
                    + "that is not closed in its line: close each with U+202C or U+2069, or leave them out")
        }
        return trimmed
    }

    /// True if `raw` passes the text rules and trimming would not change it: within
    /// `maxLength` code points, no control character but newline and tab, no directional
    /// control (paired ones too: the slow path decides), not blank when `nonEmpty`, and no
    /// whitespace at either end. Decided from the UTF-8 bytes (no allocation);
    /// false sends the caller to the slow path, which says what is wrong or trims.
    @inline(__always)
    static func isNormalText(_ raw: String, maxLength: Int, nonEmpty: Bool) -> Bool {
        var text = raw
        return text.withUTF8 { bytes in
            guard let firstByte = bytes.first, let lastByte = bytes.last else { return !nonEmpty }
            guard !containsControlCharacter(bytes, allowingNewlineAndTab: true), !BidiControls.mayContain(bytes) else { return false }
            // Code points are the bytes that are not continuation bytes (10xxxxxx).
            guard bytes.lazy.filter({ $0 & 0xC0 != 0x80 }).count <= maxLength else { return false }
            if firstByte < 0x80, lastByte < 0x80 { return !isTrimmed(Unicode.Scalar(firstByte)) && !isTrimmed(Unicode.Scalar(lastByte)) }
            guard let first = raw.unicodeScalars.first, let last = raw.unicodeScalars.last else { return false }
            return !isTrimmed(first) && !isTrimmed(last)
        }
    }

    /// Whether `text` holds a control character (category Cc: U+0000–001F, U+007F–009F, but
    /// newline and tab if allowed), read from its UTF-8 bytes without a Unicode property lookup
    /// per character.
    public static func containsControlCharacter(_ text: String, allowingNewlineAndTab: Bool = false) -> Bool {
        var text = text
        return text.withUTF8 { containsControlCharacter($0, allowingNewlineAndTab: allowingNewlineAndTab) }
    }

    /// The same, on UTF-8 bytes: U+0000–001F and U+007F are one byte, U+0080–009F are C2 80…C2 9F.
    static func containsControlCharacter(_ bytes: UnsafeBufferPointer<UInt8>, allowingNewlineAndTab: Bool) -> Bool {
        var previous: UInt8 = 0
        for byte in bytes {
            if byte < 0x20 ? !(allowingNewlineAndTab && (byte == 0x0A || byte == 0x09)) : (byte == 0x7F || (previous == 0xC2 && byte <= 0x9F && byte >= 0x80)) {
                return true
            }
            previous = byte
        }
        return false
    }

    /// What `trimmingCharacters(in: .whitespacesAndNewlines)` removes: tab to carriage return,
    /// space, U+0085, the separators (Zs, Zl, Zp), and U+200B, which Foundation still counts as
    /// a space — read off this Foundation by trimming every scalar (`NormalTextTests` holds the
    /// two to agreement).
    static func isTrimmed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200B, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    /// Sorted without duplicates, as a normal set is stored.
    static func isStrictlyAscending(_ texts: [String]) -> Bool {
        zip(texts, texts.dropFirst()).allSatisfy { $0 < $1 }
    }
}

extension FieldKind {
    /// `YYYY-MM` with a year 0001–9999 and a month 01–12.
    public static func isMonth(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 7, bytes[4] == UInt8(ascii: "-"),
            bytes.enumerated().allSatisfy({ $0.offset == 4 || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0.element) }),
            let year = Int(text.prefix(4)), let month = Int(text.suffix(2))
        else { return false }
        return year >= 1 && (1...12).contains(month)
    }
}
