import Foundation
import TallyCore
import TallyLog
import TallyStore

/// The path every CLI write takes: take the writer lock, bring the views up to date, then
/// the shared `LedgerSession` write (check, append durably, project).
enum LedgerWrite {
    /// Appends the draft `build` returns, and gives back the event and the entity afterwards.
    static func perform(_ global: GlobalOptions, build: (any LedgerLookup, _ defaultCurrency: String) throws -> EventDraft) throws -> (Event, LedgerState.Entity?) {
        let directory = try global.open()
        let writer = try directory.openWriter(configuration: global.logConfiguration)
        defer { writer.close() }
        let projector = try Projector(directory: directory)
        try projector.catchUp()
        return try LedgerSession(writer: writer, projector: projector).write(actor: global.resolvedActor, build)
    }
}

/// Turns flag text into property values, with one-line errors naming the flag.
enum FlagValue {
    static func amount(_ text: String) throws -> PropertyValue {
        guard let value = Int64(text), value > 0, value <= Limits.maxAmount else {
            throw CLIError("invalid --amount '\(text)': must be a whole number of minor units between 1 and \(Limits.maxAmount) (e.g. 12000 for ₩12,000 or 1250 for $12.50)")
        }
        return .int(value)
    }

    static func date(_ text: String, flag: String) throws -> PropertyValue {
        .dateTime(try dateTime(text, flag: flag))
    }

    static func dateTime(_ text: String, flag: String) throws -> DateTime {
        guard let date = DateTime(iso8601: text) else {
            throw CLIError("invalid --\(flag) '\(text)': expected ISO 8601 such as 2026-03-01 or 2026-03-01T09:30:00+09:00")
        }
        return date
    }

    /// A UUID, or `none` to clear the reference.
    static func reference(_ text: String, flag: String) throws -> PropertyValue {
        if text == "none" { return .null }
        guard let uuid = UUID(uuidString: text) else { throw CLIError("invalid --\(flag) '\(text)': not a UUID (or 'none' to clear it)") }
        return .uuid(uuid)
    }

    static func id(_ text: String) throws -> UUID {
        guard let uuid = UUID(uuidString: text) else { throw CLIError("invalid id '\(text)': not a UUID") }
        return uuid
    }

    static func checks(_ text: String) throws -> PropertyValue {
        if text.isEmpty { return .bools([]) }
        var checks: [Bool] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            switch part.trimmingCharacters(in: .whitespaces) {
            case "1", "true", "x": checks.append(true)
            case "0", "false", "-": checks.append(false)
            default: throw CLIError("invalid --checks '\(text)': expected a comma-separated list of 1 and 0, e.g. 1,0,1")
            }
        }
        return .bools(checks)
    }

    static func text(_ text: String?) -> PropertyValue? { text.map(PropertyValue.string) }
}

/// Prints what a write command reports: the new id alone, or the entity as JSON.
enum WriteOutput {
    static func printCreated(_ event: Event, _ entity: LedgerState.Entity?, json: Bool) {
        if json, let entity { print(EntityJSON.render(entity).serialized) } else { print(event.entityID.description) }
    }

    static func printUpdated(_ entity: LedgerState.Entity?, json: Bool) {
        if json, let entity { print(EntityJSON.render(entity).serialized) }
    }

    static func printDeleted(_ event: Event, json: Bool) {
        if json { print(JSONText.object([("id", .string(event.entityID.description)), ("deleted", .bool(true))]).serialized) }
    }
}

/// An entity as one JSON object with the field names of DESIGN.md §2.
enum EntityJSON {
    static func render(_ entity: LedgerState.Entity) -> JSONText {
        let values = entity.values
        if entity.type == .setting {
            return .object([("key", .string(entity.id.description)), ("value", values[.value]?.json ?? .null),
                            ("scope", .string(entity.isLocalOnly ? "local" : "replicated"))])
        }
        var fields: [(String, JSONText)] = [("id", .string(entity.id.description))]
        for name in EntitySchema.allowedProperties(of: entity.type) {
            fields.append((name.jsonName, values[name]?.json ?? defaultJSON(name)))
        }
        if entity.type == .todo {
            fields.append(("percentage", .double(Todo.percentage(values[.checks]))))
        }
        return .object(fields)
    }

    private static func defaultJSON(_ name: PropertyName) -> JSONText {
        switch name {
        case .tags, .attachments, .checks: .array([])
        default: .null
        }
    }
}
