import Foundation
import Synchronization
import Testing
import TallyTestSupport

/// Three real `tally serve --cluster` nodes on the PostgreSQL `scripts/test` started (issue 32):
/// the owner of a ledger killed under load, paused past its lease, and PostgreSQL itself
/// stopped and started again. Each test uses ledgers of its own; leases last 3 s.
@Suite(.enabled(if: ClusterPostgres.url != nil, "needs TALLY_TEST_POSTGRES (scripts/test starts a PostgreSQL)"), .serialized)
struct ClusterNodesTests {
    let folder = TemporaryDirectory("tally-cluster")
    /// A prefix no other test's ledgers have.
    let prefix = "c" + UUID().uuidString.lowercased().prefix(8)

    /// What writers were told was written, by ledger.
    final class Acknowledged: Sendable {
        let memos = Mutex<[String: [String]]>([:])
        /// Set when the writers are to stop.
        let stopped = Mutex(false)
        func add(_ memo: String, to ledger: String) { memos.withLock { $0[ledger, default: []].append(memo) } }
    }

    /// Every acknowledged memo is in the ledger exactly once, and no memo twice.
    func expectEachOnce(_ acknowledged: [String], in memos: [String], _ ledger: String) {
        let counts = Dictionary(memos.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(counts.values.allSatisfy { $0 == 1 }, "a write applied twice in \(ledger)")
        let missing = acknowledged.filter { counts[$0] == nil }
        #expect(missing.isEmpty, "\(missing.count) acknowledged writes missing from \(ledger)")
    }

    @Test func writesSurviveKillingTheOwnerAndResumeOnAnotherNodeWithinTheLease() async throws {
        let ledgers = (0..<3).map { "\(prefix)-\($0)" }
        var made: [String: String] = [:]
        for ledger in ledgers { made[ledger] = try createClusterLedger(ledger, staging: folder.file("staging")) }
        let tokens = made
        let nodes = try ["a", "b", "c"].map { try ClusterNode("\(prefix)-\($0)", folder: folder.file($0)) }
        let acknowledged = Acknowledged()
        let writers = Task {
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<6 {
                    group.addTask {
                        var turn = 0
                        while !acknowledged.stopped.withLock({ $0 }), turn < 2_000 {
                            turn += 1
                            let (ledger, node) = (ledgers[(writer + turn) % 3], nodes[(writer * 7 + turn) % 3])
                            let memo = "w\(writer)-\(turn)"
                            if await node.addExpense(ledger, memo: memo, token: tokens[ledger]!) == 201 { acknowledged.add(memo, to: ledger) }
                            try? await Task.sleep(for: .milliseconds(20))
                        }
                    }
                }
            }
        }
        // Kill the owner of the first ledger three times, restarting it each time.
        var failovers: [Duration] = []
        try await Task.sleep(for: .seconds(2))
        for kill in 0..<3 {
            let owner = try #require(try await eventualOwner(of: ledgers[0]), "someone serves \(ledgers[0])")
            let victim = try #require(nodes.first { $0.name == owner })
            let survivor = try #require(nodes.first { $0.name != owner })
            victim.stop(SIGKILL)
            let killed = ContinuousClock.now
            var written = false
            while !written, ContinuousClock.now - killed < .seconds(30) {
                written = await survivor.addExpense(ledgers[0], memo: "failover-\(kill)", token: tokens[ledgers[0]]!) == 201
                if written { acknowledged.add("failover-\(kill)", to: ledgers[0]) } else { try await Task.sleep(for: .milliseconds(200)) }
            }
            failovers.append(ContinuousClock.now - killed)
            #expect(written, "writes resumed on another node after kill \(kill)")
            try victim.start()
        }
        #expect(failovers.allSatisfy { $0 < .seconds(15) }, "failover took \(failovers)")
        acknowledged.stopped.withLock { $0 = true }
        await writers.value

        let written = acknowledged.memos.withLock { $0 }
        #expect(written.values.reduce(0) { $0 + $1.count } > 30, "the writers wrote")
        for ledger in ledgers {
            // Read through a node that may not own it: forwarded or taken, never stale.
            for node in nodes { expectEachOnce(written[ledger] ?? [], in: try await node.memos(ledger, token: tokens[ledger]!), ledger) }
        }
        // Stopped gracefully, each owner's copy is whole: its chain verifies and its views
        // equal a rebuild from its log.
        let owners = try clusterOwners()
        for node in nodes { node.stop(SIGTERM) }
        for ledger in ledgers {
            let owner = try #require(owners[ledger])
            let copy = folder.file(String(owner.split(separator: "-").last!)) + "/" + ledger
            let verified = try TallyBinary.run(["audit", "verify", "--data-dir", copy])
            #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
            let rebuilt = try TallyBinary.run(["rebuild-projections", "--verify-only", "--data-dir", copy])
            #expect(rebuilt.status == 0, "\(rebuilt.stdout) \(rebuilt.stderr)")
        }
    }

