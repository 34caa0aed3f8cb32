import Foundation
import PostgresNIO

/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, as `tally serve --cluster` takes it,
/// turned into a client's configuration. Anything else is refused with a message naming what
/// is wrong (the URL comes from an operator's command line, but a typo must not connect to
/// somewhere else).
public enum PostgresURL {
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public static func configuration(_ text: String) throws(Invalid) -> PostgresClient.Configuration {
        guard let url = URLComponents(string: text), let scheme = url.scheme, ["postgres", "postgresql"].contains(scheme) else {
            throw Invalid(description: "a cluster URL is postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, not '\(text)'")
        }
        guard let host = url.host, !host.isEmpty else { throw Invalid(description: "the cluster URL names no host") }
        guard let user = url.user, !user.isEmpty else { throw Invalid(description: "the cluster URL names no user") }
        let database = String(url.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else { throw Invalid(description: "the cluster URL names no database (…/DATABASE)") }
        let port = url.port ?? 5432
        guard (1...65_535).contains(port) else { throw Invalid(description: "the cluster URL's port \(port) is not a port") }
        guard url.query == nil, url.fragment == nil else {
            throw Invalid(description: "the cluster URL takes no options (?…); TLS and the rest are set on the PostgreSQL side")
        }
        return PostgresClient.Configuration(host: host, port: port, username: user, password: url.password, database: database, tls: .disable)
    }

}
