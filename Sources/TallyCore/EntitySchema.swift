import Foundation

/// Which properties each entity type has, what values they accept, and which a create needs.
///
/// Every write — CLI, HTTP, import — passes through `validate`, so the log never holds an
/// event the views could not show.
public enum EntitySchema {
    /// The properties an entity type may set.
    public static func allowedProperties(of type: EntityType) -> [PropertyName] {
        switch type {
        case .expense: [.kind, .amount, .currency, .date, .categoryId, .payment, .memo, .tags, .repeat, .attachments]
        case .category: [.name, .parentId, .icon, .kind]
        case .todo: [.title, .memo, .startDate, .endDate, .checks, .isChallenge, .isCompleted, .attachments]
        case .setting: [.value]
        }
    }

    /// Properties a create must carry after defaults are filled in.
    public static func required(for type: EntityType) -> [PropertyName] {
        switch type {
        case .expense: [.kind, .amount, .currency, .date, .repeat]
        case .category: [.name, .kind]
        case .todo: [.title, .checks, .isChallenge, .isCompleted]
        case .setting: [.value]
        }
    }

    /// Values a create gets for properties it leaves out.
    public static func defaults(for type: EntityType, defaultCurrency: String, now: DateTime) -> PropertyMap {
        switch type {
        case .expense: [.kind: .string("expense"), .currency: .string(defaultCurrency), .date: .dateTime(now), .repeat: .string("none")]
        case .category: [.kind: .string("expense")]
        case .todo: [.checks: .bools([]), .isChallenge: .bool(false), .isCompleted: .bool(false)]
        case .setting: [:]
        }
    }

    /// Checks a write and returns its properties in normal form (tag sets sorted, text trimmed).
    ///
    /// Creates must carry every required property; updates must set at least one; deletes
    /// set none. Each value must have the property's type and lie within `Limits`.
    public static func validate(_ type: EntityType, _ operation: EventOperation, _ properties: PropertyMap) throws(ValidationError) -> PropertyMap {
        let allowed = Set(allowedProperties(of: type))
        for name in properties.keys where !allowed.contains(name) {
            throw ValidationError(field: name.jsonName, "a \(type) has no property '\(name.jsonName)'")
        }
        switch operation {
        case .delete:
            if !properties.isEmpty { throw ValidationError(field: nil, "a delete sets no properties") }
            return [:]
        case .update:
            if properties.isEmpty { throw ValidationError(field: nil, "an update must change at least one property") }
        case .create:
            for name in required(for: type) where properties[name] == nil || properties[name] == .null {
                throw ValidationError(field: name.jsonName, "required when creating a \(type)")
            }
        }
        var normalized: PropertyMap = [:]
        for (name, value) in properties {
            normalized[name] = try normalize(name, value, of: type)
        }
        return normalized
    }

