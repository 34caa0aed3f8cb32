import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import Testing
import TallyTestSupport

/// The PostgreSQL `scripts/test` started for the cluster tests, and its folder (to stop and
/// start it again).
enum ClusterPostgres {
    static let url = ProcessInfo.processInfo.environment["TALLY_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    static let folder = ProcessInfo.processInfo.environment["TALLY_TEST_POSTGRES_FOLDER"].flatMap { $0.isEmpty ? nil : $0 }

    /// `scripts/postgres stop|start FOLDER`, waited for with `waitpid` (Foundation's `Process`
    /// never saw this script exit once it had started PostgreSQL, which lives on after it).
    static func control(_ command: String) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/postgres").path
        let arguments = ["/bin/bash", script, command, try #require(folder)]
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, argv, environ)
        #expect(spawned == 0, "scripts/postgres \(command) could not start")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        #expect(status == 0, "scripts/postgres \(command) failed (wait status \(status))")
    }
}

/// One `tally serve --ledgers DIR --cluster URL` node, on a port the OS picked; restarted on
/// another port with the same folder and name.
final class ClusterNode: @unchecked Sendable {
    // @unchecked: changed only by the test that owns it, one step at a time.
    let name: String
    let folder: String
    let leaseSeconds: Int
    /// More of `tally serve`'s options.
    let options: [String]
    private(set) var process = Process()
    private(set) var port = 0

    init(_ name: String, folder: String, leaseSeconds: Int = 3, options: [String] = []) throws {
        (self.name, self.folder, self.leaseSeconds, self.options) = (name, folder, leaseSeconds, options)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try start()
    }

    func start() throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: TallyBinary.path)
        process.arguments =
            [
                "serve", "--ledgers", folder, "--port", "0", "--cluster", try #require(ClusterPostgres.url), "--node", name, "--lease-seconds",
                "\(leaseSeconds)", "--idle-close-seconds", "3600",
            ] + options
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while !text.contains("as node"), Date() < deadline {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let range = text.range(of: #":(\d+), hosting"#, options: .regularExpression),
            let port = Int(text[range].dropFirst().prefix { $0.isNumber })
        else {
            process.terminate()
            throw CLIError("node \(name) did not say where it listens: \(text)")
        }
        self.port = port
    }

    deinit {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }

    func signal(_ signal: Int32) { Foundation.kill(process.processIdentifier, signal) }

    /// Kills it (SIGKILL, or SIGTERM to stop gracefully) and waits until it is gone.
    func stop(_ signal: Int32 = SIGKILL) {
        Foundation.kill(process.processIdentifier, signal)
        waitForExit(process)
    }

    var url: String { "http://127.0.0.1:\(port)" }

    func request(
        _ method: HTTPMethod, _ path: String, token: String?, json: String? = nil, headers: [(String, String)] = []
    ) async throws -> (status: Int, body: String) {
        let answer = try await request(method, path, token: token, body: json.map { ("application/json", Data($0.utf8)) }, headers: headers)
        return (answer.status, String(decoding: answer.bytes, as: UTF8.self))
    }

    /// The same with a body of any type, answering the response's bytes.
    func request(
        _ method: HTTPMethod, _ path: String, token: String?, body: (contentType: String, bytes: Data)?, headers: [(String, String)] = []
    ) async throws -> (status: Int, bytes: Data) {
        var request = HTTPClientRequest(url: url + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: body.contentType)
            request.body = .bytes(ByteBuffer(bytes: body.bytes))
        }
        let response = try await LiveServer.client.execute(request, timeout: .seconds(60))
        let buffer = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), Data(buffer.readableBytesView))
    }

    /// Adds an expense whose memo is `memo`; the status.
    func addExpense(_ ledger: String, memo: String, token: String) async -> Int {
        let body = #"{"amount":1200,"currency":"KRW","date":"2026-11-28","memo":"\#(memo)"}"#
        return (try? await request(.POST, "/v1/ledgers/\(ledger)/expenses", token: token, json: body).status) ?? 0
    }

    /// The memos of the ledger's expenses, as served by this node (every page).
    func memos(_ ledger: String, token: String) async throws -> [String] {
        var memos: [String] = []
        var cursor: String?
        repeat {
            let answer = try await request(.GET, "/v1/ledgers/\(ledger)/expenses?limit=1000" + (cursor.map { "&cursor=\($0)" } ?? ""), token: token)
            #expect(answer.status == 200, "\(answer.body)")
            let page = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
            memos += (page["items"] as? [[String: Any]] ?? []).compactMap { $0["memo"] as? String }
            cursor = page["nextCursor"] as? String
        } while cursor != nil
        return memos
    }
}

