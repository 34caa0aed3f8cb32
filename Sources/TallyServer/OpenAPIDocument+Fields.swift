import TallyCore

/// The writable fields of each entity in the OpenAPI document, written from its `EntitySpec`
/// (every bound from `Limits`), so the document cannot disagree with what the API accepts.
extension OpenAPIDocument {
    /// No control characters but tab and newline (what `FieldKind.text` accepts), and no
    /// directional controls: the API takes them paired (`BidiControls`), which a pattern
    /// cannot say, so the document promises the simpler subset that is always accepted.
    static let printable = #"'^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]*$'"#
    /// The same, and at least one character that is not blank.
    static let printableNonBlank =
        #"'^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]*[^\s\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069][^\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]*$'"#

    /// A real calendar day, `YYYY-MM-DD` (the date part of `datePattern`).
    static let dayPattern = String(datePattern[..<datePattern.range(of: "([T ]")!.lowerBound]) + "$"

    /// The create and update bodies (`NameCreate`, `NamePatch`) of every entity the API writes
    /// (`EntityRoutes.all`), from its `EntitySpec`: schemas of the document's `components:`.
    static var writableSchemas: String {
        EntityRoutes.all.map { routes in
            let fields = writableFields(routes.type)
            return [
                "    \(routes.schema)Create:", "      type: object", "      additionalProperties: false",
                "      required: [\(createRequired(routes.type))]", "      properties:", "        id: {type: string, format: uuid}", fields,
                "    \(routes.schema)Patch:", "      type: object", "      additionalProperties: false", "      minProperties: 1", "      properties:",
                fields,
            ].joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// One `name: {schema}` line per field of `type`, indented for a schema's `properties:`.
    static func writableFields(_ type: EntityType) -> String {
        EntitySpec.of(type).fields.map { "        \($0.name.jsonName): \(schema($0))" }.joined(separator: "\n")
    }

    /// An entity as the views show it, from its `EntitySpec`: `id`, each shown field, then
    /// `added` — what the views add beside the fields (resolved names, derived values) — as
    /// the lines of a schema's `properties:`. An unset list shows empty, an unset nullable
    /// field null (`FieldSpec.unsetJSON`).
    static func shownFields(_ type: EntityType, added: [(String, String)]) -> String {
        let fields = EntitySpec.of(type).shownFields.map { ($0.name.jsonName, shownSchema($0)) }
        return ([("id", "{type: string, format: uuid}")] + fields + added).map { "        \($0): \($1)" }.joined(separator: "\n")
    }

    /// A shown field's schema: what the API accepts, except that text is not held to the
    /// printable pattern (directional controls the API took paired show as they were written).
    static func shownSchema(_ field: FieldSpec) -> String {
        let nullable = field.isNullable
        switch field.kind {
        case .text(let maxLength, _): return "{type: \(nullable ? #"[string, "null"]"# : "string"), maxLength: \(maxLength)}"
        case .textSet(let maxCount, _): return "{type: array, items: {type: string}, maxItems: \(maxCount)}"
        default: return schema(field)
        }
    }

    /// What the views add beside an entity's fields.
    static let categoryNames = [("categoryName", #"{type: [string, "null"]}"#), ("parentCategoryName", #"{type: [string, "null"]}"#)]
    static let missingAttachments = [
        ("missingAttachments", #"{type: array, items: {type: string}, description: "the attachments whose file this replica does not hold yet"}"#)
    ]

    /// The fields a create must name: required, with no default.
    static func createRequired(_ type: EntityType) -> String {
        EntitySpec.of(type).fieldsACreateNames.map(\.name.jsonName).joined(separator: ", ")
    }

    static func schema(_ field: FieldSpec) -> String {
        let nullable = field.isNullable
        func type(_ name: String) -> String { nullable ? #"[\#(name), "null"]"# : name }
        switch field.kind {
        case .choice(let words): return "{type: \(type("string")), enum: [\(words.joined(separator: ", "))]}"
        case .amount: return "{type: \(type("integer")), minimum: 1, maximum: \(Limits.maxAmount)}"
        case .signedAmount: return "{type: \(type("integer")), minimum: -\(Limits.maxAmount), maximum: \(Limits.maxAmount)}"
        case .currency: return "{type: \(type("string")), enum: [\(currencies)]}"
        case .dateTime: return #"{type: \#(type("string")), pattern: "\#(datePattern)", description: "ISO 8601 with offset, or a bare date (local midnight)"}"#
        case .reference: return "{type: \(type("string")), format: uuid}"
        case .count(let max): return "{type: \(type("integer")), minimum: 1, maximum: \(max)}"
        case .days(let maxCount):
            return #"{type: array, items: {type: string, pattern: "\#(dayPattern)"}, maxItems: \#(maxCount)}"#
        case .decimal: return #"{type: \#(type("string")), pattern: "^(0*[1-9][0-9]{0,11}([.][0-9]{1,12})?|0+[.][0-9]{0,11}[1-9])$"}"#
        case .month: return #"{type: \#(type("string")), pattern: "^([0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])$"}"#
        case .text(let maxLength, let nonEmpty):
            return "{type: \(type("string")), \(nonEmpty ? "minLength: 1, " : "")maxLength: \(maxLength), pattern: \(nonEmpty ? printableNonBlank : printable)}"
        case .textSet(let maxCount, let maxLength):
            return "{type: array, items: {type: string, minLength: 1, maxLength: \(maxLength), pattern: \(printableNonBlank)}, maxItems: \(maxCount)}"
        case .digests(let maxCount): return #"{type: array, items: {type: string, pattern: "^[0-9a-f]{64}$"}, maxItems: \#(maxCount)}"#
        case .bools(let maxCount): return "{type: array, items: {type: boolean}, maxItems: \(maxCount)}"
        case .bool: return "{type: \(type("boolean"))}"
        case .json: return "{description: any JSON value}"
        case .shares(let maxCount):
            return
                "{type: \(type("object")), minProperties: 1, maxProperties: \(maxCount), propertyNames: {minLength: 1, maxLength: 64, pattern: \(printableNonBlank)}, additionalProperties: {type: integer, minimum: 1, maximum: \(Limits.maxAmount)}}"
        }
    }
}
