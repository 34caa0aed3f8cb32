import Foundation

extension FieldSpec {
    /// `value` in normal form if the field accepts it (text trimmed, sets sorted without
    /// duplicates, JSON canonical); throws a `ValidationError` naming the field otherwise.
    public func normalize(_ value: PropertyValue) throws(ValidationError) -> PropertyValue {
        if value == .null {
            guard isNullable else { throw ValidationError(field: name.jsonName, "must not be null") }
            return .null
        }
        return try kind.normalize(value, field: name.jsonName)
    }
}

extension FieldKind {
    func normalize(_ value: PropertyValue, field: String) throws(ValidationError) -> PropertyValue {
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
        case .currency:
            guard case .string(let code) = value, Currency.isValid(code) else {
                throw ValidationError(field: field, "must be an ISO 4217 code in capitals, such as KRW or USD")
            }
            return value
        case .dateTime:
            guard case .dateTime(let date) = value else { throw ValidationError(field: field, "must be an ISO 8601 date-time with offset") }
            guard DateTime.supportedMillis.contains(date.epochMillis) else {
                throw ValidationError(field: field, "must lie between the years 1 and 9999 (UTC)")
            }
            guard abs(Int(date.offsetMinutes)) <= DateTime.maxOffsetMinutes else {
                throw ValidationError(field: field, "the UTC offset must lie within ±18:00")
            }
            return value
        case .reference:
            guard case .uuid = value else { throw ValidationError(field: field, "must be a UUID") }
            return value
        case .text(let maxLength, let nonEmpty):
            guard case .string(let raw) = value else { throw ValidationError(field: field, "must be a string") }
            return .string(try Self.checkedText(raw, maxLength: maxLength, nonEmpty: nonEmpty, field: field))
        case .textSet(let maxCount, let maxLength):
            guard case .strings(let texts) = value else { throw ValidationError(field: field, "must be a list of strings") }
            if texts.count > maxCount { throw ValidationError(field: field, "at most \(maxCount) items") }
            // Already a normal set (what every stored event holds): no copy, no sort.
            if Self.isStrictlyAscending(texts), texts.allSatisfy({ Self.isNormalText($0, maxLength: maxLength, nonEmpty: true) }) { return value }
            var cleaned: Set<String> = []
            for text in texts { cleaned.insert(try Self.checkedText(text, maxLength: maxLength, nonEmpty: true, field: field)) }
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
        }
    }

    /// Text trimmed of surrounding blanks, after checking its length in Unicode code points as
    /// sent (what JSON Schema's maxLength counts) and that it holds no control characters but
    /// newline and tab.
    static func checkedText(_ raw: String, maxLength: Int, nonEmpty: Bool, field: String) throws(ValidationError) -> String {
        // Most text is already in normal form: one pass over it decides (an incoming bundle
        // checks every event's text, at hundreds of thousands a second; Foundation's trimming
        // and Unicode property lookups for every character cost more than the rest of the check).
        if isNormalText(raw, maxLength: maxLength, nonEmpty: nonEmpty) { return raw }
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)  // the slow path: something to refuse or trim
        if nonEmpty, trimmed.isEmpty { throw ValidationError(field: field, "must not be empty") }
        if raw.unicodeScalars.count > maxLength { throw ValidationError(field: field, "must be at most \(maxLength) characters") }
        if raw.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }) {
            throw ValidationError(field: field, "must not contain control characters")
        }
        return trimmed
    }

    /// True if `raw` passes the text rules and trimming would not change it: within
    /// `maxLength` code points, no control character but newline and tab, not blank when
    /// `nonEmpty`, and no whitespace at either end. Decided in one pass over the scalars;
    /// false sends the caller to the slow path, which says what is wrong or trims.
    @inline(__always)
    static func isNormalText(_ raw: String, maxLength: Int, nonEmpty: Bool) -> Bool {
        var count = 0
        var first: Unicode.Scalar?
        var last: Unicode.Scalar?
        for scalar in raw.unicodeScalars {
            let value = scalar.value
            // General category Cc is exactly U+0000–001F and U+007F–009F.
            if value < 0x20 ? (value != 0x0A && value != 0x09) : (0x7F...0x9F).contains(value) { return false }
            if first == nil { first = scalar }
            last = scalar
            count += 1
            if count > maxLength { return false }
        }
        guard let first, let last else { return !nonEmpty }
        return !isTrimmed(first) && !isTrimmed(last)
    }

    /// What `trimmingCharacters(in: .whitespacesAndNewlines)` removes: tab to carriage return,
    /// U+0085, and the separators (Zs, Zl, Zp).
    static func isTrimmed(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x80 { return (0x09...0x0D).contains(value) || value == 0x20 }
        if value == 0x85 { return true }
        switch scalar.properties.generalCategory {
        case .spaceSeparator, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }

    /// Sorted without duplicates, as a normal set is stored.
    static func isStrictlyAscending(_ texts: [String]) -> Bool {
        zip(texts, texts.dropFirst()).allSatisfy { $0 < $1 }
    }
}