    @Test func aNodePausedPastItsLeaseWritesNothingAfterAndItsRequestsGoToTheNewOwner() async throws {
        let ledger = "\(prefix)-p"
        let token = try createClusterLedger(ledger, staging: folder.file("staging"))
        let (a, b) = (try ClusterNode("\(prefix)-a", folder: folder.file("a")), try ClusterNode("\(prefix)-b", folder: folder.file("b")))
        #expect(await a.addExpense(ledger, memo: "before", token: token) == 201)
        #expect(try clusterOwners()[ledger] == a.name)
        let log = folder.file("a") + "/" + ledger + "/log"
        a.signal(SIGSTOP)
        try await Task.sleep(for: .seconds(a.leaseSeconds + 1))
        // "a" cannot answer; its lease ran out, so "b" takes the ledger over, caught up first.
        #expect(await b.addExpense(ledger, memo: "while-paused", token: token) == 201)
        #expect(try clusterOwners()[ledger] == b.name)
        let segmentsOfA = try segmentFiles(log)
        a.signal(SIGCONT)
        // "a" finds its lease gone: what it is asked now is served by "b".
        #expect(await a.addExpense(ledger, memo: "after", token: token) == 201)
        #expect(try segmentFiles(log) == segmentsOfA, "the paused node wrote nothing more")
        expectEachOnce(["before", "while-paused", "after"], in: try await b.memos(ledger, token: token), ledger)
        #expect(try await a.memos(ledger, token: token).sorted() == ["after", "before", "while-paused"])
        a.stop(SIGTERM)
        b.stop(SIGTERM)
    }

    /// A forwarding node remembers where a ledger is served for a minute, not asking
    /// PostgreSQL at each request, and forgets it as soon as that node answers that it no
    /// longer serves the ledger: a write is answered 503 once, the next reaches the new owner;
    /// a read (no body, sent again safely) reaches it at once.
    @Test func aForwardingNodeForgetsAnOwnerThatAnswersItNoLongerServesTheLedger() async throws {
        let ledger = "\(prefix)-m"
        let token = try createClusterLedger(ledger, staging: folder.file("staging-m"))
        let (a, b, c, d) = (
            try ClusterNode("\(prefix)-ma", folder: folder.file("ma")), try ClusterNode("\(prefix)-mb", folder: folder.file("mb")),
            try ClusterNode("\(prefix)-mc", folder: folder.file("mc")), try ClusterNode("\(prefix)-md", folder: folder.file("md"))
        )
        #expect(await a.addExpense(ledger, memo: "first", token: token) == 201)
        #expect(await b.addExpense(ledger, memo: "through-b", token: token) == 201, "forwarded to a, which b now remembers")
        #expect(try await d.request(.GET, "/v1/ledgers/\(ledger)/expenses", token: token).status == 200, "d now remembers a too")
        // "a" loses the ledger to "c" while it cannot answer, longer than a lease.
        a.signal(SIGSTOP)
        try await Task.sleep(for: .seconds(a.leaseSeconds + 1))
        #expect(await c.addExpense(ledger, memo: "through-c", token: token) == 201)
        #expect(try clusterOwners()[ledger] == c.name)
        a.signal(SIGCONT)
        // "b" still takes "a" for the owner: "a" answers 503 (the ledger moved), and "b" forgets it.
        #expect(await b.addExpense(ledger, memo: "moved", token: token) == 503)
        #expect(await b.addExpense(ledger, memo: "after", token: token) == 201, "b asked PostgreSQL again and reached c")
        // "d" still takes "a" for the owner too: its read, answered 503 there, is sent on to "c".
        let read = try await d.request(.GET, "/v1/ledgers/\(ledger)/expenses", token: token)
        #expect(read.status == 200, "\(read.body)")
        #expect(try await c.memos(ledger, token: token).sorted() == ["after", "first", "through-b", "through-c"])
        a.stop(SIGTERM)
        b.stop(SIGTERM)
        c.stop(SIGTERM)
        d.stop(SIGTERM)
    }

