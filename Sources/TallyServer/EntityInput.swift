import Foundation
import TallyCore

/// Request bodies to property maps: every field must be one the entity has, with the JSON type
/// it takes; an amount must be written as an integer. Range and format checks follow in
/// `EntitySchema`, shared with the CLI.
public enum EntityInput {
    /// The id (if the client chose one) and the properties of a JSON object body.
    public static func parse(_ body: JSONValue, for type: EntityType) throws -> (id: UUID?, properties: PropertyMap) {
        guard case .object(let fields) = body else { throw APIError(.badRequest, "invalid_body", "the body must be a JSON object") }
        var id: UUID?
        var properties = PropertyMap()
        let allowed = EntitySchema.allowedProperties(of: type)
        for (key, value) in fields {
            if key == "id" {
                guard case .string(let text) = value, let uuid = UUID(uuidString: text) else { throw invalid("id", "must be a UUID") }
                id = uuid
                continue
            }
            guard let name = PropertyName(jsonName: key), allowed.contains(name) else {
                throw APIError(.badRequest, "unknown_field", "a \(type) has no field '\(key)'; fields: \(allowed.map(\.jsonName).joined(separator: ", "))")
            }
            properties[name] = try convert(value, for: name)
        }
        return (id, properties)
    }

    static func convert(_ value: JSONValue, for name: PropertyName) throws -> PropertyValue {
        let field = name.jsonName
        if value == .null { return .null }
        switch name {
        case .amount:
            switch value {
            case .integer(let number): return .int(number)
            // JSON Schema counts 64.0 as an integer, so a zero fraction is accepted; 12.5, 1e3 and overflow are not.
            case .number(let text) where text.wholeNumberWithZeroFraction != nil: return .int(text.wholeNumberWithZeroFraction!)
            case .number: throw invalid(field, "must be a whole number of minor units (no fraction, exponent or overflow)")
            default: throw invalid(field, "must be an integer")
            }
        case .date, .startDate, .endDate:
            guard case .string(let text) = value, let date = DateTime(iso8601: text) else { throw invalid(field, "must be an ISO 8601 date-time, e.g. 2026-03-01T09:30:00+09:00") }
            return .dateTime(date)
        case .categoryId, .parentId:
            guard case .string(let text) = value, let uuid = UUID(uuidString: text) else { throw invalid(field, "must be a UUID or null") }
            return .uuid(uuid)
        case .tags, .attachments:
            guard case .array(let items) = value else { throw invalid(field, "must be an array of strings") }
            return .strings(try items.map { item in
                guard case .string(let text) = item else { throw invalid(field, "must be an array of strings") }
                return text
            })
        case .checks:
            guard case .array(let items) = value else { throw invalid(field, "must be an array of booleans") }
            return .bools(try items.map { item in
                guard case .bool(let flag) = item else { throw invalid(field, "must be an array of booleans") }
                return flag
            })
        case .isChallenge, .isCompleted:
            guard case .bool(let flag) = value else { throw invalid(field, "must be true or false") }
            return .bool(flag)
        case .value:
            return .json(value.canonicalText)
        default:
            guard case .string(let text) = value else { throw invalid(field, "must be a string") }
            return .string(text)
        }
    }

    static func invalid(_ field: String, _ message: String) -> APIError {
        APIError(.badRequest, "invalid_field", "invalid \(field): \(message)")
    }
}

extension String {
    /// `64` for "64.0" or "64.000" (digits, a point, zeros only); nil for anything else.
    fileprivate var wholeNumberWithZeroFraction: Int64? {
        let parts = split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[1].isEmpty, parts[1].allSatisfy({ $0 == "0" }) else { return nil }
        return Int64(parts[0])
    }
}
