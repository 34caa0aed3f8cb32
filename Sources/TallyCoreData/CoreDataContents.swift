import Foundation

/// What `CoreDataStore.read()` found.
public struct CoreDataContents: Sendable, Equatable {
    /// The store's identity (`Z_METADATA.Z_UUID`, uppercase): the same file copied to another
    /// device keeps it, so source keys built on it stay the same.
    public var storeUUID: String
    /// The expense rows that could be read, ordered by `Z_PK`.
    public var expenses: [CoreDataExpense]
    /// The todo rows that could be read, ordered by `Z_PK`; empty when the mapping has no todo.
    public var todos: [CoreDataTodo]
    /// One line per row skipped (with the reason) and per field left empty because its value
    /// could not be read (a wrong type, out of range, too large, a missing external file).
    public var problems: [String]

    /// Contents; see the properties.
    public init(storeUUID: String, expenses: [CoreDataExpense], todos: [CoreDataTodo], problems: [String]) {
        self.storeUUID = storeUUID
        self.expenses = expenses
        self.todos = todos
        self.problems = problems
    }
}