    /// Found by review: a forward waited on a paused owner (whose kernel still takes the
    /// connection) for its day-long deadline; and a forward that failed after it was sent was
    /// answered 503 "try again", though the write may have been made. Now a forward gives up
    /// once PostgreSQL says the owner lost the ledger: a read is asked again, a write is a 502.
    @Test func aForwardToAPausedOwnerIsAnsweredOnceItLosesTheLedger() async throws {
        let ledger = "\(prefix)-p"
        let token = try createClusterLedger(ledger, staging: folder.file("staging-p"))
        let (a, b) = (try ClusterNode("\(prefix)-pa", folder: folder.file("pa")), try ClusterNode("\(prefix)-pb", folder: folder.file("pb")))
        #expect(await a.addExpense(ledger, memo: "first", token: token) == 201)
        #expect(try await b.request(.GET, "/v1/ledgers/\(ledger)/expenses", token: token).status == 200, "b now remembers a")
        a.signal(SIGSTOP)
        let start = ContinuousClock.now
        async let read = b.request(.GET, "/v1/ledgers/\(ledger)/expenses", token: token)
        async let write = b.request(.POST, "/v1/ledgers/\(ledger)/expenses", token: token, json: #"{"amount":1200,"currency":"KRW","date":"2026-11-28"}"#)
        let (answeredRead, answeredWrite) = try await (read, write)
        #expect(ContinuousClock.now - start < .seconds(4 * a.leaseSeconds), "answered once the lease ran out, not at the deadline")
        #expect(answeredRead.status == 200, "a read is asked again: PostgreSQL named no owner, and b took the ledger: \(answeredRead.body)")
        #expect(answeredWrite.status == 502 && answeredWrite.body.contains("may have been done"), "\(answeredWrite.body)")
        #expect(await b.addExpense(ledger, memo: "after", token: token) == 201, "b takes the ledger over")
        a.signal(SIGCONT)
        a.stop(SIGTERM)
        b.stop(SIGTERM)
    }

    /// Found by review: on a cluster a ledger was taken before its caller was authenticated —
    /// a stranger's request for a ledger nobody holds took its lease and opened it, and one
    /// for a ledger the cluster does not have was a 404 where one that exists was a 401.
    @Test func aStrangerCannotTellLedgersApartNorBringOneToANode() async throws {
        let ledger = "\(prefix)-s"
        _ = try createClusterLedger(ledger, staging: folder.file("staging-s"))
        let a = try ClusterNode("\(prefix)-sa", folder: folder.file("sa"))
        for name in [ledger, "\(prefix)-none"] {
            let anonymous = try await a.request(.GET, "/v1/ledgers/\(name)/expenses", token: nil)
            #expect(anonymous.status == 401 && anonymous.body.contains("\"unauthorized\""), "\(name): \(anonymous.body)")
            let wrongToken = try await a.request(.GET, "/v1/ledgers/\(name)/expenses", token: "tly_wrong")
            #expect(wrongToken.status == 401 && wrongToken.body.contains("unknown or revoked token"), "\(name): \(wrongToken.body)")
            let signIn = try await a.request(.POST, "/v1/ledgers/\(name)/session", token: nil, json: #"{"name":"kim","password":"a long wrong password"}"#)
            #expect(signIn.status == 401 && signIn.body.contains("wrong_credentials"), "\(name): \(signIn.body)")
        }
        a.stop(SIGTERM)
        // Only the requests that carried a credential or signed in brought the ledger here.
        let b = try ClusterNode("\(prefix)-sb", folder: folder.file("sb"))
        #expect(try await b.request(.GET, "/v1/ledgers/\(ledger)/expenses", token: nil).status == 401)
        #expect(try clusterOwners()[ledger] == nil, "nobody took the ledger for a request without a credential")
        b.stop(SIGTERM)
    }

    /// Found by review: the key a push pinned for a new origin (or a rotation of it) reached
    /// PostgreSQL only with the owner's next renewal; an owner killed before it left the next
    /// owner the origin's events with the old pin. It is stored before the push is answered.
    @Test func aPushedOriginsKeyIsInPostgreSQLWhenThePushIsAnswered() async throws {
        let ledger = "\(prefix)-o"
        let url = try #require(ClusterPostgres.url)
        let token = try createClusterLedger(ledger, staging: folder.file("staging-o"))
        let made = try TallyBinary.run(["token", "create", "--cluster", url, "--ledger", ledger, "--name", "peer", "--scope", "replicate"])
        #expect(made.status == 0, "\(made.stderr)")
        // Renewed every 20 s: no renewal stores anything within this test.
        let a = try ClusterNode("\(prefix)-oa", folder: folder.file("oa"), leaseSeconds: 60)
        let replica = try CLIReplica()
        _ = try replica.ok(["expense", "add", "--amount", "3000", "--date", "2026-01-05"])
        _ = try replica.ok(["peers", "add", "node", a.url + "/v1/ledgers/\(ledger)", "--token", made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
        let report = try replica.ok(["sync", "node", "--json"])
        #expect(report.contains(#""pushed":1"#), "\(report)")
        a.stop(SIGKILL)
        // The same node on an empty folder (its disk lost) takes the ledger at once, its files from PostgreSQL.
        let again = try ClusterNode("\(prefix)-oa", folder: folder.file("oa2"), leaseSeconds: 60)
        #expect(try await again.request(.GET, "/v1/ledgers/\(ledger)/expenses", token: token).status == 200)
        let identity = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: replica.path + "/replica.json"))) as? [String: Any])
        let origin = try #require(identity["replicaId"] as? String)
        let pinned = try String(contentsOfFile: folder.file("oa2") + "/\(ledger)/log/origin-keys.json", encoding: .utf8)
        #expect(pinned.contains(origin), "\(pinned)")
        again.stop(SIGTERM)
    }

