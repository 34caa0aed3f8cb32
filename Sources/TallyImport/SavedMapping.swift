import Foundation
import TallyCore

/// Saved statement layouts (docs/IMPORT.md, "Saved mappings"): `tally import mappings save
/// NAME --column …` keeps one as the replicated setting `importMapping.NAME` — on every
/// replica, like the rest of the ledger — and `--mapping NAME` (or `mapping=NAME`) uses it.
/// A built-in layout's name always means the built-in one. The front ends write and read the
/// setting through the ledger; this says what it holds.
public enum SavedMapping {
    /// The setting key of a saved layout: `importMapping.` and the name, `-` written as `_`
    /// (setting keys are letters, digits, `.` and `_`).
    public static func key(_ name: String) throws -> String {
        let key = "importMapping." + name.replacingOccurrences(of: "-", with: "_")
        guard name.count <= 40, !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw ValidationError(field: "mapping", "a mapping's name is 1 to 40 letters, digits, - and _")
        }
        try EntitySchema.validateSettingKey(key)
        return key
    }

    /// The setting that saves a layout under `name`: header names or 1-based positions per
    /// role, maybe a header row.
    public static func setting(_ name: String, columns: [(role: ColumnRole, header: String?, position: Int?)], headerRow: Int?) throws -> (
        key: String, json: String
    ) {
        guard StatementLayout.named(name) == nil else { throw ValidationError(field: "mapping", "'\(name)' is a built-in layout; choose another name") }
        var fields: [(String, JSONText)] = [("name", .string(name))]
        fields.append(
            (
                "columns",
                .object(
                    columns.map { column in
                        (column.role.rawValue, column.position.map { .int(Int64($0)) } ?? .string(column.header ?? ""))
                    })
            ))
        if let headerRow { fields.append(("headerRow", .int(Int64(headerRow)))) }
        return (try key(name), JSONText.object(fields).serialized)
    }

    /// The layout and header row a `--mapping` names: a built-in layout, else one saved among
    /// `settings` (key, JSON value); nil if there is neither.
    public static func layout(named name: String, settings: [(key: String, value: String)]) throws -> (layout: StatementLayout, headerRow: Int?)? {
        if let builtIn = StatementLayout.named(name) { return (builtIn, nil) }
        let key = try key(name)
        guard let saved = settings.first(where: { $0.key == key }), case .object(let fields) = try StrictJSON.parse(Array(saved.value.utf8)) else { return nil }
        var layout = StatementLayout.named("generic")!
        layout.name = name
        var headerRow: Int?
        for (key, value) in fields {
            switch (key, value) {
            case ("columns", .object(let columns)):
                for (roleName, column) in columns {
                    guard let role = ColumnRole(rawValue: roleName) else { continue }
                    switch column {
                    case .integer(let position) where (1...1_000).contains(position): layout.positions[role] = Int(position) - 1
                    case .string(let header) where !header.isEmpty: layout.headers[role] = [header]
                    default: continue
                    }
                }
            case ("headerRow", .integer(let row)) where (0...1_000_000).contains(row): headerRow = Int(row)
            default: continue
            }
        }
        return (layout, headerRow)
    }
}
