import Foundation
import GRDB

/// The entities a store registers in `Z_PRIMARYKEY` (`Z_ENT` number, `Z_NAME`, `Z_SUPER`: the
/// parent entity's number, 0 for none), and where each one's rows are: Core Data keeps an
/// entity and all its sub-entities in one table named after the root of its hierarchy
/// (`Z` + the root entity's name uppercased), told apart by the row's `Z_ENT`.
struct EntityCatalog {
    /// One registered entity.
    struct Entry {
        let number: Int64
        let name: String
        let parent: Int64
    }

    /// Where one entity's rows are.
    struct Location {
        /// The entity as mapped.
        let name: String
        /// Its table (its hierarchy root's).
        let table: String
        /// Its own `Z_ENT` and its sub-entities'.
        let numbers: [Int64]
    }

    /// Entries by number.
    let entries: [Int64: Entry]
    /// More registered entities than any app model has: such a store is refused.
    static let maxEntries = 10_000

    /// Reads `Z_PRIMARYKEY`. Rows whose columns are not of Core Data's types are passed over:
    /// no mapped name can then match them.
    init(_ db: Database) throws {
        var entries: [Int64: Entry] = [:]
        var rowCount = 0
        let rows = try Row.fetchCursor(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY LIMIT \(Self.maxEntries + 1)")
        while let row = try rows.next() {
            rowCount += 1
            let numberValue: DatabaseValue = row["Z_ENT"]
            let nameValue: DatabaseValue = row["Z_NAME"]
            let parentValue: DatabaseValue = row["Z_SUPER"]
            guard case .int64(let number) = numberValue.storage, case .string(let name) = nameValue.storage else { continue }
            var parent: Int64 = 0
            if case .int64(let value) = parentValue.storage { parent = value }
            entries[number] = Entry(number: number, name: name, parent: parent)
        }
        guard rowCount <= Self.maxEntries else {
            throw CoreDataStoreError(.tooLarge, "Z_PRIMARYKEY has more than \(Self.maxEntries) rows; this is not an app's store")
        }
        self.entries = entries
    }

    /// The location of the entity named `name` (case-sensitive, as `Z_NAME` holds it).
    func locate(_ name: String) throws -> Location {
        let matches = entries.values.filter { $0.name == name }
        guard let entry = matches.first else {
            // Core Data's own tables (persistent history, CloudKit mirroring) are numbered from 16000.
            let known = entries.values.filter { $0.number < 16_000 }.map(\.name).sorted().prefix(20)
            throw CoreDataStoreError(
                .missingEntity,
                "the store has no entity \(name) (Z_PRIMARYKEY registers \(known.isEmpty ? "none" : known.joined(separator: ", "))); "
                    + "give a mapping file that names the app's entities")
        }
        guard matches.count == 1 else {
            throw CoreDataStoreError(.missingEntity, "Z_PRIMARYKEY registers the entity \(name) \(matches.count) times")
        }
        // The hierarchy's root names the table; a chain longer than the entries is a cycle.
        var root = entry
        var steps = 0
        while root.parent != 0 {
            guard let parent = entries[root.parent], steps < entries.count else {
                throw CoreDataStoreError(.missingEntity, "the entity \(name)'s parent entities in Z_PRIMARYKEY do not lead to a root")
            }
            root = parent
            steps += 1
        }
        // The entity and everything below it.
        var children: [Int64: [Int64]] = [:]
        for candidate in entries.values where candidate.parent != 0 { children[candidate.parent, default: []].append(candidate.number) }
        var numbers: [Int64] = [entry.number]
        var seen: Set<Int64> = [entry.number]
        var index = 0
        while index < numbers.count {
            for child in (children[numbers[index]] ?? []).sorted() where seen.insert(child).inserted { numbers.append(child) }
            index += 1
        }
        return Location(name: name, table: "Z" + root.name.uppercased(), numbers: numbers)
    }
}