    /// Found by review: a change feed forwarded to its owner was written to its client with no
    /// deadline — a client that stopped reading held the forwarding node's connection (and the
    /// task writing to it) for good, whatever the owner's own guard did. The forwarding node
    /// closes it as the owner would: a write not taken within the body timeout.
    @Test func aForwardedFeedWhoseClientStopsReadingIsClosed() async throws {
        let ledger = "\(prefix)-r"
        let token = try createClusterLedger(ledger, staging: folder.file("staging-r"))
        let (a, b) = (
            // The owner's own guard (30 s) does not act within this test: only b's can.
            try ClusterNode("\(prefix)-ra", folder: folder.file("ra")),
            try ClusterNode("\(prefix)-rb", folder: folder.file("rb"), options: ["--idle-timeout", "2"])
        )
        // More events than the sockets between b and its client buffer (~12 MB of feed).
        let rows = (1...30_000).map { "2026-11-\(10 + $0 % 18),\($0),shop \($0)" }.joined(separator: "\n")
        let imported = try await a.request(
            .POST, "/v1/ledgers/\(ledger)/imports?format=csv&currency=KRW", token: token, body: ("text/csv", Data(("date,amount,payee\n" + rows).utf8)))
        #expect(imported.status == 201, "\(String(decoding: imported.bytes.prefix(300), as: UTF8.self))")
        let fd = SlowClientTests.halfSentRequest(
            port: b.port, "GET /v1/ledgers/\(ledger)/changes HTTP/1.1\r\nHost: node\r\nAuthorization: Bearer \(token)\r\n\r\n")
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(SlowClientTests.receive(fd, waiting: 10).hasPrefix("HTTP/1.1 200"), "forwarded to a, the feed begins")
        try await Task.sleep(for: .seconds(8))  // not reading: b's writes wait past its 2 s
        #expect(SlowClientTests.isClosedByPeer(fd), "b closed the connection")
        a.stop(SIGTERM)
        b.stop(SIGTERM)
    }

    @Test func aClientThatPassesForAForwardingNodeIsNotServedByANodeThatDoesNotHoldTheLedger() async throws {
        let ledger = "\(prefix)-f"
        let token = try createClusterLedger(ledger, staging: folder.file("staging-f"))
        let (a, b) = (try ClusterNode("\(prefix)-fa", folder: folder.file("fa")), try ClusterNode("\(prefix)-fb", folder: folder.file("fb")))
        #expect(await a.addExpense(ledger, memo: "first", token: token) == 201)
        #expect(try clusterOwners()[ledger] == a.name)
        // Asked plainly, "b" forwards to the owner.
        #expect(try await b.request(.GET, "/v1/ledgers/\(ledger)/expenses", token: token).status == 200)
        // A request that claims to be forwarded already is never forwarded again (no loops),
        // and "b" does not hold the ledger: 503 with a JSON body, and nothing written anywhere.
        let body = #"{"amount":1200,"currency":"KRW","date":"2026-11-28","memo":"claimed"}"#
        let claimed = try await b.request(
            .POST, "/v1/ledgers/\(ledger)/expenses", token: token, json: body, headers: [("Tally-Forwarded-By", a.name)])
        #expect(claimed.status == 503, "\(claimed.body)")
        #expect(claimed.body.contains("\"ledger_moving\""))
        #expect(try await a.memos(ledger, token: token) == ["first"])
        #expect(try clusterOwners()[ledger] == a.name, "the lease stayed where it was")
        a.stop(SIGTERM)
        b.stop(SIGTERM)
    }

