import Foundation

/// Runs the built `tally` binary, as a person or script would.
public enum TallyBinary {
    /// Path of the `tally` executable built beside the test bundle.
    public static var path: String {
        if let explicit = ProcessInfo.processInfo.environment["TALLY_BIN"] { return explicit }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("tally").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return Bundle.main.bundleURL.appendingPathComponent("tally").path
    }

    /// Path of the `tally-debug` executable (the crash tests' and benchmarks' load generators),
    /// built beside `tally`.
    public static var debugPath: String {
        URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("tally-debug").path
    }

    /// Path of the `tally-household` example app (TallyKit's), built beside `tally`.
    public static var householdPath: String {
        URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("tally-household").path
    }

    /// What a finished run printed and returned.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs `tally ARGS` with `--data-dir`-free environment and waits for it.
    public static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        try command(path, arguments, environment: environment)
    }

    /// Runs any program and waits for it.
    public static func command(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        waitForExit(process)
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }
}

/// Waits for a child to exit by polling: `Process.waitUntilExit` spins a run loop, which can
/// hang when called from Swift concurrency's threads.
public func waitForExit(_ process: Process) {
    while process.isRunning { usleep(2_000) }
}

/// Runs `body` with its synchronous parts on a thread of its own (a serial queue's), not on
/// one of Swift's few cooperative threads (two here): for a test that blocks for long (killing
/// and restarting processes, sleeping between kills). A synchronous test runs on a cooperative
/// thread, and two such tests at once starved every async test of the suite for minutes (a
/// `WriteBatcher` test's 120-second wait ran out on CI). The task is the test's own, so
/// `#expect` inside records into the test as anywhere else.
public func offTheCooperativeThreads<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
    try await withTaskExecutorPreference(QueueExecutor()) { try await body() }
}

/// Runs a task's jobs on a serial dispatch queue of its own.
private final class QueueExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "tally.tests.blocking")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
