/// Input that cannot become an event. The message names the field and says what is allowed.
public struct ValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The JSON field name at fault, or nil when the problem is not one field's.
    public let field: String?
    /// What is wrong and what would be accepted.
    public let message: String

    /// Creates an error.
    public init(field: String?, _ message: String) {
        self.field = field
        self.message = message
    }

    public var description: String {
        if let field { return "invalid \(field): \(message)" }
        return message
    }
}
