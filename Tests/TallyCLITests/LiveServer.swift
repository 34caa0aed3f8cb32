import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import TallyTestSupport

/// A `tally serve` process on 127.0.0.1 with a port the OS picked.
final class LiveServer: @unchecked Sendable {
    // @unchecked: set up once in init, then only read.
    let process = Process()
    let port: Int
    let replica: CLIReplica

    init(_ replica: CLIReplica, options: [String] = []) throws {
        self.replica = replica
        process.executableURL = URL(fileURLWithPath: TallyBinary.path)
        process.arguments = ["serve", "--data-dir", replica.path, "--port", "0", "--sync-interval", "3600"] + options
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait (bounded) for the line that says where it listens.
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while !text.contains("(replica"), Date() < deadline {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let range = text.range(of: #":(\d+) \(replica"#, options: .regularExpression),
            let port = Int(text[range].dropFirst().prefix { $0.isNumber })
        else {
            process.terminate()
            throw CLIError("the server did not say where it listens: \(text)")
        }
        self.port = port
    }

    /// A test that ends (or fails) without stopping its server does not leave it running.
    deinit {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// The tests' HTTP client: a request may wait for its first byte as long as its deadline
    /// allows (the shared client gives up after 60 s without a byte, which a server slowed down
    /// ~10× by ThreadSanitizer can take).
    static let client = HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: HTTPClient.Configuration(timeout: .init(connect: .seconds(60), read: .seconds(600))))

    func kill(_ signal: Int32) {
        Foundation.kill(process.processIdentifier, signal)
        waitForExit(process)
    }

    /// An HTTP request; returns status and body.
    func request(_ method: HTTPMethod, _ path: String, token: String, json: String? = nil, timeout: TimeAmount = .seconds(120)) async throws -> (
        status: Int, body: String
    ) {
        var request = HTTPClientRequest(url: url + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await Self.client.execute(request, timeout: timeout)
        return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 16 << 20)))
    }
}

struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import NIOHTTP1