    /// Found by review: the owner of a ledger counted a sign-in another node forwarded under
    /// that node's address, so a stranger's wrong passwords through one node made everyone's
    /// sign-ins through it wait. The forwarding node now proves whose address it forwards
    /// (`ForwardedClient`): each client is counted by its own, and a client that only claims
    /// to be forwarded is counted by its own too.
    @Test func signInsThroughAnotherNodeAreCountedByTheClientsOwnAddress() async throws {
        let ledger = "\(prefix)-s"
        let url = try #require(ClusterPostgres.url)
        let token = try createClusterLedger(ledger, staging: folder.file("staging-s"))
        let added = try TallyBinary.command(
            "/bin/sh",
            ["-c", "echo 'correct horse battery' | \"$0\" members add mina --role owner --cluster \"$1\" --ledger \"$2\"", TallyBinary.path, url, ledger])
        #expect(added.status == 0, "\(added.stderr)")
        let (a, b) = (try ClusterNode("\(prefix)-sa", folder: folder.file("sa")), try ClusterNode("\(prefix)-sb", folder: folder.file("sb")))
        #expect(await a.addExpense(ledger, memo: "first", token: token) == 201)
        #expect(try clusterOwners()[ledger] == a.name)
        // A stranger at 127.0.0.2 guesses through "b", each guess another name (so no account's
        // count stops it): its address waits after five.
        var guesses: [Int] = []
        for index in 0..<7 {
            guesses.append(try status(ofRequest: signInRequest(ledger, name: "guess\(index)", password: "wrong \(index)"), toPort: b.port, from: "127.0.0.2"))
        }
        #expect(guesses.prefix(5).allSatisfy { $0 == 401 } && guesses.last == 429, "\(guesses)")
        // Mina, at 127.0.0.3, signs in through the same node.
        #expect(try status(ofRequest: signInRequest(ledger, name: "mina", password: "correct horse battery"), toPort: b.port, from: "127.0.0.3") == 200)
        // A client at 127.0.0.4 that says it was forwarded, for another address each time, is
        // counted by its own.
        var claimed: [Int] = []
        for index in 0..<7 {
            let forged =
                "Tally-Forwarded-By: \(b.name)\r\nTally-Forwarded-For: address:198.51.100.\(index)\r\nTally-Forwarded-Proof: \(Int(Date().timeIntervalSince1970)).00\r\n"
            claimed.append(
                try status(
                    ofRequest: signInRequest(ledger, name: "claim\(index)", password: "wrong \(index)", headers: forged), toPort: a.port, from: "127.0.0.4"))
        }
        #expect(claimed.last == 429, "\(claimed)")
        // A sign-in's path with a trailing slash reaches the same route: counted by its
        // client's own address too (it went on without it, under the node's).
        var slashed: [Int] = []
        for index in 0..<7 {
            let request = signInRequest(ledger, name: "slash\(index)", password: "wrong \(index)", headers: "Authorization: Bearer \(token)\r\n")
            slashed.append(try status(ofRequest: request.replacingOccurrences(of: "/session HTTP", with: "/session/ HTTP"), toPort: b.port, from: "127.0.0.6"))
        }
        #expect(slashed.last == 429, "\(slashed)")
        let minaSlashed = signInRequest(ledger, name: "mina", password: "correct horse battery", headers: "Authorization: Bearer \(token)\r\n")
        #expect(try status(ofRequest: minaSlashed.replacingOccurrences(of: "/session HTTP", with: "/session/ HTTP"), toPort: b.port, from: "127.0.0.7") == 200)
        // A path with a fragment, which the forward would drop (and the owner then take for a
        // sign-in this node did not see as one), is refused where it arrives.
        let fragment = signInRequest(ledger, name: "guess", password: "wrong").replacingOccurrences(of: "/session HTTP", with: "/session#a HTTP")
        #expect(try status(ofRequest: fragment, toPort: b.port, from: "127.0.0.5") == 400)
        a.stop(SIGTERM)
        b.stop(SIGTERM)
    }

