import Foundation
import TallyCore
import TallyStore

/// Which expenses to list, read from named text parameters — `?month=…&tag=…` of the API or
/// the `--month … --tag …` flags of the CLI — with one set of rules and limits for both.
public struct ExpenseQuery: Sendable {
    /// The parameters a list takes.
    public static let parameters = ["month", "from", "to", "category", "tag", "payee", "text", "kind", "limit", "cursor"]

    /// The filter for the views.
    public private(set) var filter = ExpenseFilter()

    /// Parses `(name, value)` pairs; throws a `ValidationError` naming the parameter at fault,
    /// or `LedgerError.unknownParameter`.
    public init(_ pairs: [(String, String)]) throws {
        filter.limit = Limits.defaultPageSize
        for (name, value) in pairs {
            switch name {
            case "month": filter.month = try Self.month(value)
            case "from": filter.from = try Self.date(value, name)
            case "to": filter.to = try Self.date(value, name)
            case "category":
                guard let uuid = UUID(uuidString: value) else { throw ValidationError(field: name, "must be a UUID") }
                filter.categoryId = uuid.lowercased
            case "tag": filter.tag = value
            case "payee": filter.payee = value
            case "text":
                guard !value.isEmpty, value.count <= Limits.maxShortTextLength,
                    !ControlCharacters.occur(in: value)
                else {
                    throw ValidationError(field: name, "must be 1 to \(Limits.maxShortTextLength) characters, none of them control characters")
                }
                filter.text = value
            case "kind":
                guard ["income", "expense"].contains(value) else { throw ValidationError(field: name, "must be income or expense") }
                filter.kind = value
            case "limit":
                guard let number = Int(value), (1...Limits.maxPageSize).contains(number) else {
                    throw ValidationError(field: name, "must be 1 to \(Limits.maxPageSize) (for more, follow nextCursor)")
                }
                filter.limit = number
            case "cursor": filter.after = try Self.cursor(value)
            default: throw LedgerError.unknownParameter(name)
            }
        }
    }

    /// `YYYY-MM`, a real month.
    public static func month(_ text: String) throws(ValidationError) -> String {
        guard FieldKind.isMonth(text) else { throw ValidationError(field: "month", "must be YYYY-MM (years 0001–9999)") }
        return text
    }

    static func date(_ text: String, _ field: String) throws(ValidationError) -> DateTime {
        guard let date = DateTime(iso8601: text) else { throw ValidationError(field: field, "must be an ISO 8601 date or date-time") }
        return date
    }

    /// Exactly the shape `nextCursor` has (the OpenAPI pattern says the same): up to 18 digits
    /// of milliseconds (maybe negative), "_", a lowercase UUID.
    static func cursor(_ text: String) throws(ValidationError) -> (dateMillis: Int64, id: String) {
        let parts = text.split(separator: "_", maxSplits: 1)
        let digits = parts.first.map { $0.hasPrefix("-") ? $0.dropFirst() : $0 } ?? ""
        guard parts.count == 2, (1...18).contains(digits.count), digits.allSatisfy({ ("0"..."9").contains($0) }), let millis = Int64(parts[0]),
            UUID(uuidString: String(parts[1])) != nil, parts[1] == parts[1].lowercased()
        else { throw ValidationError(field: "cursor", "not a cursor this API returned") }
        return (millis, String(parts[1]))
    }

    /// The cursor of the page after `rows` (nil on the last page).
    public func nextCursor(after rows: [ExpenseRow]) -> String? {
        guard rows.count == filter.limit, let last = rows.last else { return nil }
        return Self.cursor(dateMillis: last.dateMillis, id: last.id)
    }

    /// The cursor that continues after the expense with this date and id.
    static func cursor(dateMillis: Int64, id: String) -> String { "\(dateMillis)_\(id)" }
}
