import Foundation
import GRDB
import TallyTestSupport

/// Makes store files laid out as Core Data lays out an `NSSQLiteStoreType` store: one table per
/// entity (`Z` + name uppercased) with `Z_PK`, `Z_ENT`, `Z_OPT` and the attribute columns under
/// Core Data's declared types (INTEGER, FLOAT, DECIMAL, TIMESTAMP, VARCHAR, BLOB), the
/// `Z_PRIMARYKEY`, `Z_METADATA` (a UUID and a binary-plist `Z_PLIST`) and `Z_MODELCACHE` tables,
/// and the `.<name>_SUPPORT/_EXTERNAL_DATA` folder beside it for externally stored values.
/// Values are written as Core Data writes them (see the static helpers), or crafted.
final class CoreDataStoreBuilder {
    /// An entity: its model name and its attribute columns with their declared types.
    struct Entity {
        let name: String
        let columns: [(name: String, type: String)]
    }

    /// The household app's expense entity, columns in Core Data's order (integers, then
    /// numbers and dates, then strings, then blobs).
    static let expenseEntity = Entity(
        name: "ExpenseEntity",
        columns: [
            ("ZISREPEATED", "INTEGER"), ("ZAMOUNT", "FLOAT"), ("ZDATE", "TIMESTAMP"), ("ZCATEGORY", "VARCHAR"),
            ("ZIMAGEPATH", "VARCHAR"), ("ZMEMO", "VARCHAR"), ("ZPAYMENT", "VARCHAR"), ("ZREPEATCYCLE", "VARCHAR"),
            ("ZSUBCATEGORY", "VARCHAR"), ("ZSUBCATEGORYICON", "VARCHAR"), ("ZTRANSACTION", "VARCHAR"), ("ZID", "BLOB"),
            ("ZIMAGEFROMCLOUD", "BLOB"), ("ZTAGS", "BLOB"),
        ])

    /// The household app's todo entity.
    static let todoEntity = Entity(
        name: "TodoModel",
        columns: [
            ("ZCOMPLETED", "INTEGER"), ("ZISCHALLENGE", "INTEGER"), ("ZENDDATE", "TIMESTAMP"), ("ZPERCENTAGE", "FLOAT"),
            ("ZSTARTDATE", "TIMESTAMP"), ("ZMEMO", "VARCHAR"), ("ZTITLE", "VARCHAR"), ("ZID", "BLOB"),
        ])

    /// Both, numbered as Core Data numbers them (alphabetically, from 1).
    static let household = [expenseEntity, todoEntity]

    /// The folder holding the store and its support folder; removed with the builder.
    let directory: TemporaryDirectory
    /// The store file.
    let storePath: String
    /// `Z_METADATA.Z_UUID`.
    let storeUUID: String
    /// Where externally stored values go.
    let externalFolder: String
    private let entities: [Entity]
    private var queue: DatabaseQueue?

    /// A new store `<name>.sqlite` with `entities`. `walMode` switches it to WAL and turns
    /// automatic checkpoints off, so rows stay in the `-wal` while the builder is open.
    init(name: String = "Household", entities: [Entity] = CoreDataStoreBuilder.household, walMode: Bool = false) throws {
        let directory = TemporaryDirectory("coredata")
        let storePath = directory.file("\(name).sqlite")
        let storeUUID = UUID().uuidString
        self.directory = directory
        self.storePath = storePath
        self.storeUUID = storeUUID
        externalFolder = directory.path + "/.\(name)_SUPPORT/_EXTERNAL_DATA"
        self.entities = entities
        let queue = try DatabaseQueue(path: storePath)
        self.queue = queue
        if walMode {
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            }
        }
        let metadata = try PropertyListSerialization.data(
            fromPropertyList: [
                "NSStoreType": "SQLite", "NSPersistenceFrameworkVersion": 1341, "NSStoreModelVersionHashesVersion": 3,
                "NSStoreModelVersionIdentifiers": [""],
            ] as [String: Any],
            format: .binary, options: 0)
        try queue.write { db in
            for entity in entities {
                let columns = (["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"] + entity.columns.map { "\($0.name) \($0.type)" })
                try db.execute(sql: "CREATE TABLE Z\(entity.name.uppercased()) ( \(columns.joined(separator: ", ")) )")
            }
            try db.execute(sql: "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
            try db.execute(sql: "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
            try db.execute(sql: "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
            for (index, entity) in entities.enumerated() {
                try db.execute(sql: "INSERT INTO Z_PRIMARYKEY VALUES (?, ?, 0, 0)", arguments: [index + 1, entity.name])
            }
            try db.execute(sql: "INSERT INTO Z_METADATA VALUES (1, ?, ?)", arguments: [storeUUID, metadata])
            try db.execute(sql: "INSERT INTO Z_MODELCACHE VALUES (?)", arguments: [Data([0x1F, 0x8B, 0x08, 0x00])])
        }
    }

    /// Inserts row `pk` of `entity` with `values` by column name (`ZAMOUNT`); `Z_ENT` and
    /// `Z_OPT` are filled in and `Z_PRIMARYKEY.Z_MAX` kept up.
    func insert(_ entity: String, pk: Int64, _ values: [String: (any DatabaseValueConvertible)?]) throws {
        guard let number = entities.firstIndex(where: { $0.name == entity }).map({ $0 + 1 }) else {
            throw BuilderError("no entity \(entity)")
        }
        let names = values.keys.sorted()
        let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + names
        var arguments: [(any DatabaseValueConvertible)?] = [pk, number, 1]
        for name in names { arguments.append(values[name] ?? nil) }
        try execute(
            "INSERT INTO Z\(entity.uppercased()) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))",
            StatementArguments(arguments))
        try execute("UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_ENT = ?", [pk, number])
    }

    /// Runs `sql` on the store (crafting what Core Data would not write).
    func execute(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws {
        guard let queue else { throw BuilderError("the builder is closed") }
        try queue.write { db in try db.execute(sql: sql, arguments: arguments) }
    }

    /// Writes `bytes` as an externally stored value and returns its file name (a UUID).
    func writeExternalFile(_ bytes: Data) throws -> String {
        try FileManager.default.createDirectory(atPath: externalFolder, withIntermediateDirectories: true)
        let name = UUID().uuidString
        try bytes.write(to: URL(fileURLWithPath: externalFolder + "/" + name))
        return name
    }

    /// Closes the store (checkpointing a WAL into it).
    func close() throws {
        try queue?.close()
        queue = nil
    }

    /// A UUID attribute's value: its 16 bytes.
    static func uuidBlob(_ uuid: UUID) -> Data { withUnsafeBytes(of: uuid.uuid) { Data($0) } }

    /// A Date attribute's value: seconds since 2001-01-01T00:00:00Z.
    static func seconds(_ date: Date) -> Double { date.timeIntervalSinceReferenceDate }

    /// An external-storage attribute's value stored inline: 0x01, then the bytes.
    static func inline(_ bytes: Data) -> Data { Data([0x01]) + bytes }

    /// An external-storage attribute's value stored in the file `name`: 0x02, the name, NUL.
    static func externalReference(_ name: String) -> Data { Data([0x02]) + Data(name.utf8) + Data([0x00]) }

    /// A Transformable `[String]` as `NSSecureUnarchiveFromData` stores it: an NSKeyedArchiver
    /// binary plist (swift-corelibs-foundation writes the same layout as Apple's).
    static func archivedStrings(_ strings: [String]) throws -> Data {
        try NSKeyedArchiver.archivedData(withRootObject: NSArray(array: strings), requiringSecureCoding: true)
    }
}

/// A builder used wrongly.
struct BuilderError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
