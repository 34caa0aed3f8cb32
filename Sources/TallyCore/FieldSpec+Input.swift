import Foundation

extension FieldSpec {
    /// The value a JSON request field stands for. Only the JSON type is checked here; ranges,
    /// lengths and normal form follow in `normalize`, shared by every way a value arrives.
    public func value(fromJSON json: JSONValue) throws(ValidationError) -> PropertyValue {
        let field = name.jsonName
        if case .null = json { return .null }
        switch kind {
        case .amount, .signedAmount:
            return .int(try Self.wholeNumber(json, field: field, "must be a whole number of minor units (no fraction, exponent or overflow)"))
        case .count:
            return .int(try Self.wholeNumber(json, field: field, "must be a whole number (no fraction, exponent or overflow)"))
        case .dateTime:
            guard case .string(let text) = json, let date = DateTime(iso8601: text) else {
                throw ValidationError(field: field, "must be an ISO 8601 date-time, e.g. 2026-03-01T09:30:00+09:00")
            }
            return .dateTime(date)
        case .reference:
            guard case .string(let text) = json, let uuid = UUID(uuidString: text) else { throw ValidationError(field: field, "must be a UUID or null") }
            return .uuid(uuid)
        case .textSet, .digests, .days:
            return .strings(try Self.array(json, of: "strings", field: field) { if case .string(let text) = $0 { text } else { nil } })
        case .bools:
            return .bools(try Self.array(json, of: "booleans", field: field) { if case .bool(let flag) = $0 { flag } else { nil } })
        case .bool:
            guard case .bool(let flag) = json else { throw ValidationError(field: field, "must be true or false") }
            return .bool(flag)
        case .json, .shares:
            return .json(json.canonicalText)
        case .choice, .currency, .text, .month:
            guard case .string(let text) = json else { throw ValidationError(field: field, "must be a string") }
            return .string(text)
        case .decimal:
            switch json {
            case .string(let text), .number(let text): return .string(text)
            case .integer(let number): return .string(String(number))
            default: throw ValidationError(field: field, "must be a decimal number, e.g. 1385.2")
            }
        }
    }

    /// A JSON integer. JSON Schema counts 64.0 as an integer, so a zero fraction is accepted;
    /// 12.5, 1e3 and overflow are not.
    static func wholeNumber(_ json: JSONValue, field: String, _ message: String) throws(ValidationError) -> Int64 {
        switch json {
        case .integer(let number): return number
        case .number(let text):
            guard let whole = text.wholeNumberWithZeroFraction else { throw ValidationError(field: field, message) }
            return whole
        default: throw ValidationError(field: field, "must be an integer")
        }
    }

    /// The items of a JSON array, each one `item` must accept; throws naming the field otherwise.
    static func array<Item>(_ json: JSONValue, of what: String, field: String, _ item: (JSONValue) -> Item?) throws(ValidationError) -> [Item] {
        guard case .array(let values) = json else { throw ValidationError(field: field, "must be an array of \(what)") }
        var items: [Item] = []
        items.reserveCapacity(values.count)
        for value in values {
            guard let converted = item(value) else { throw ValidationError(field: field, "must be an array of \(what)") }
            items.append(converted)
        }
        return items
    }

    /// The value a command-line flag's text stands for (`none` clears an optional field). A
    /// set-valued field gets a one-item set; a command whose flag repeats builds the set itself.
    public func value(fromText text: String) throws(ValidationError) -> PropertyValue {
        let field = name.jsonName
        if isNullable, text == "none" { return .null }
        switch kind {
        case .amount, .signedAmount:
            guard let amount = Int64(text) else {
                throw ValidationError(field: field, "must be a whole number of minor units (e.g. 12000 for ₩12,000 or 1250 for $12.50)")
            }
            return .int(amount)
        case .dateTime:
            guard let date = DateTime(iso8601: text) else {
                throw ValidationError(field: field, "expected ISO 8601 such as 2026-03-01 or 2026-03-01T09:30:00+09:00")
            }
            return .dateTime(date)
        case .reference:
            guard let uuid = UUID(uuidString: text) else { throw ValidationError(field: field, "not a UUID (or 'none' to clear it)") }
            return .uuid(uuid)
        case .textSet, .digests, .days:
            return .strings([text])
        case .count:
            guard let number = Int64(text) else { throw ValidationError(field: field, "must be a whole number") }
            return .int(number)
        case .bools:
            if text.isEmpty { return .bools([]) }
            var checks: [Bool] = []
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                switch part.trimmingCharacters(in: .whitespaces) {
                case "1", "true", "x": checks.append(true)
                case "0", "false", "-": checks.append(false)
                default: throw ValidationError(field: field, "expected a comma-separated list of 1 and 0, e.g. 1,0,1")
                }
            }
            return .bools(checks)
        case .bool:
            switch text {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: throw ValidationError(field: field, "must be true or false")
            }
        case .json:
            return .json(text)
        case .shares:
            // "minji=1,jisoo=2" (or a JSON object as is); the names and numbers are checked in `normalize`.
            if text.hasPrefix("{") { return .json(text) }
            var pairs: [(String, JSONText)] = []
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                let halves = part.split(separator: "=", maxSplits: 1).map(String.init)
                guard halves.count == 2, let number = Int64(halves[1].trimmingCharacters(in: .whitespaces)) else {
                    throw ValidationError(field: field, "must be NAME=NUMBER,NAME=NUMBER (e.g. minji=1,jisoo=1)")
                }
                pairs.append((halves[0], .int(number)))
            }
            return .json(JSONText.object(pairs).serialized)
        case .choice, .currency, .text, .month, .decimal:
            return .string(text)
        }
    }
}

extension EntitySpec {
    /// The id (if the client chose one) and the properties of a JSON object body: every field
    /// must be one the entity has, with the JSON type it takes.
    public func decode(_ body: JSONValue) throws(ValidationError) -> (id: UUID?, properties: PropertyMap) {
        guard case .object(let members) = body else { throw ValidationError(field: nil, "the body must be a JSON object", kind: .malformed) }
        var id: UUID?
        var properties = PropertyMap()
        for (key, json) in members {
            if key == "id" {
                guard case .string(let text) = json, let uuid = UUID(uuidString: text) else { throw ValidationError(field: "id", "must be a UUID") }
                id = uuid
                continue
            }
            guard let field = field(jsonName: key) else {
                throw ValidationError(
                    field: key, "\(type.withArticle) has no field '\(key)'; fields: \(fields.map(\.name.jsonName).joined(separator: ", "))",
                    kind: .unknownField)
            }
            properties[field.name] = try field.value(fromJSON: json)
        }
        return (id, properties)
    }
}

extension String {
    /// `64` for "64.0" or "64.000" (digits, a point, zeros only); nil for anything else.
    var wholeNumberWithZeroFraction: Int64? {
        let parts = split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[1].isEmpty, parts[1].allSatisfy({ $0 == "0" }) else { return nil }
        return Int64(parts[0])
    }
}
