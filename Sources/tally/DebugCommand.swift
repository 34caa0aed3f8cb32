import ArgumentParser
import Hummingbird
import Logging
import Foundation
import TallyCore
import TallyLedger
import TallyLog

/// Tools for tests and operators that are not part of everyday use.
struct DebugCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "debug", abstract: "Testing aids (crash and load tests).", shouldDisplay: false,
        subcommands: [AppendLoop.self, BulkLoad.self, BareServer.self])

    /// Appends expenses from several threads, printing `ack ORIGIN SEQ` after each append
    /// returns (i.e. is durable). The crash test kills this process and checks every acked
    /// event survived.
    struct AppendLoop: ParsableCommand {
        @OptionGroup var global: GlobalOptions
        @Option(help: "Writer threads.") var threads = 4
        @Option(help: "Appends per thread.") var count = 1_000
        @Option(help: "Segment size limit in bytes (small values exercise sealing).") var segmentSize = 64 << 10

        func run() throws {
            let directory = try global.open()
            var configuration = global.logConfiguration
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
        @OptionGroup var global: GlobalOptions
        @Option(help: "Events to append.") var count = 100_000

        func run() throws {
            let directory = try global.open()
            let writer = try directory.openWriter(configuration: global.logConfiguration)
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
