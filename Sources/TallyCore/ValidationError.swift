/// Input that cannot become an event. The message names the field and says what is allowed.
public struct ValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The JSON field name at fault, or nil when the problem is not one field's.
    public let field: String?
    /// What is wrong and what would be accepted.
    public let message: String
    /// Whether the input is wrong in itself, or only against the ledger as it stands.
    public let kind: Kind

    /// What made the input unacceptable (the HTTP API answers 400, 404 or 409 by it).
    public enum Kind: Sendable, Equatable {
        /// Wrong in itself: type, range, length, syntax.
        case invalid
        /// Names a field the entity does not have.
        case unknownField
        /// Not the shape a request must have (a body that is not a JSON object, …).
        case malformed
        /// Names an entity to change that does not exist (or is deleted).
        case notFound
        /// Creates an entity whose id is taken.
        case alreadyExists
        /// Well-formed, but contradicts the current state: a reference to a missing category,
        /// a category cycle, a setting's scope, the replicated settings' bounds.
        case conflictsWithState
    }

    /// Creates an error.
    public init(field: String?, _ message: String, kind: Kind = .invalid) {
        self.field = field
        self.message = message
        self.kind = kind
    }

    public var description: String {
        if let field { return "invalid \(field): \(message)" }
        return message
    }
}