    static func normalize(_ name: PropertyName, _ value: PropertyValue, of type: EntityType) throws(ValidationError) -> PropertyValue {
        let field = name.jsonName
        // Lengths count Unicode code points of the text as sent (what JSON Schema's maxLength
        // counts); the stored text is trimmed of surrounding blanks.
        func checkedText(_ raw: String, _ maxLength: Int, nonEmpty: Bool) throws(ValidationError) -> String {
            let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if nonEmpty, trimmed.isEmpty { throw ValidationError(field: field, "must not be empty") }
            if raw.unicodeScalars.count > maxLength { throw ValidationError(field: field, "must be at most \(maxLength) characters") }
            if raw.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }) {
                throw ValidationError(field: field, "must not contain control characters")
            }
            return trimmed
        }
        func text(_ maxLength: Int, nonEmpty: Bool) throws(ValidationError) -> PropertyValue {
            guard case .string(let raw) = value else { throw ValidationError(field: field, "must be a string") }
            return .string(try checkedText(raw, maxLength, nonEmpty: nonEmpty))
        }
        func oneOf(_ choices: [String]) throws(ValidationError) -> PropertyValue {
            guard case .string(let raw) = value, choices.contains(raw) else {
                throw ValidationError(field: field, "must be one of \(choices.joined(separator: ", "))")
            }
            return value
        }
        func optional(_ check: () throws(ValidationError) -> PropertyValue) throws(ValidationError) -> PropertyValue {
            value == .null ? .null : try check()
        }
        switch name {
        case .kind:
            return try oneOf(["income", "expense"])
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
        case .date:
            guard case .dateTime = value else { throw ValidationError(field: field, "must be an ISO 8601 date-time with offset") }
            return value
        case .startDate, .endDate:
            return try optional { () throws(ValidationError) in
                guard case .dateTime = value else { throw ValidationError(field: field, "must be an ISO 8601 date-time with offset") }
                return value
            }
        case .categoryId, .parentId:
            return try optional { () throws(ValidationError) in
                guard case .uuid = value else { throw ValidationError(field: field, "must be a UUID") }
                return value
            }
        case .payment, .icon:
            return try optional { () throws(ValidationError) in try text(Limits.maxShortTextLength, nonEmpty: false) }
        case .memo:
            return try optional { () throws(ValidationError) in try text(Limits.maxMemoLength, nonEmpty: false) }
        case .name:
            return try text(Limits.maxNameLength, nonEmpty: true)
        case .title:
            return try text(Limits.maxTitleLength, nonEmpty: true)
        case .repeat:
            return try oneOf(["none", "daily", "weekly", "monthly", "yearly"])
        case .tags:
            guard case .strings(let tags) = value else { throw ValidationError(field: field, "must be a list of strings") }
            if tags.count > Limits.maxTags { throw ValidationError(field: field, "at most \(Limits.maxTags) tags") }
            var cleaned: Set<String> = []
            for tag in tags { cleaned.insert(try checkedText(tag, Limits.maxShortTextLength, nonEmpty: true)) }
            return .strings(cleaned.sorted())
        case .attachments:
            guard case .strings(let hashes) = value else { throw ValidationError(field: field, "must be a list of SHA-256 hex digests") }
            let isDigest = { (text: String) in text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) } }
            if !hashes.allSatisfy(isDigest) { throw ValidationError(field: field, "each attachment must be a lowercase SHA-256 hex digest") }
            if hashes.count > Limits.maxAttachments { throw ValidationError(field: field, "at most \(Limits.maxAttachments) attachments") }
            return .strings(Set(hashes).sorted())
        case .checks:
            guard case .bools(let checks) = value else { throw ValidationError(field: field, "must be a list of booleans") }
            if checks.count > Limits.maxChecks { throw ValidationError(field: field, "at most \(Limits.maxChecks) checks") }
            return value
        case .isChallenge, .isCompleted:
            guard case .bool = value else { throw ValidationError(field: field, "must be true or false") }
            return value
        case .value:
            guard case .json(let json) = value else { throw ValidationError(field: field, "must be a JSON value") }
            if json.utf8.count > Limits.maxReplicatedSettingsBytes {
                throw ValidationError(field: field, "must be at most \(Limits.maxReplicatedSettingsBytes) bytes of JSON")
            }
            return .json(try CanonicalJSON.normalize(json, field: field))
        }
    }

    /// Checks a setting key: a letter, then up to 63 letters, digits, '.' or '_' (ASCII), e.g.
    /// `currency.default`. With no '-' a key can never be mistaken for an entity's UUID; the
    /// OpenAPI document states the same rule as a pattern.
    public static func validateSettingKey(_ key: String) throws(ValidationError) {
        let bytes = Array(key.utf8)
        func isLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) }
        func isAllowed(_ byte: UInt8) -> Bool {
            isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
        }
        guard let first = bytes.first, bytes.count <= Limits.maxSettingKeyBytes, isLetter(first), bytes.allSatisfy(isAllowed) else {
            throw ValidationError(field: "key", "must be a letter then up to \(Limits.maxSettingKeyBytes - 1) letters, digits, '.' or '_'")
        }
    }
}
