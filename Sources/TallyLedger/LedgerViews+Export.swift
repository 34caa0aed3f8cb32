import Foundation
import TallyCore
import TallyStore

/// Taking the data out (docs/IMPORT.md, "Export"): expenses as CSV a spreadsheet opens, every
/// entity as JSON lines. A CSV export imported into an empty replica (`tally import csv`,
/// recognised as the `tally-export` layout) gives the same expenses.
extension LedgerViews {
    /// The columns of an expense export.
    public static let exportColumns = ["date", "kind", "amount", "currency", "category", "payee", "payment", "memo", "tags", "attachments", "id"]

    /// Every expense dated in [`from`, `to`) (either open), oldest first, as the cells of a
    /// CSV export (`StatementWriter.csv` writes it: UTF-8 with a BOM, formulas guarded): the
    /// amount in currency units (`12.50`, `9500`), the category as its path from the top
    /// (`Food > Lunch`), tags and attachment digests separated by `;`.
    public func exportTable(from: DateTime?, to: DateTime?) throws -> CellTable {
        var filter = ExpenseFilter()
        (filter.from, filter.to, filter.limit) = (from, to, Int(Int32.max))
        let (rows, categories) = try store.expensesWithCategories(filter)
        let paths = Self.categoryPaths(categories)
        return CellTable(
            header: Self.exportColumns, textColumns: [4, 5, 6, 7, 8],
            rows: rows.reversed().map { row in
                [
                    row.date, row.kind, Self.decimal(row.amount, row.currency), row.currency, row.categoryId.flatMap { paths[$0] } ?? "",
                    row.payee ?? "", row.payment ?? "", row.memo ?? "", row.tags.joined(separator: ";"), row.attachments.joined(separator: ";"), row.id,
                ]
            })
    }

    /// Every live entity, one JSON object a line: `{"type", "id", …its fields}`; with `from`
    /// or `to`, only the expenses dated in [from, to) (every other entity still).
    public func exportJSONLines(from: DateTime? = nil, to: DateTime? = nil) throws -> [UInt8] {
        var lines: [UInt8] = []
        for (type, entities) in try store.allLiveEntities() {
            for entity in entities {
                if type == .expense, from != nil || to != nil {
                    guard case .dateTime(let date)? = entity.value(.date), date.epochMillis >= from?.epochMillis ?? .min,
                        date.epochMillis < to?.epochMillis ?? .max
                    else { continue }
                }
                var fields: [(String, JSONText)] = [("type", .string(type.description)), ("id", .string(entity.id.description))]
                for field in EntitySpec.of(type).fields {
                    if let value = entity.value(field.name) { fields.append((field.name.jsonName, value.json)) }
                }
                lines += Array(JSONText.object(fields).serialized.utf8) + [0x0A]
            }
        }
        return lines
    }

    /// Each category's path from the top, `Parent > Child`, by id.
    public static func categoryPaths(_ categories: [CategoryRow]) -> [String: String] {
        let byID = Dictionary(categories.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var paths: [String: String] = [:]
        for category in categories {
            var names = [category.name]
            var cursor = category.parentId
            while let parent = cursor.flatMap({ byID[$0] }), names.count < 16 {
                names.insert(parent.name, at: 0)
                cursor = parent.parentId
            }
            paths[category.id] = names.joined(separator: " > ")
        }
        return paths
    }

    /// Minor units as a decimal in the currency's digits: 1250 USD → "12.50", 9500 KRW → "9500".
    static func decimal(_ minor: Int64, _ currency: String) -> String {
        let digits = Currency.minorUnitDigits[currency] ?? 2
        guard digits > 0 else { return String(minor) }
        let scale = (0..<digits).reduce(Int64(1)) { value, _ in value * 10 }
        let (whole, fraction) = (minor.magnitude / UInt64(scale), minor.magnitude % UInt64(scale))
        let padded = String(repeating: "0", count: max(0, digits - String(fraction).count)) + String(fraction)
        return (minor < 0 ? "-" : "") + "\(whole).\(padded)"
    }
}
