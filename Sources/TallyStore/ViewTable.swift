import Foundation
import GRDB
import TallyCore

/// A view table as its entity's spec makes it: the id, one column per shown field, then the
/// columns the views derive. Everything that touches the table's rows goes by these columns —
/// the projector and the first load (`values(of:winners:)`), the queries (`selection`), the
/// typed rows (`ExpenseRow(_:)`, by column name) and the JSON every front end shows
/// (`ViewRecordJSON`) — so a field added to the spec, with its column added by a migration,
/// is written, read and shown with nothing else changed (`ViewTableTests` checks that every
/// column exists once the migrations ran).
///
/// A field's column is its JSON name in snake case (`startDate` → `start_date`). A reference to
/// a category named in `shownCategories` is kept twice: as written (`category_ref`) and as the
/// category that stands for it once duplicates merged (`category_id`), which is what the JSON
/// shows (`CategoryViews` re-points it when merges change).
struct ViewTable: Sendable {
    /// Where a column's value comes from.
    enum Source: Sendable, Equatable {
        case id
        /// A shown field's value, as written.
        case field(PropertyName)
        /// The category that stands for a category reference.
        case shownCategory(PropertyName)
        /// A date-time field's instant (ms since 1970 UTC), and its month in the writer's offset.
        case epochMillis(PropertyName)
        case month(PropertyName)
        /// A to-do's checks that are done, and that as a percentage.
        case checksDone
        case percentage
    }

    struct Column: Sendable {
        let name: String
        let source: Source
        /// What the column holds when the entity has no value for its field: `[]` for a list,
        /// 0 for a flag, else NULL (`FieldSpec.unsetJSON`).
        let unset: DatabaseValue

        init(name: String, source: Source, field: FieldSpec? = nil) {
            (self.name, self.source) = (name, source)
            switch field?.unsetJSON {
            case .array?: unset = "[]".databaseValue
            case .bool?: unset = false.databaseValue
            default: unset = .null
            }
        }
    }

    /// What the JSON shows after the fields (`ViewRecordJSON`).
    enum Extra: Sendable {
        /// The `percentage` column.
        case percentage
        /// A challenge's streaks, computed when read.
        case streaks
        /// `writtenForCategoryId`: the category as written, when a merge made another stand for it.
        case writtenForCategory
    }

    let spec: EntitySpec
    let name: String
    let extras: [Extra]
    let columns: [Column]
    let columnNames: [String]
    /// The fields a row needs: required, with no unset value of their own.
    let requiredFields: [PropertyName]
    /// Its INSERT (built once: it is the statement cache's key).
    let insertSQL: String

    /// The table `name` of `type`'s shown fields, with `derived` columns after them.
    init(_ type: EntityType, _ name: String, shownCategories: Set<PropertyName> = [], derived: [Column] = [], extras: [Extra] = []) {
        spec = EntitySpec.of(type)
        (self.name, self.extras) = (name, extras)
        var columns = [Column(name: "id", source: .id)]
        for field in spec.shownFields {
            let column = Self.columnName(field.name)
            if shownCategories.contains(field.name) {
                columns.append(Column(name: Self.writtenReference(column), source: .field(field.name), field: field))
                columns.append(Column(name: column, source: .shownCategory(field.name)))
            } else {
                columns.append(Column(name: column, source: .field(field.name), field: field))
            }
        }
        self.columns = columns + derived
        columnNames = self.columns.map(\.name)
        requiredFields = spec.shownFields.filter { $0.isRequired && $0.unsetJSON == .null }.map(\.name)
        insertSQL =
            "INSERT INTO \(name) (\(self.columns.map(\.name).joined(separator: ", "))) VALUES (\(self.columns.map { _ in "?" }.joined(separator: ", ")))"
    }

    static let expenses = ViewTable(
        .expense, "expenses", shownCategories: [.categoryId],
        derived: [Column(name: "date_ms", source: .epochMillis(.date)), Column(name: "month", source: .month(.date))])
    static let todos = ViewTable(
        .todo, "todos", derived: [Column(name: "checks_done", source: .checksDone), Column(name: "percentage", source: .percentage)],
        extras: [.percentage, .streaks])
    static let budgets = ViewTable(.budget, "budgets", shownCategories: [.categoryId], extras: [.writtenForCategory])
    static let accounts = ViewTable(
        .account, "accounts",
        derived: [Column(name: "opening_ms", source: .epochMillis(.openingDate)), Column(name: "reconciled_ms", source: .epochMillis(.reconciledThrough))])
    static let lines = ViewTable(.line, "expense_lines", shownCategories: [.categoryId])
    static let settlements = ViewTable(
        .settlement, "settlements", derived: [Column(name: "date_ms", source: .epochMillis(.date)), Column(name: "month", source: .month(.date))])
    static let transfers = ViewTable(
        .transfer, "transfers", derived: [Column(name: "date_ms", source: .epochMillis(.date)), Column(name: "month", source: .month(.date))])

    /// A field's column: its JSON name in snake case.
    static func columnName(_ field: PropertyName) -> String {
        var name = ""
        for character in field.jsonName {
            if character.isUppercase { name += "_" + character.lowercased() } else { name.append(character) }
        }
        return name
    }

    /// Where a shown category reference keeps the category as written: `category_id` → `category_ref`.
    static func writtenReference(_ column: String) -> String {
        (column.hasSuffix("_id") ? String(column.dropLast(3)) : column) + "_ref"
    }

    /// The column that shows `field` (for a shown category reference, the standing category).
    func shownColumn(of field: PropertyName) -> String {
        columns.first { $0.source == .shownCategory(field) }?.name ?? Self.columnName(field)
    }

    /// The row `entity` shows, in `columns` order; nil when a required field has not arrived
    /// (one with no unset value of its own: a list is empty, a flag false). `winners` names
    /// who stands for each merged category.
    func values(of entity: LedgerState.Entity, winners: [String: String]) -> [DatabaseValue]? {
        for field in requiredFields where entity.value(field) == nil { return nil }
        return columns.map { column in
            switch column.source {
            case .id:
                return entity.id.description.databaseValue
            case .field(let name):
                return Self.databaseValue(entity.value(name)) ?? column.unset
            case .shownCategory(let name):
                guard case .uuid(let category)? = entity.value(name) else { return .null }
                let written = category.lowercased
                return (winners[written] ?? written).databaseValue
            case .epochMillis(let name):
                guard case .dateTime(let date)? = entity.value(name) else { return .null }
                return date.epochMillis.databaseValue
            case .month(let name):
                guard case .dateTime(let date)? = entity.value(name) else { return .null }
                return date.localMonth.databaseValue
            case .checksDone:
                guard case .bools(let checks)? = entity.value(.checks) else { return 0.databaseValue }
                return checks.filter { $0 }.count.databaseValue
            case .percentage:
                return Todo.percentage(entity.value(.checks)).databaseValue
            }
        }
    }

    /// A field's value as its column keeps it: text, an integer, 0 or 1, or a list as its JSON
    /// array; nil when unset.
    static func databaseValue(_ value: PropertyValue?) -> DatabaseValue? {
        guard let value else { return nil }
        switch value {
        case .null: return nil
        case .bool(let flag): return flag.databaseValue
        case .int(let number): return number.databaseValue
        case .string(let text): return text.databaseValue
        case .uuid(let id): return id.lowercased.databaseValue
        case .dateTime(let date): return date.description.databaseValue
        case .strings, .bools, .json: return value.json.serialized.databaseValue
        }
    }
}
