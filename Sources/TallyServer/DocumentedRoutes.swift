import Foundation
import Hummingbird
import TallyCore
import TallyLedger

/// The methods the OpenAPI document lists for each path, read from the document itself so
/// the two cannot drift apart.
enum DocumentedRoutes {
    static let all: [(segments: [String], methods: [String])] = parse(OpenAPIDocument.yaml)

    /// The documented methods of the path `path` matches (a `{parameter}` matches any one
    /// segment), or nil if it matches none.
    static func methods(for path: String) -> [String]? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        return all.first { route in
            route.segments.count == segments.count
                && zip(route.segments, segments).allSatisfy { pattern, segment in pattern.hasPrefix("{") ? !segment.isEmpty : pattern == segment }
        }?.methods
    }

    /// Reads `paths:`: a path at two spaces of indent, its methods at four.
    static func parse(_ yaml: String) -> [(segments: [String], methods: [String])] {
        var routes: [(segments: [String], methods: [String])] = []
        var inPaths = false
        for line in yaml.split(separator: "\n") {
            if line == "paths:" { inPaths = true; continue }
            guard inPaths else { continue }
            if line.hasPrefix("  /") {
                let path = line.dropFirst(2).dropLast()
                routes.append((path.split(separator: "/", omittingEmptySubsequences: false).map(String.init), []))
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), !routes.isEmpty {
                let word = String(line.dropFirst(4).prefix { $0 != ":" })
                if ["get", "post", "put", "patch", "delete"].contains(word) { routes[routes.count - 1].methods.append(word.uppercased()) }
            }
        }
        return routes
    }
}
