import Foundation

/// The rules every event obeys wherever it was written, read from the entities' `EntitySpec`s.
///
/// A local write (CLI, HTTP, import) passes through `validate`, which also puts its values in
/// normal form; an event from another replica (bundle, push, pull) passes through
/// `checkIncoming`, which holds it to the same rules and requires the normal form its writer
/// must have produced. `TallyLedger.Ledger` is the one place that calls the first, and
/// `TallySync.IncomingEvents` the second, so the log never holds an event the views could not show.
public enum EntitySchema {
    /// Checks a write and returns its properties in normal form (tag sets sorted, text trimmed).
    ///
    /// Creates must carry every required property; updates must set at least one; deletes
    /// set none. Each value must have the property's type and lie within `Limits`.
    public static func validate(
        _ type: EntityType, _ operation: EventOperation, _ properties: PropertyMap,
        schemaVersion: UInt16 = Event.currentSchemaVersion
    ) throws(ValidationError) -> PropertyMap {
        let spec = EntitySpec.of(type)
        var normalized = PropertyMap()
        for (name, value) in properties {
            normalized[name] = try field(name, of: spec, schemaVersion).normalize(value, schemaVersion: schemaVersion)
        }
        try checkOperation(spec, operation, properties)
        return normalized
    }

    /// The field `name` of `spec`, if events of `schemaVersion` may set it.
    static func field(_ name: PropertyName, of spec: EntitySpec, _ schemaVersion: UInt16) throws(ValidationError) -> FieldSpec {
        guard let field = spec.field(name), field.since <= schemaVersion else {
            throw ValidationError(
                field: name.jsonName,
                "\(spec.type.withArticle) has no property '\(name.jsonName)'"
                    + (spec.field(name) != nil ? " in event schema version \(schemaVersion)" : ""))
        }
        return field
    }

    /// Creates carry every required property; updates set at least one; deletes set none.
    static func checkOperation(_ spec: EntitySpec, _ operation: EventOperation, _ properties: PropertyMap) throws(ValidationError) {
        switch operation {
        case .delete:
            if !properties.isEmpty { throw ValidationError(field: nil, "a delete sets no properties") }
        case .update:
            if properties.isEmpty { throw ValidationError(field: nil, "an update must change at least one property") }
        case .create:
            for field in spec.fields where field.isRequired && (properties[field.name] == nil || properties[field.name] == .null) {
                throw ValidationError(field: field.name.jsonName, "required when creating \(spec.type.withArticle)")
            }
        }
    }

    /// Checks an event written elsewhere against the rules of its schema version: the id's
    /// form, the properties' types, ranges, lengths and list sizes, and that every value is
    /// already in normal form (canonical JSON, sorted sets, trimmed text) — an honest writer
    /// wrote it so, and views compare values byte for byte.
    public static func checkIncoming(_ event: Event) throws(ValidationError) {
        switch (event.entityType, event.entityID) {
        case (.setting, .settingKey(let key)):
            try validateSettingKey(key)
            try validateSettingScope(key, isLocal: event.isLocalOnly)
        case (.setting, .uuid): throw ValidationError(field: "id", "a setting is named by a key, not a UUID")
        case (_, .settingKey): throw ValidationError(field: "id", "a \(event.entityType) is named by a UUID")
        case (_, .uuid): break
        }
        if event.isLocalOnly, event.entityType != .setting { throw ValidationError(field: "scope", "only a setting can be local-only") }
        // Checked in place, without building a normalized copy: a first sync checks every event.
        let spec = EntitySpec.of(event.entityType)
        if event.schemaVersion < spec.since {
            throw ValidationError(
                field: nil, "\(spec.type.withArticle) cannot be written in event schema version \(event.schemaVersion) (it exists since \(spec.since))")
        }
        for (name, value) in event.properties where try field(name, of: spec, event.schemaVersion).normalize(value, schemaVersion: event.schemaVersion) != value
        {
            throw ValidationError(field: name.jsonName, "the value is not in normal form (untrimmed text, an unsorted set or non-canonical JSON)")
        }
        try checkOperation(spec, event.operation, event.properties)
        try validateActor(event.actor)
    }

    /// Checks who a write is recorded as: at most `Limits.maxActorBytes` bytes of UTF-8, no
    /// control characters (the audit trail prints it; a terminal must not take it as commands).
    public static func validateActor(_ actor: String) throws(ValidationError) {
        if actor.utf8.count > Limits.maxActorBytes { throw ValidationError(field: "actor", "must be at most \(Limits.maxActorBytes) bytes") }
        if FieldKind.containsControlCharacter(actor) {
            throw ValidationError(field: "actor", "must not contain control characters")
        }
    }

    /// Local-only settings are named `local.…` and replicated ones never are, so a setting from
    /// a peer can never land on a local-only one of this replica (one key, one scope, everywhere).
    public static let localSettingPrefix = "local."

    /// The scope a setting key names: local-only for `local.…`, else replicated.
    public static func isLocalSettingKey(_ key: String) -> Bool { key.hasPrefix(localSettingPrefix) }

    /// Checks that a setting's scope is the one its key names.
    public static func validateSettingScope(_ key: String, isLocal: Bool) throws(ValidationError) {
        guard isLocal == isLocalSettingKey(key) else {
            throw ValidationError(
                field: "scope",
                isLocal
                    ? "a local-only setting's key starts with '\(localSettingPrefix)' (e.g. \(localSettingPrefix)\(key)), so no replicated setting can share it"
                    : "keys starting with '\(localSettingPrefix)' name local-only settings, which never leave their replica")
        }
    }

    /// Checks a setting key: a letter, then up to 63 letters, digits, '.' or '_' (ASCII), e.g.
    /// `currency.default`. With no '-' a key can never be mistaken for an entity's UUID; the
    /// OpenAPI document states the same rule as a pattern.
    public static func validateSettingKey(_ key: String) throws(ValidationError) {
        let bytes = Array(key.utf8)
        func isLetter(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        }
        func isAllowed(_ byte: UInt8) -> Bool {
            isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
        }
        guard let first = bytes.first, bytes.count <= Limits.maxSettingKeyBytes, isLetter(first), bytes.allSatisfy(isAllowed) else {
            throw ValidationError(field: "key", "must be a letter then up to \(Limits.maxSettingKeyBytes - 1) letters, digits, '.' or '_'")
        }
    }
}
