import Hummingbird
import Synchronization

/// The methods each path of the router serves, read from the router itself once every route
/// is added (`Router.routes`): what a 405's `Allow` lists (`MethodMiddleware`). The OpenAPI
/// document is held to the same list by a test (`theOpenAPIDocumentDescribesEveryRouteAndNoOther`).
final class RouteTable: Sendable {
    /// Each path's segments (`{name}` for a parameter) and methods.
    private let routes = Mutex<[(segments: [Substring], methods: [String])]>([])

    /// Takes the router's routes (call after the last route is added).
    func fill(from router: Router<TallyRequestContext>) {
        var byPath: [String: [String]] = [:]
        for route in router.routes { byPath[route.path.description, default: []].append(route.method.rawValue) }
        // HEAD is added to every GET when the responder is built, after this reads the routes.
        for (path, methods) in byPath where methods.contains("GET") && !methods.contains("HEAD") { byPath[path]?.append("HEAD") }
        routes.withLock { routes in
            routes = byPath.map { path, methods in (path.split(separator: "/"), methods.sorted()) }
        }
    }

    /// Every path and its methods, HEAD included (`autoGenerateHeadEndpoints` adds it to each GET).
    var all: [(path: String, methods: [String])] {
        routes.withLock { $0.map { ("/" + $0.segments.joined(separator: "/"), $0.methods) } }
    }

    /// The methods of the route `path` matches (a `{parameter}` matches any one segment, and
    /// a literal segment wins over a parameter, as in the router: `blobs/missing` before
    /// `blobs/{digest}`), or nil if it matches none.
    func methods(for path: String) -> [String]? {
        // As the router sees a path: empty segments ignored ("/" is no segment at all, and
        // "/v1/expenses/" is "/v1/expenses"); a target that is not a path matches nothing.
        guard path.hasPrefix("/") else { return nil }
        let segments = path.split(separator: "/")
        return routes.withLock { routes in
            routes.filter { route in
                route.segments.count == segments.count
                    && zip(route.segments, segments).allSatisfy { pattern, segment in pattern.hasPrefix("{") ? !segment.isEmpty : pattern == segment }
            }.min { $0.segments.count { $0.hasPrefix("{") } < $1.segments.count { $0.hasPrefix("{") } }?.methods
        }
    }
}
