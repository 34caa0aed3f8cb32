import ArgumentParser
import Foundation
import Hummingbird
import Logging
import TallyCore
import TallyLog

/// `tally-debug`: load generators for the crash tests and the benchmarks, which write the log
/// directly (below the ledger: what they test is the log's own durability, or they need a
/// large history fast), and the benchmarks' bare HTTP route. A tool of the test suite, built
/// beside `tally` but not part of it: the `tally` a person runs has no way into the log past
/// the ledger (issue 30).
@main
struct TallyDebug: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tally-debug", abstract: "Testing aids (crash and load tests, the benchmarks' bare route).",
        subcommands: [AppendLoop.self, BulkLoad.self, BareServer.self])

    /// The replica to write to.
    struct ReplicaOption: ParsableArguments {
        @Option(name: .customLong("data-dir"), help: "The replica's data directory (made with tally init).") var dataDirectory: String
    }

    /// Appends expenses from several threads, printing `ack ORIGIN SEQ` after each append
    /// returns (i.e. is durable). The crash test kills this process and checks every acked
    /// event survived.
    struct AppendLoop: ParsableCommand {
        @OptionGroup var replica: ReplicaOption
        @Option(help: "Writer threads.") var threads = 4
        @Option(help: "Appends per thread.") var count = 1_000
        @Option(help: "Segment size limit in bytes (small values exercise sealing).") var segmentSize = 64 << 10

        func run() throws {
            let directory = try DataDirectory(path: replica.dataDirectory)
            var configuration = LogConfiguration()
            configuration.segmentSizeLimit = segmentSize
            let writer = try directory.openWriter(configuration: configuration)
            let output = NSLock()
            let group = DispatchGroup()
            for thread in 0..<threads {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    for step in 0..<count {
                        let draft = EventDraft(
                            entityType: .expense, entityID: .uuid(UUID()), operation: .create,
                            properties: [
                                .kind: .string("expense"), .amount: .int(Int64(1 + step)), .currency: .string("KRW"),
                                .date: .dateTime(.nowHere), .repeat: .string("none"), .memo: .string("thread \(thread) step \(step)"),
                            ], actor: "debug:append-loop")
                        guard let event = try? writer.append([draft]).first else { return }
                        // Unbuffered, so the line is out the moment the append is acknowledged.
                        output.withLock { FileHandle.standardOutput.write(Data("ack \(event.origin) \(event.sequence)\n".utf8)) }
                    }
                }
            }
            group.wait()
        }
    }

    /// Appends a synthetic household history in one bulk append: categories, then expenses
    /// each created and updated four times, spread over 36 months. For crash tests and benchmarks.
    struct BulkLoad: ParsableCommand {
        @OptionGroup var replica: ReplicaOption
        @Option(help: "Events to append.") var count = 100_000

        func run() throws {
            let directory = try DataDirectory(path: replica.dataDirectory)
            let writer = try directory.openWriter()
            defer { writer.close() }
            let receipt = try writer.appendBulk(SyntheticLedger.drafts(count: count))
            print("appended \(receipt.count) events; log ends at index \(receipt.lastIndex)")
        }
    }

    /// A Hummingbird server with one route returning a constant: the benchmarks' baseline for
    /// what the HTTP stack itself costs on this machine.
    struct BareServer: AsyncParsableCommand {
        @Option(help: "Port to listen on (127.0.0.1).") var port = 8090

        func run() async throws {
            let router = Router()
            router.get("/constant") { _, _ in #"{"ok":true}"# }
            let app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                logger: Logger(label: "bare") { StreamLogHandler.standardError(label: $0) })
            try await app.runService()
        }
    }
}
