import Foundation

/// Gives each row of one entity its source key: the row's `id` UUID when it has a valid one
/// not taken by an earlier row (in `Z_PK` order), else `<store UUID>/<entity>/<Z_PK>` (what
/// Core Data's own object URI, `x-coredata://<store UUID>/<entity>/p<Z_PK>`, is built from).
/// Either way the same store file gives the same keys on every device that imports it.
struct SourceKeys {
    /// The store's `Z_UUID`.
    let storeUUID: String
    private var taken: Set<UUID> = []

    init(storeUUID: String) { self.storeUUID = storeUUID }

    /// The key of the row `primaryKey` of `entity` with `id`; a duplicate id is noted in `problems`.
    mutating func key(id: UUID?, entity: String, primaryKey: Int64, label: String, problems: inout [String]) -> String {
        if let id {
            if taken.insert(id).inserted { return id.uuidString }
            problems.append("\(label): id \(id.uuidString) is an earlier row's too; this row is keyed by its Z_PK")
        }
        return "\(storeUUID)/\(entity)/\(primaryKey)"
    }
}
