import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Testing

@testable import TallyServer

/// What the owner of a ledger takes from a forwarded sign-in's `Tally-Forwarded-For` (`ForwardedClient`).
@Suite struct ForwardedClientTests {
    let key = SymmetricKey(size: .bits256)
    let path = "/v1/ledgers/kim/session"

    func request(_ headers: [(HTTPField.Name, String)], path: String? = nil) -> Request {
        var fields = HTTPFields()
        for (name, value) in headers { fields.append(HTTPField(name: name, value: value)) }
        return Request(
            head: HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1", path: path ?? self.path, headerFields: fields),
            body: RequestBody(buffer: ByteBuffer()))
    }

    @Test func theAddressIsTakenOnlyWithAProofThatHoldsForThisRequestAndIsFresh() {
        let now = Date()
        let headers = ForwardedClient.headers(address: "address:cb007109", method: "POST", path: path, key: key, now: now)
        #expect(ForwardedClient.address(of: request(headers), key: key, now: now) == "address:cb007109")
        #expect(ForwardedClient.address(of: request(headers), key: SymmetricKey(size: .bits256), now: now) == nil, "another key")
        #expect(ForwardedClient.address(of: request(headers, path: "/v1/ledgers/lee/session"), key: key, now: now) == nil, "another path")
        #expect(ForwardedClient.address(of: request(headers), key: key, now: now.addingTimeInterval(61)) == nil, "too old")
        var otherAddress = headers
        otherAddress[0].1 = "address:c6336401"
        #expect(ForwardedClient.address(of: request(otherAddress), key: key, now: now) == nil, "another address under the same proof")
        #expect(ForwardedClient.address(of: request([headers[0]]), key: key, now: now) == nil, "no proof")
    }

    /// Hostile: any text may come as the proof; none traps (Int64.min's age once would have).
    @Test func aProofOfAnyShapeIsRefusedWithoutATrap() {
        let address = (ForwardedClient.addressHeader, "address:cb007109")
        for proof in [
            "\(Int64.min).00", "\(Int64.max).00", "-0.", ".", "", "12", "99999999999999999999.ab", String(repeating: "9", count: 10_000) + ".0",
            "1.\(String(repeating: "a", count: 100_000))",
        ] {
            #expect(ForwardedClient.address(of: request([address, (ForwardedClient.proofHeader, proof)]), key: key) == nil, "\(proof.prefix(30))")
        }
        let long = (ForwardedClient.addressHeader, String(repeating: "a", count: 129))
        let headers = ForwardedClient.headers(address: long.1, method: "POST", path: path, key: key)
        #expect(ForwardedClient.address(of: request(headers), key: key) == nil, "an address longer than any key")
    }
}
