import Foundation
import GRDB

/// Reads the fields of one fetched row, naming the row in every problem: a field that cannot
/// be read is left empty and noted (`optional`), or skips the row (`required`).
struct RowReader {
    /// The row.
    let row: MappedEntity.FetchedRow
    /// The row's `Z_PK`.
    let primaryKey: Int64
    /// How problems name the row: "ExpenseEntity Z_PK 12".
    let label: String
    /// The problems noted so far.
    private(set) var problems: [String] = []

    /// A reader of `row` of `entity`; nil (with `problem` set) when the row has no integer `Z_PK`.
    init?(_ row: MappedEntity.FetchedRow, entity: String, ordinal: Int, problem: inout String?) {
        guard case .int64(let primaryKey) = row.primaryKey.storage else {
            problem = "\(entity) row \(ordinal + 1): skipped: Z_PK is \(StoredValue(row.primaryKey).describe()), not an integer"
            return nil
        }
        self.row = row
        self.primaryKey = primaryKey
        self.label = "\(entity) Z_PK \(primaryKey)"
    }

    /// Adds a whole problem line about this row.
    mutating func add(_ line: String) {
        problems.append(line)
    }

    /// Notes a problem with `field` that leaves it empty.
    mutating func note(_ field: String, _ problem: Any) {
        problems.append("\(label): \(field) \(problem); left empty")
    }

    /// The field at `index` (`field` names it), decoded by `decode`; nil when unmapped, NULL or
    /// unreadable (then noted).
    mutating func optional<T>(_ field: String, _ index: Int, _ decode: (StoredValue) throws -> T?) -> T? {
        guard index < row.fields.count, let stored = row.fields[index] else { return nil }
        do {
            return try decode(stored)
        } catch {
            note(field, error)
            return nil
        }
    }

    /// The field at `index`, which the row cannot do without: unmapped, NULL or unreadable
    /// throws `RowSkipped`.
    func required<T>(_ field: String, _ index: Int, _ decode: (StoredValue) throws -> T?) throws -> T {
        guard index < row.fields.count, let stored = row.fields[index] else { throw RowSkipped("\(label): skipped: \(field) is not mapped") }
        let value: T?
        do {
            value = try decode(stored)
        } catch {
            throw RowSkipped("\(label): skipped: \(field) \(error)")
        }
        guard let value else { throw RowSkipped("\(label): skipped: \(field) is empty (NULL)") }
        return value
    }
}

/// A row that was not read; the description is the whole problem line.
struct RowSkipped: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
