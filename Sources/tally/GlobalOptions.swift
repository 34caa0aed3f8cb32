import ArgumentParser
import Foundation
import TallyCore
import TallyLog

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "The replica's data directory (default: $TALLY_DATA_DIR, else ./tally-data).")
    var dataDirectory: String?

    @Option(name: .customLong("lock-timeout"), help: "Seconds to wait for another writer to finish before giving up.")
    var lockTimeout: Double = 10

    @Option(help: "Who is making the change, recorded in every event (default: cli:$USER).")
    var actor: String?

    /// `--lock-timeout nan` would wait forever, a negative one makes no sense.
    func validate() throws {
        guard lockTimeout.isFinite, lockTimeout >= 0 else {
            throw ArgumentParser.ValidationError("--lock-timeout is a number of seconds, 0 or more")
        }
    }

    /// The data directory path after defaults.
    var resolvedPath: String {
        dataDirectory ?? ProcessInfo.processInfo.environment["TALLY_DATA_DIR"] ?? "./tally-data"
    }

    var resolvedActor: String {
        actor ?? "cli:" + (ProcessInfo.processInfo.environment["USER"] ?? "unknown")
    }

    /// Opens the initialised data directory.
    func open() throws -> DataDirectory { try DataDirectory(path: resolvedPath) }

    var logConfiguration: LogConfiguration {
        var configuration = LogConfiguration()
        configuration.lockTimeout = lockTimeout
        return configuration
    }
}

/// A one-line failure the CLI reports as `Error: …` with a non-zero exit.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