/// The cluster's view from `tally cluster status --json`: each ledger's lease owner (live ones).
func clusterOwners() throws -> [String: String] {
    let result = try TallyBinary.run(["cluster", "status", "--json", "--cluster", try #require(ClusterPostgres.url)])
    #expect(result.status == 0, "\(result.stderr)")
    let status = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    var owners: [String: String] = [:]
    for ledger in status["ledgers"] as? [[String: Any]] ?? [] where ledger["live"] as? Bool == true {
        if let name = ledger["ledger"] as? String, let owner = ledger["owner"] as? String { owners[name] = owner }
    }
    return owners
}

/// The node that holds `ledger`'s live lease, waiting up to `patience` for one to take it (the
/// writers going on take it; on a loaded machine a lease can lapse between two renewals).
func eventualOwner(of ledger: String, patience: Duration = .seconds(15)) async throws -> String? {
    let start = ContinuousClock.now
    while true {
        if let owner = try clusterOwners()[ledger] { return owner }
        guard ContinuousClock.now - start < patience else { return nil }
        try await Task.sleep(for: .milliseconds(200))
    }
}

/// Registers a ledger in the cluster with a read-write token; returns the token.
func createClusterLedger(_ name: String, staging: String) throws -> String {
    let result = try TallyBinary.run(["ledgers", "create", name, "--ledgers", staging, "--cluster", try #require(ClusterPostgres.url), "--token", "app"])
    #expect(result.status == 0, "\(result.stderr)")
    guard let line = result.stdout.split(separator: "\n").first(where: { $0.hasPrefix("Token app: ") }) else {
        throw CLIError("no token printed: \(result.stdout)")
    }
    return String(line.dropFirst("Token app: ".count))
}

/// A client of a change feed (`text/event-stream`) reading in the background: each event's id
/// and the memo its data names (an expense's), as they arrive.
final class ChangeFeedReader: Sendable {
    private final class Shared: Sendable {
        let state = Mutex<(ids: [UInt64], memos: [String], ended: Bool)>(([], [], false))
    }
    private let shared: Shared
    private let task: Task<Void, Never>

    init(url: String, token: String) {
        let shared = Shared()
        self.shared = shared
        task = Task {
            defer { shared.state.withLock { $0.ended = true } }
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            guard let response = try? await LiveServer.client.execute(request, timeout: .seconds(120)), response.status == .ok else { return }
            var text = ""
            do {
                for try await chunk in response.body {
                    text += String(buffer: chunk)
                    while let end = text.range(of: "\n\n") {
                        let event = String(text[..<end.lowerBound])
                        text = String(text[end.upperBound...])
                        let lines = event.split(separator: "\n")
                        let id = lines.first { $0.hasPrefix("id:") }.flatMap { UInt64($0.dropFirst(3).trimmingCharacters(in: .whitespaces)) }
                        let data = lines.first { $0.hasPrefix("data:") }.map { String($0.dropFirst(5)) } ?? ""
                        let memo = data.range(of: #""memo":"([^"]*)""#, options: .regularExpression).map { String(data[$0].dropFirst(8).dropLast()) }
                        shared.state.withLock { state in
                            if let id { state.ids.append(id) }
                            if let memo { state.memos.append(memo) }
                        }
                    }
                }
            } catch {}
        }
    }

    var ids: [UInt64] { shared.state.withLock { $0.ids } }
    var memos: [String] { shared.state.withLock { $0.memos } }
    var lastID: UInt64 { shared.state.withLock { $0.ids.last ?? 0 } }

    /// Whether `memo` arrived within 20 s.
    func waitFor(_ memo: String) async -> Bool {
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .seconds(20) {
            if shared.state.withLock({ $0.memos.contains(memo) }) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Waits (up to 20 s) for the stream to end.
    func waitForEnd() async {
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .seconds(20), !shared.state.withLock({ $0.ended }) { try? await Task.sleep(for: .milliseconds(50)) }
    }

    func stop() { task.cancel() }
}

/// The status of one HTTP/1.1 request sent to 127.0.0.1:`port` from the loopback address
/// `source` (127.0.0.2, say: a client with an address of its own, which the other tests' clients
/// do not have).
func status(ofRequest request: String, toPort port: Int, from source: String) throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(fd >= 0)
    defer { close(fd) }
    func address(_ host: String, _ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return address
    }
    var local = address(source, 0), remote = address("127.0.0.1", port)
    let length = socklen_t(MemoryLayout<sockaddr_in>.size)
    try #require(withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } } == 0, "bind \(source)")
    try #require(withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) } } == 0, "connect")
    var timeout = timeval(tv_sec: 30, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let bytes = Array(request.utf8)
    var sent = 0
    while sent < bytes.count {
        let wrote = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        try #require(wrote > 0, "send")
        sent += wrote
    }
    var answer: [UInt8] = []
    var piece = [UInt8](repeating: 0, count: 4096)
    while !answer.contains(0x0A) {
        let read = piece.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard read > 0 else { break }
        answer += piece[..<read]
    }
    let statusLine = String(decoding: answer.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
    return try #require(statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) }, "answer: \(statusLine)")
}

/// A sign-in's HTTP request for the hosted ledger `ledger`, with `headers` (lines ending CR LF) added.
func signInRequest(_ ledger: String, name: String, password: String, headers: String = "") -> String {
    let body = #"{"name":"\#(name)","password":"\#(password)"}"#
    return "POST /v1/ledgers/\(ledger)/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
        + headers + "Connection: close\r\n\r\n" + body
}
