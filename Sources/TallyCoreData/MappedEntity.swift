import Foundation
import GRDB

/// A mapped entity resolved against a store: its table, the column behind each mapped field,
/// and the fetch of its rows with every value behind a size guard.
struct MappedEntity: Sendable {
    /// One field to fetch: its column (nil: not mapped, or an `id` the store does not have)
    /// and the largest `length()` fetched.
    struct Field: Sendable {
        let column: String?
        let limit: Int64
    }

    /// One fetched row.
    struct FetchedRow {
        let primaryKey: DatabaseValue
        let entityNumber: DatabaseValue
        /// By field, in the order asked; nil for a field without a column.
        let fields: [StoredValue?]
    }

    /// Where the rows are.
    let location: EntityCatalog.Location
    /// The fields, in the order the caller's field enumeration gives them.
    let fields: [Field]
    /// Entity names by `Z_ENT`, for the entity and its sub-entities.
    let names: [Int64: String]

    /// Resolves `attributes` (attribute names, or `nil` for unmapped fields) to columns of the
    /// entity's table. `optional` attributes may be absent from the table (the `id`); any other
    /// mapped attribute without a column is an error naming it.
    init(
        _ db: Database, catalog: EntityCatalog, entity: String, attributes: [(name: String?, limit: Int64, optional: Bool)]
    ) throws {
        let location = try catalog.locate(entity)
        self.location = location
        guard try db.tableExists(location.table) else {
            throw CoreDataStoreError(.missingTable, "the store has no table \(location.table) for the entity \(entity)")
        }
        let columns = try db.columns(in: location.table).map(\.name)
        let byName = Dictionary(columns.map { ($0.uppercased(), $0) }, uniquingKeysWith: { first, _ in first })
        for required in ["Z_PK", "Z_ENT"] where byName[required] == nil {
            throw CoreDataStoreError(.missingColumn, "the table \(location.table) has no \(required) column; it was not made by Core Data")
        }
        fields = try attributes.map { attribute in
            guard let name = attribute.name else { return Field(column: nil, limit: attribute.limit) }
            let column = try Self.column(for: name, in: byName, table: location.table, entity: entity, optional: attribute.optional)
            return Field(column: column, limit: attribute.limit)
        }
        var names: [Int64: String] = [:]
        for number in location.numbers { names[number] = catalog.entries[number]?.name }
        self.names = names
    }

    /// The column of `attribute`: a name starting with an uppercase `Z` is a column as it is;
    /// otherwise `Z` + the attribute uppercased (`subCategory` → `ZSUBCATEGORY`), or, when Core
    /// Data numbered it (two attributes equal but for case, or sub-entities sharing the table),
    /// the one column that is that plus digits (`ZTITLE1`).
    static func column(
        for attribute: String, in byName: [String: String], table: String, entity: String, optional: Bool
    ) throws -> String? {
        let wanted = attribute.hasPrefix("Z") ? attribute.uppercased() : "Z" + attribute.uppercased()
        if let column = byName[wanted] { return column }
        if !attribute.hasPrefix("Z") {
            let numbered = byName.keys.filter { key in
                key.hasPrefix(wanted) && key.count > wanted.count && key.dropFirst(wanted.count).allSatisfy { $0.isASCII && $0.isNumber }
            }.sorted()
            if numbered.count == 1, let only = numbered.first, let column = byName[only] { return column }
            if numbered.count > 1 {
                throw CoreDataStoreError(
                    .ambiguousColumn,
                    "the attribute \(attribute) of \(entity) could be any of the columns \(numbered.joined(separator: ", ")) of \(table); "
                        + "name the column in a mapping file instead (\"\(numbered[0])\")")
            }
        }
        if optional { return nil }
        throw CoreDataStoreError(
            .missingColumn,
            "the table \(table) (entity \(entity)) has no column \(wanted) for the attribute \(attribute); "
                + "check the mapping against the app's model")
    }

    /// The entity's rows, ordered by `Z_PK`. More than `maxRows` is refused (never cut short).
    func fetch(_ db: Database, maxRows: Int) throws -> [FetchedRow] {
        var select = ["Z_PK", "Z_ENT"]
        for field in fields {
            guard let column = field.column else { continue }
            let quoted = column.quotedDatabaseIdentifier
            select.append("CASE WHEN length(\(quoted)) > \(field.limit) THEN NULL ELSE \(quoted) END")
            select.append("length(\(quoted))")
        }
        let numbers = location.numbers.map { String($0) }.joined(separator: ", ")
        let sql =
            "SELECT \(select.joined(separator: ", ")) FROM \(location.table.quotedDatabaseIdentifier) "
            + "WHERE Z_ENT IN (\(numbers)) ORDER BY Z_PK LIMIT \(maxRows + 1)"
        var rows: [FetchedRow] = []
        let cursor = try Row.fetchCursor(db, sql: sql)
        while let row = try cursor.next() {
            guard rows.count < maxRows else {
                throw CoreDataStoreError(.tooLarge, "the entity \(location.name) has more than \(maxRows) rows; nothing was read")
            }
            var values: [StoredValue?] = []
            var index = 2
            for field in fields {
                guard field.column != nil else {
                    values.append(nil)
                    continue
                }
                let value: DatabaseValue = row[index]
                let length: DatabaseValue = row[index + 1]
                var oversize: Int64?
                if value.isNull, case .int64(let count) = length.storage, count > field.limit { oversize = count }
                values.append(StoredValue(value, oversize: oversize))
                index += 2
            }
            let primaryKey: DatabaseValue = row["Z_PK"]
            let entityNumber: DatabaseValue = row["Z_ENT"]
            rows.append(FetchedRow(primaryKey: primaryKey, entityNumber: entityNumber, fields: values))
        }
        return rows
    }
}