    /// The operator changes a hosted ledger's tokens and members with the CLI from any machine
    /// that reaches PostgreSQL (`--cluster URL --ledger NAME`), not in a node's folder: the node
    /// serving the ledger applies each change and stores it before the command returns, a later
    /// store of its own files does not undo it, and with no node serving the ledger the command
    /// changes what PostgreSQL holds, which the next owner serves.
    @Test func theOperatorsCredentialChangesReachTheNodeThatServesTheLedger() async throws {
        let ledger = "\(prefix)-k"
        let url = try #require(ClusterPostgres.url)
        let token = try createClusterLedger(ledger, staging: folder.file("staging-k"))
        let (a, b) = (try ClusterNode("\(prefix)-ka", folder: folder.file("ka")), try ClusterNode("\(prefix)-kb", folder: folder.file("kb")))
        #expect(await a.addExpense(ledger, memo: "first", token: token) == 201)
        #expect(try clusterOwners()[ledger] == a.name)
        let made = try TallyBinary.run(["token", "create", "--cluster", url, "--ledger", ledger, "--name", "reader", "--scope", "read"])
        #expect(made.status == 0, "\(made.stderr)")
        let reader = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await b.request(.GET, "/v1/ledgers/\(ledger)/expenses", token: reader).status == 200, "through a node that forwards it")
        #expect(await b.addExpense(ledger, memo: "by a reader", token: reader) == 403)
        let added = try TallyBinary.command(
            "/bin/sh",
            ["-c", "echo 'correct horse battery' | \"$0\" members add mina --role owner --cluster \"$1\" --ledger \"$2\"", TallyBinary.path, url, ledger])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try await a.request(.GET, "/v1/ledgers/\(ledger)/members", token: reader).body.contains("\"mina\""))
        // Listed from what PostgreSQL holds: stored with the edit's answer.
        let tokens = try TallyBinary.run(["token", "list", "--json", "--cluster", url, "--ledger", ledger])
        #expect(tokens.status == 0 && tokens.stdout.contains("\"reader\"") && tokens.stdout.contains("\"app\""), "\(tokens.stdout)\(tokens.stderr)")
        let members = try TallyBinary.run(["members", "list", "--json", "--cluster", url, "--ledger", ledger])
        #expect(members.status == 0 && members.stdout.contains("\"mina\""), "\(members.stdout)\(members.stderr)")
        let revoked = try TallyBinary.run(["token", "revoke", "app", "--cluster", url, "--ledger", ledger])
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(await a.addExpense(ledger, memo: "revoked", token: token) == 401, "refused as soon as the command returned")
        let again = try TallyBinary.run(["token", "revoke", "app", "--cluster", url, "--ledger", ledger])
        #expect(again.status != 0 && again.stderr.contains("no token named 'app'"), "\(again.stderr)")
        let unknown = try TallyBinary.run(["token", "revoke", "app", "--cluster", url, "--ledger", "\(prefix)-none"])
        #expect(unknown.status != 0 && unknown.stderr.contains("no ledger named"), "\(unknown.stderr)")
        // Renewals store the node's own files after the changes: they stay.
        try await Task.sleep(for: .seconds(2))
        #expect(await a.addExpense(ledger, memo: "revoked", token: token) == 401)
        #expect(try await a.request(.GET, "/v1/ledgers/\(ledger)/expenses", token: reader).status == 200)
        // Nobody serves it: the change is made to what PostgreSQL holds, and the next owner serves it.
        a.stop(SIGTERM)
        b.stop(SIGTERM)
        let start = ContinuousClock.now
        while try clusterOwners()[ledger] != nil, ContinuousClock.now - start < .seconds(10) { try await Task.sleep(for: .milliseconds(200)) }
        let writerMade = try TallyBinary.run(["token", "create", "--cluster", url, "--ledger", ledger, "--name", "writer", "--scope", "read,write"])
        #expect(writerMade.status == 0, "\(writerMade.stderr)")
        let removed = try TallyBinary.run(["members", "remove", "mina", "--cluster", url, "--ledger", ledger])
        #expect(removed.status != 0 && removed.stderr.contains("only owner"), "the last owner stays: \(removed.stderr)")
        let c = try ClusterNode("\(prefix)-kc", folder: folder.file("kc"))
        let writer = writerMade.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(await c.addExpense(ledger, memo: "by the writer", token: writer) == 201)
        #expect(Set(try await c.memos(ledger, token: reader)) == ["first", "by the writer"])
        #expect(await c.addExpense(ledger, memo: "revoked", token: token) == 401)
        c.stop(SIGTERM)
    }

    /// A client that sends a write's headers to a node that does not hold the ledger and then
    /// a trickle of its body is cut off by that node's body timeout (408), as the owner would
    /// cut it off: the forward reads a short body whole before sending it on, and must not wait
    /// for it forever; a body cut short is a 400. Nothing is written.
    @Test func aTrickledBodyIsCutOffByTheForwardingNodesBodyTimeout() async throws {
        let ledger = "\(prefix)-t"
        let token = try createClusterLedger(ledger, staging: folder.file("staging-t"))
        let a = try ClusterNode("\(prefix)-ta", folder: folder.file("ta"))
        let b = try ClusterNode("\(prefix)-tb", folder: folder.file("tb"), options: ["--idle-timeout", "1"])
        #expect(await a.addExpense(ledger, memo: "first", token: token) == 201)
        let fd = SlowClientTests.halfSentRequest(
            port: b.port,
            "POST /v1/ledgers/\(ledger)/expenses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"am"
        )
        #expect(fd >= 0)
        defer { close(fd) }
        // A byte of body every 0.3 s: never idle for the 1 s idle timeout, never done either.
        var timeout = timeval(tv_sec: 0, tv_usec: 300_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4_096)
        var answer = ""
        let deadline = Date().addingTimeInterval(10)
        while answer.isEmpty, Date() < deadline {
            _ = send(fd, " ", 1, Int32(MSG_NOSIGNAL))
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { answer = String(decoding: buffer.prefix(count), as: UTF8.self) }
            if count == 0 { break }  // closed without an answer
        }
        #expect(answer.hasPrefix("HTTP/1.1 408"), "within 10 s: \(answer)")
        #expect(answer.contains("body_timeout"))
        // A body cut short (the client stops sending): the client's error, 400, not the node's.
        let short = SlowClientTests.halfSentRequest(
            port: b.port,
            "POST /v1/ledgers/\(ledger)/expenses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"am"
        )
        #expect(short >= 0)
        defer { close(short) }
        shutdown(short, Int32(SHUT_WR))
        let cut = SlowClientTests.receive(short, waiting: 10)
        #expect(cut.hasPrefix("HTTP/1.1 400") && cut.contains("body_incomplete"), "\(cut)")
        #expect(try await a.memos(ledger, token: token) == ["first"])
        a.stop(SIGTERM)
        b.stop(SIGTERM)
    }

    @Test(.enabled(if: ClusterPostgres.folder != nil, "needs TALLY_TEST_POSTGRES_FOLDER to stop and start it"))
    func whilePostgreSQLIsDownWritesAre503AndTheNodesResumeWhenItReturns() async throws {
        let ledger = "\(prefix)-d"
        let token = try createClusterLedger(ledger, staging: folder.file("staging"))
        let node = try ClusterNode("\(prefix)-a", folder: folder.file("a"))
        #expect(await node.addExpense(ledger, memo: "before", token: token) == 201)
        try ClusterPostgres.control("stop")
        var down: (status: Int, body: String) = (0, "")
        do {
            let body = #"{"amount":1,"currency":"KRW","date":"2026-11-28","memo":"while-down"}"#
            down = try await node.request(.POST, "/v1/ledgers/\(ledger)/expenses", token: token, json: body)
        } catch {
            Issue.record("no answer while PostgreSQL was down: \(error)")
        }
        var upload: (status: Int, bytes: Data) = (0, Data())
        do {
            let photo = PNGFixture.zeros(width: 4, height: 4, bitDepth: 8, interlaced: false, trailer: Array("down".utf8))
            upload = try await node.request(.POST, "/v1/ledgers/\(ledger)/attachments", token: token, body: ("image/png", photo))
        } catch {
            Issue.record("no answer to an upload while PostgreSQL was down: \(error)")
        }
        try ClusterPostgres.control("start")
        #expect(down.status == 503, "\(down.body)")
        #expect(down.body.contains("\"error\""))
        #expect(upload.status == 503, "an upload PostgreSQL did not take is not acknowledged: \(String(decoding: upload.bytes, as: UTF8.self))")
        #expect(String(decoding: upload.bytes, as: UTF8.self).contains("\"error\""))
        // Back without restarting the node.
        let returned = ContinuousClock.now
        var resumed = false
        while !resumed, ContinuousClock.now - returned < .seconds(60) {
            resumed = await node.addExpense(ledger, memo: "after", token: token) == 201
            if !resumed { try await Task.sleep(for: .milliseconds(500)) }
        }
        #expect(resumed)
        let memos = try await node.memos(ledger, token: token)
        expectEachOnce(["before", "after"], in: memos, ledger)
        #expect(!memos.contains("while-down"), "a write answered 503 was not kept")
        node.stop(SIGTERM)
    }

    @Test func aChangeFeedOnOneNodeSeesEveryWriteMadeThroughAnotherInOrderAcrossRestarts() async throws {
        let ledger = "\(prefix)-f"
        let token = try createClusterLedger(ledger, staging: folder.file("staging"))
        let (a, b) = (try ClusterNode("\(prefix)-a", folder: folder.file("a")), try ClusterNode("\(prefix)-b", folder: folder.file("b")))
        #expect(await a.addExpense(ledger, memo: "m0", token: token) == 201)  // "a" serves it
        let memos = (0...9).map { "m\($0)" }
        // Attached to "b", which forwards it to "a".
        let feed = ChangeFeedReader(url: b.url + "/v1/ledgers/\(ledger)/changes?after=0", token: token)
        for memo in memos[1...4] { #expect(await a.addExpense(ledger, memo: memo, token: token) == 201) }
        #expect(await feed.waitFor("m4"), "the feed on b saw what was written through a")
        // "a" dies with the feed attached; it comes back, and the writes go on through it.
        a.stop(SIGKILL)
        await feed.waitForEnd()
        try a.start()
        for memo in memos[5...9] {
            var written = false
            let started = ContinuousClock.now
            while !written, ContinuousClock.now - started < .seconds(30) {
                written = await a.addExpense(ledger, memo: memo, token: token) == 201
                if !written { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(written)
        }
        // The client attaches again to "b", from the last event it saw.
        let resumed = ChangeFeedReader(url: b.url + "/v1/ledgers/\(ledger)/changes?after=\(feed.lastID)", token: token)
        #expect(await resumed.waitFor("m9"))
        resumed.stop()
        let seen = feed.memos + resumed.memos
        #expect(seen.filter { memos.contains($0) } == memos, "every write once, in order: \(seen)")
        let ids = feed.ids + resumed.ids
        #expect(ids == ids.sorted() && Set(ids).count == ids.count, "event ids increase: \(ids)")
        a.stop(SIGTERM)
        b.stop(SIGTERM)
    }

    @Test func attachmentsUploadedThroughANodeThatDiesAreServedAndAttachedThroughTheNext() async throws {
        let ledger = "\(prefix)-t"
        let token = try createClusterLedger(ledger, staging: folder.file("staging"))
        let (a, b) = (try ClusterNode("\(prefix)-a", folder: folder.file("a")), try ClusterNode("\(prefix)-b", folder: folder.file("b")))
        #expect(await a.addExpense(ledger, memo: "first", token: token) == 201)  // "a" serves it
        let receipt = PNGFixture.zeros(width: 8, height: 8, bitDepth: 8, interlaced: false, trailer: Array(prefix.utf8))
        let photo = PNGFixture.zeros(width: 16, height: 16, bitDepth: 8, interlaced: false, trailer: Array(prefix.utf8))
        var digests: [String] = []
        for bytes in [receipt, photo] {
            let uploaded = try await a.request(.POST, "/v1/ledgers/\(ledger)/attachments", token: token, body: ("image/png", bytes))
            #expect(uploaded.status == 201, "\(String(decoding: uploaded.bytes, as: UTF8.self))")
            let answer = try #require(try JSONSerialization.jsonObject(with: uploaded.bytes) as? [String: Any])
            digests.append(try #require(answer["digest"] as? String))
        }
        let status = try TallyBinary.run(["cluster", "status", "--json", "--cluster", try #require(ClusterPostgres.url)])
        let ledgers = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])["ledgers"] as? [[String: Any]]
        let listed = try #require(ledgers?.first { $0["ledger"] as? String == ledger }, "\(status.stdout)")
        #expect(listed["blobs"] as? Int == 2, "the cluster holds both")
        #expect((listed["archivedBytes"] as? Int ?? 0) > 0 && (listed["secondsSinceLastWrite"] as? Int).map { (0...60).contains($0) } == true)
        #expect(listed["live"] as? Bool == true && (listed["leaseExpiresInSeconds"] as? Int).map { (0...3).contains($0) } == true, "\(listed)")
        // The photo is attached through "a"; "a" dies before the receipt is. "b" takes the
        // ledger over, holding neither.
        let withPhoto = #"{"amount":100,"currency":"KRW","date":"2026-11-29","attachments":["\#(digests[1])"]}"#
        #expect(try await a.request(.POST, "/v1/ledgers/\(ledger)/expenses", token: token, json: withPhoto).status == 201)
        a.stop(SIGKILL)
        let body = #"{"amount":5000,"currency":"KRW","date":"2026-11-29","memo":"with receipt","attachments":["\#(digests[0])"]}"#
        var created = (status: 0, body: "")
        let killed = ContinuousClock.now
        while created.status != 201, ContinuousClock.now - killed < .seconds(30) {
            created = try await b.request(.POST, "/v1/ledgers/\(ledger)/expenses", token: token, json: body)
            if created.status != 201 { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(created.status == 201, "attached on the node that took over: \(created.body)")
        #expect(try clusterOwners()[ledger] == b.name)
        // The attached photo comes to "b" by itself, once it opened the ledger.
        let photoFile = folder.file("b") + "/\(ledger)/blobs/" + digests[1].prefix(2) + "/" + digests[1].dropFirst(2)
        let opened = ContinuousClock.now
        while !FileManager.default.fileExists(atPath: photoFile), ContinuousClock.now - opened < .seconds(20) { try await Task.sleep(for: .milliseconds(100)) }
        #expect(FileManager.default.fileExists(atPath: photoFile), "an attachment the views reference was brought from the cluster")
        let downloaded = try await b.request(.GET, "/v1/ledgers/\(ledger)/attachments/\(digests[0])", token: token, body: nil)
        #expect(downloaded.status == 200)
        #expect(downloaded.bytes == receipt, "the bytes uploaded through the node that died")
        let thumbnail = try await b.request(.GET, "/v1/ledgers/\(ledger)/attachments/\(digests[1])/thumbnail?size=128", token: token, body: nil)
        #expect(thumbnail.status == 200, "a thumbnail of a photo only the archive held")
        #expect(thumbnail.bytes.starts(with: [0xFF, 0xD8]), "a JPEG")
        let unknown = String(repeating: "0", count: 64)
        #expect(try await b.request(.GET, "/v1/ledgers/\(ledger)/attachments/\(unknown)", token: token, body: nil).status == 404)
        b.stop(SIGTERM)
    }

    func segmentFiles(_ log: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: log) where name.hasSuffix(".tseg") {
            files[name] = FileManager.default.contents(atPath: log + "/" + name)
        }
        return files
    }
}
