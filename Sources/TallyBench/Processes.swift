import AsyncHTTPClient
import Foundation
import TallyStore
import TallyLog

/// Starts a process with its output discarded (a server the benchmark loads).
func startProcess(_ arguments: [String]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
}

/// Runs a process to its end and returns what it printed; throws if it failed.
func runProcess(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    // Reaped here: Foundation's own watch missed an exit now and then when a hundred short
    // processes ran one after another (isRunning stayed true for a zombie).
    var status: Int32 = 0
    var reaped = waitpid(process.processIdentifier, &status, 0)
    while reaped < 0 && errno == EINTR { reaped = waitpid(process.processIdentifier, &status, 0) }
    if reaped < 0 {  // Foundation reaped it first
        while process.isRunning { usleep(1000) }
        status = process.terminationStatus << 8
    }
    guard status == 0 else { throw BenchError("\(arguments.joined(separator: " ")) exited with wait status \(status)") }
    return output
}

/// A new data directory `name` under `workDirectory` (any earlier one removed).
func freshBenchDirectory(_ name: String, in workDirectory: String) throws -> DataDirectory {
    let path = workDirectory + "/" + name
    try? FileManager.default.removeItem(atPath: path)
    return try DataDirectory.create(path: path, name: name)
}

/// A first load of `directory`'s whole log into fresh views (its views removed first),
/// events/s: the same-run baseline of the rows that project many events at once.
func firstLoadRate(of directory: DataDirectory) throws -> Double {
    for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasPrefix("projections") {
        try FileManager.default.removeItem(atPath: directory.path + "/" + name)
    }
    let events = try directory.reader.statistics().events
    let projector = try Projector(directory: directory)
    defer { projector.close() }
    let start = now()
    try projector.catchUp()
    return Double(events) / (now() - start)
}

/// Serves `source` with `tally serve` on 127.0.0.1:`port` (a replicate token made for it) and
/// runs `tally sync` of the replica at `target` against it; returns the seconds the sync took
/// (the server's start is not timed).
func timedSync(_ tally: String, from source: String, into target: String, port: Int) async throws -> Double {
    let token = try runProcess([tally, "token", "create", "--data-dir", source, "--name", "bench-\(port)", "--scope", "replicate,read"])
        .trimmingCharacters(in: .whitespacesAndNewlines)
    let server = try startProcess([tally, "serve", "--data-dir", source, "--port", "\(port)"])
    defer { server.terminate() }
    try await waitForHealth("http://127.0.0.1:\(port)/health")
    let start = now()
    _ = try runProcess([tally, "sync", "http://127.0.0.1:\(port)", "--token", token, "--data-dir", target])
    return now() - start
}

/// Waits (up to 600 s) until `url` answers 200.
func waitForHealth(_ url: String) async throws {
    let deadline = now() + 600
    while now() < deadline {
        if let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(2)), response.status.code == 200 { return }
        try await Task.sleep(for: .milliseconds(200))
    }
    throw BenchError("\(url) did not answer within 600 s")
}
