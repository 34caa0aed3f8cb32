import Foundation

/// Why a Core Data store (or a mapping file, or a settings export) could not be read at all.
/// A row that cannot be read is not an error: it is a `CoreDataContents.problems` entry.
public struct CoreDataStoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable code for scripts and HTTP error bodies.
    public enum Code: String, Sendable {
        /// The file is missing, unreadable, not a regular file, or not an SQLite database.
        case cannotOpen = "cannot_open"
        /// An SQLite database, but without Core Data's `Z_METADATA` and `Z_PRIMARYKEY` tables.
        case notCoreData = "not_core_data"
        /// A mapped entity is not registered in `Z_PRIMARYKEY`.
        case missingEntity = "missing_entity"
        /// A mapped entity's table is not in the store.
        case missingTable = "missing_table"
        /// A mapped attribute has no column in its entity's table.
        case missingColumn = "missing_column"
        /// A mapped attribute matches several numbered columns (`ZTITLE1`, `ZTITLE2`).
        case ambiguousColumn = "ambiguous_column"
        /// The mapping (built in or from a JSON file) is not usable.
        case invalidMapping = "invalid_mapping"
        /// Past one of the reader's bounds (`CoreDataLimits`).
        case tooLarge = "too_large"
        /// SQLite failed while reading (a damaged store).
        case unreadable = "unreadable"
        /// A key-value settings export that is not a property-list dictionary of plain values.
        case invalidSettings = "invalid_settings"
    }

    /// The stable code.
    public let code: Code
    /// What happened and what to do about it.
    public let message: String
    /// The underlying failure's text (SQLite's message, the file system's), if any.
    public let cause: String?

    /// Creates an error; `cause` is the underlying failure's description.
    public init(_ code: Code, _ message: String, cause: String? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String {
        guard let cause else { return message }
        return "\(message) (\(cause))"
    }
}
