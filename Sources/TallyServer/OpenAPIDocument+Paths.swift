import HTTPTypes
import TallyCore

/// The document's `paths:`, written from the operations the routes were added with (`APIBook`).
extension OpenAPIDocument {
    /// Each path once, in the order its first route was added, with its operations in theirs.
    /// `hosted`: the paths are under a hosted ledger's base URL, and so are those the
    /// descriptions name (`/v1/expenses` is `/expenses` there).
    static func paths(_ entries: [APIBook.Entry], hosted: Bool) -> String {
        var order: [String] = []
        var byPath: [String: [APIBook.Entry]] = [:]
        for entry in entries {
            if byPath[entry.path] == nil { order.append(entry.path) }
            byPath[entry.path, default: []].append(entry)
        }
        var lines = ["paths:"]
        for path in order {
            lines.append("  \(path):")
            for entry in byPath[path] ?? [] { lines += operation(entry, path: path, hosted: hosted) }
        }
        return lines.joined(separator: "\n")
    }

    /// One operation's lines, indented under its path.
    static func operation(_ entry: APIBook.Entry, path: String, hosted: Bool) -> [String] {
        let operation = entry.operation
        var lines = ["    \(entry.method.rawValue.lowercased()):"]
        if let description = operation.description {
            lines.append("      description: \(quoted(hosted ? description.replacingOccurrences(of: " /v1/", with: " /") : description))")
        }
        if operation.isPublic { lines.append("      security: []") }
        let names = path.split(separator: "/").filter { $0.hasPrefix("{") }.map { String($0.dropFirst().dropLast()) }
        let parameters = names.map { operation.pathParameters[$0] ?? pathParameter($0) } + operation.parameters
        if !parameters.isEmpty {
            lines.append("      parameters:")
            lines += parameters.map { "        - \($0)" }
        }
        if let body = operation.requestBody { lines.append("      requestBody: \(body)") }
        lines.append("      responses:")
        lines.append("        default: \(errorResponse)")
        let answers = operation.responses + operation.errors.map { (status: $0, yaml: errorResponse) }
        lines += answers.sorted { $0.status < $1.status }.map { #"        "\#($0.status)": \#($0.yaml)"# }
        return lines
    }

    static let errorResponse = ##"{$ref: "#/components/responses/Error"}"##

    /// A path parameter by its name: one of the document's components, else any one segment.
    static func pathParameter(_ name: String) -> String {
        ["id", "key", "digest"].contains(name)
            ? ##"{$ref: "#/components/parameters/\##(name)"}"## : "{name: \(name), in: path, required: true, schema: {type: string}}"
    }

    /// `text` as a YAML double-quoted scalar (JSON's escapes are YAML's).
    static func quoted(_ text: String) -> String { JSONText.string(text).serialized }
}
