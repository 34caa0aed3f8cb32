import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import TallyCore

/// Who a sign-in forwarded by another node of the cluster came from. The owner of a ledger
/// sees every request another node forwards as coming from that node's address: counted there,
/// five wrong passwords through one node made every sign-in through it wait (found by review).
/// So a node forwarding a sign-in says whose address it forwards (`Tally-Forwarded-For`, the key
/// `SignInThrottle` counts under), proved with the cluster's forwarding key
/// (`ClusterArchive.forwardingKey`, only the nodes hold it) over the address, the time, the
/// method and the path (`Tally-Forwarded-Proof: SECONDS.HMAC`). The owner takes the address
/// only with a proof that holds and is at most a minute old; a client that claims to be
/// forwarded is counted by its own address.
enum ForwardedClient {
    static let addressHeader = HTTPField.Name("Tally-Forwarded-For")!
    static let proofHeader = HTTPField.Name("Tally-Forwarded-Proof")!
    /// How old a proof may be (the nodes' clocks are PostgreSQL's clients': NTP-close).
    static let maxAge: Int64 = 60

    /// The headers saying that `address` sent a request of `method` to `path`, now.
    static func headers(address: String, method: String, path: String, key: SymmetricKey, now: Date = Date()) -> [(HTTPField.Name, String)] {
        let seconds = Int64(now.timeIntervalSince1970)
        return [(addressHeader, address), (proofHeader, "\(seconds).\(proof(address, seconds, method, path, key))")]
    }

    /// The address the headers of `request` prove, or nil (none, or a proof that does not hold).
    static func address(of request: Request, key: SymmetricKey, now: Date = Date()) -> String? {
        guard let address = request.headers[addressHeader], address.utf8.count <= 128, let proofText = request.headers[proofHeader],
            let dot = proofText.firstIndex(of: "."), let seconds = Int64(proofText[..<dot])
        else { return nil }
        // Any Int64 may come: the age is taken without a trap (Int64.min's magnitude has no Int64).
        let (age, overflowed) = Int64(now.timeIntervalSince1970).subtractingReportingOverflow(seconds)
        guard !overflowed, age.magnitude <= UInt64(maxAge) else { return nil }
        guard let code = Hex.decode(String(proofText[proofText.index(after: dot)...])) else { return nil }
        // swift-crypto's check compares in constant time.
        let signed = message(address, seconds, request.method.rawValue, request.uri.path)
        return HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: signed, using: key) ? address : nil
    }

    private static func proof(_ address: String, _ seconds: Int64, _ method: String, _ path: String, _ key: SymmetricKey) -> String {
        Hex.lowercase(Array(HMAC<SHA256>.authenticationCode(for: message(address, seconds, method, path), using: key)))
    }

    /// What a proof signs.
    private static func message(_ address: String, _ seconds: Int64, _ method: String, _ path: String) -> Data {
        Data("tally forwarded-for v1\n\(address)\n\(seconds)\n\(method) \(path)".utf8)
    }
}
