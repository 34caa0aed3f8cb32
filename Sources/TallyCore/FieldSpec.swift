/// One property of one entity type: what it accepts, whether a create needs it, and since
/// which event schema version it exists.
///
/// This is the single statement of a field's rules. Request decoding and the CLI's flag text
/// (`FieldSpec+Input`), validation of local writes and of events from other replicas
/// (`FieldSpec+Normalize`, `EntitySchema`) and the OpenAPI schemas (`OpenAPIDocument+Fields`)
/// all read it, so a rule changed here changes everywhere at once.
public struct FieldSpec: Sendable {
    /// The property (its JSON name is `name.jsonName`).
    public let name: PropertyName
    /// The values it accepts.
    public let kind: FieldKind
    /// A create must carry it once defaults are filled in.
    public let isRequired: Bool
    /// `null` clears it.
    public let isNullable: Bool
    /// The first event schema version that has this field: an event of an older version that
    /// sets it is out of rule (its writer could not have meant it).
    public let since: UInt16
    /// One line for people: CLI help and the OpenAPI description.
    public let help: String
    /// The views show it: a key in the entity's JSON (the CLI's `--json`, the API, the web
    /// app) and, for an entity with a view table, its column there (`ViewTable`). Bookkeeping
    /// fields (what an imported row was) are kept in the entity's state only.
    public let isShown: Bool

    /// A field.
    public init(
        _ name: PropertyName, _ kind: FieldKind, required: Bool = false, nullable: Bool = false, since: UInt16 = 1, shown: Bool = true, help: String
    ) {
        self.name = name
        self.kind = kind
        self.isRequired = required
        self.isNullable = nullable
        self.since = since
        self.isShown = shown
        self.help = help
    }

    /// Its JSON when the entity has no value for it: an empty list for a list, false for a
    /// flag, else null.
    public var unsetJSON: JSONText {
        switch kind {
        case .days, .textSet, .digests, .bools: .array([])
        case .bool: .bool(false)
        default: .null
        }
    }
}

/// The shape of a field's values. Every bound comes from `Limits`.
public enum FieldKind: Sendable {
    /// One of a fixed set of words.
    case choice([String])
    /// A whole number of minor units, 1 … `Limits.maxAmount`.
    case amount
    /// A whole number of minor units that may be zero or negative (a balance: what a card or a
    /// loan owes), −`Limits.maxAmount` … `Limits.maxAmount`.
    case signedAmount
    /// An ISO 4217 code in capitals.
    case currency
    /// An ISO 8601 date-time with offset.
    case dateTime
    /// A calendar month, `YYYY-MM` (years 0001–9999).
    case month
    /// A positive decimal number as text (an exchange rate): up to 12 digits before the point
    /// and 12 after, no sign or exponent; normal form without leading or trailing zeros.
    case decimal
    /// A whole number 1 … `max`.
    case count(max: Int)
    /// A set of calendar days, `YYYY-MM-DD`, stored sorted without duplicates.
    case days(maxCount: Int)
    /// A category's UUID.
    case reference
    /// Text of at most `maxLength` code points, without control characters (newline and tab
    /// allowed), trimmed of surrounding blanks; `nonEmpty` refuses blank text.
    case text(maxLength: Int, nonEmpty: Bool)
    /// A set of short non-empty texts (tags), stored sorted without duplicates.
    case textSet(maxCount: Int, maxLength: Int)
    /// A set of lowercase SHA-256 hex digests (attachments), stored sorted without duplicates.
    case digests(maxCount: Int)
    /// An ordered list of booleans (a to-do's checks).
    case bools(maxCount: Int)
    /// true or false.
    case bool
    /// Any JSON value, stored as canonical text of at most `maxBytes` bytes.
    case json(maxBytes: Int)
    /// Who shares an expense, and by how much: a JSON object of 1 … `maxCount` people's names
    /// (1–64 characters, no control characters) to whole numbers 1 … `Limits.maxAmount`
    /// (shares, or minor units), stored as canonical JSON.
    case shares(maxCount: Int)
}
