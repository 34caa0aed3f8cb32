import Foundation

/// A fresh directory under the system temp folder, removed when the value is freed.
public final class TemporaryDirectory: Sendable {
    /// Its path.
    public let path: String

    /// Creates one; `prefix` shows up in the name to tell tests apart.
    public init(_ prefix: String = "tally-test") {
        path = NSTemporaryDirectory() + "/\(prefix)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path inside it.
    public func file(_ name: String) -> String { path + "/" + name }
}
