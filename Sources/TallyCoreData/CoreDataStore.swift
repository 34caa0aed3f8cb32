import Foundation
import GRDB

/// A Core Data SQLite store (`NSSQLiteStoreType`), read without Core Data: what an iOS or macOS
/// app saved, brought over as its `.sqlite` file (with its `-wal`, `-shm` and
/// `.<name>_SUPPORT/_EXTERNAL_DATA` folder if it has them). The store is never modified: it is
/// copied to a private temporary folder and the copy is opened read-only (`StoreCopy`).
///
/// Opening checks the file is a Core Data store (`Z_METADATA` and `Z_PRIMARYKEY` present) and
/// that every mapped entity and attribute is there, and refuses it otherwise, naming what is
/// missing. Reading turns rows into `CoreDataExpense` and `CoreDataTodo` values; a row or field
/// that cannot be read becomes a `CoreDataContents.problems` line, never a crash. The layout
/// relied on is described in docs/IMPORT-COREDATA-DRAFT.md.
public struct CoreDataStore: Sendable {
    /// The store file as given.
    public let path: String
    /// What is read from it.
    public let mapping: CoreDataMapping
    /// Where files named by image-path attributes are looked for.
    public let filesFolder: String?
    /// The store's `Z_METADATA.Z_UUID`, uppercase.
    public let storeUUID: String

    let limits: CoreDataLimits
    let external: ExternalDataFolder
    let expenseEntity: MappedEntity
    let todoEntity: MappedEntity?
    private let copy: StoreCopy

    /// Opens the store at `path` read-only and checks it against `mapping`. `filesFolder`, when
    /// given, must be a folder: image paths are looked up in it.
    public init(path: String, mapping: CoreDataMapping = .household, filesFolder: String? = nil) throws {
        try self.init(path: path, mapping: mapping, filesFolder: filesFolder, limits: .standard)
    }

    /// As the public initializer, with other bounds (tests use small ones).
    init(path: String, mapping: CoreDataMapping, filesFolder: String?, limits: CoreDataLimits) throws {
        try mapping.validate()
        if let filesFolder {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: filesFolder, isDirectory: &isFolder), isFolder.boolValue else {
                throw CoreDataStoreError(.cannotOpen, "the files folder \(filesFolder) is not a folder")
            }
        }
        let copy = try StoreCopy(of: path, limit: limits.maxStoreBytes)
        let opened: (uuid: String, expense: MappedEntity, todo: MappedEntity?)
        do {
            opened = try copy.queue.read { db in
                let uuid = try Self.checkCoreData(db, path: path)
                let catalog = try EntityCatalog(db)
                let expense = try MappedEntity(
                    db, catalog: catalog, entity: mapping.expense.entity,
                    attributes: ExpenseField.allCases.map { (name: $0.attribute(in: mapping.expense), limit: $0.limit(limits), optional: $0 == .id) })
                let todo = try mapping.todo.map { todo in
                    try MappedEntity(
                        db, catalog: catalog, entity: todo.entity,
                        attributes: TodoField.allCases.map { (name: $0.attribute(in: todo), limit: $0.limit(limits), optional: $0 == .id) })
                }
                return (uuid: uuid, expense: expense, todo: todo)
            }
        } catch let error as CoreDataStoreError {
            throw error
        } catch {
            throw CoreDataStoreError(.unreadable, "\(path) could not be read as a Core Data store", cause: "\(error)")
        }
        self.path = path
        self.mapping = mapping
        self.filesFolder = filesFolder
        self.limits = limits
        self.external = ExternalDataFolder(storePath: URL(fileURLWithPath: path).resolvingSymlinksInPath().path)
        self.copy = copy
        storeUUID = opened.uuid
        expenseEntity = opened.expense
        todoEntity = opened.todo
    }

    /// Reads every mapped row. Rows and fields that cannot be read are in `problems`.
    public func read() throws -> CoreDataContents {
        do {
            return try copy.queue.read { db in
                var problems: [String] = []
                let expenses = try readExpenses(db, problems: &problems)
                let todos = try readTodos(db, problems: &problems)
                return CoreDataContents(storeUUID: storeUUID, expenses: expenses, todos: todos, problems: problems)
            }
        } catch let error as CoreDataStoreError {
            throw error
        } catch {
            throw CoreDataStoreError(.unreadable, "\(path) could not be read; it may be damaged", cause: "\(error)")
        }
    }

    /// Checks `Z_METADATA` and `Z_PRIMARYKEY` are there with Core Data's columns, and returns
    /// the store's UUID.
    static func checkCoreData(_ db: Database, path: String) throws -> String {
        let expected = ["Z_METADATA": ["Z_UUID"], "Z_PRIMARYKEY": ["Z_ENT", "Z_NAME", "Z_SUPER"]]
        for (table, columns) in expected.sorted(by: { $0.key < $1.key }) {
            guard try db.tableExists(table) else {
                throw CoreDataStoreError(
                    .notCoreData, "\(path) is an SQLite database but not a Core Data store: it has no \(table) table")
            }
            let present = try Set(db.columns(in: table).map { $0.name.uppercased() })
            for column in columns where !present.contains(column) {
                throw CoreDataStoreError(.notCoreData, "\(path) is not a Core Data store: its \(table) table has no \(column) column")
            }
        }
        let uuidValue = try DatabaseValue.fetchOne(db, sql: "SELECT Z_UUID FROM Z_METADATA ORDER BY rowid LIMIT 1")
        guard case .string(let text)? = uuidValue?.storage, let uuid = UUID(uuidString: text) else {
            throw CoreDataStoreError(.notCoreData, "\(path) is not a Core Data store: Z_METADATA holds no store UUID")
        }
        return uuid.uuidString
    }
}
