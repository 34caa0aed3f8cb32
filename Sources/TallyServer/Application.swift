import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import TallyLedger

/// How the HTTP server listens and cuts off idle clients (`tally serve`'s flags, checked).
public struct ServerOptions: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    /// The most connections open at once; more are closed as they arrive.
    public var maxConnections = 512
    /// The most of them one client address may hold (an IPv6 address by its /64; loopback,
    /// where a reverse proxy on this machine connects from, is not counted per address).
    public var maxConnectionsPerAddress = 64
    /// A client that sends nothing for this long, mid-request or between requests, is cut off.
    public var idleTimeout: TimeAmount = .seconds(30)
    /// When the ledger's own background work runs (peer syncs, snapshots).
    public var schedule = BackgroundSchedule()

    public init() {}
}

/// The service as a Hummingbird application: the router over `service`, connection limits
/// and idle timeouts, and the ledger's background work beside the server. `onRunning` is told
/// the address and port bound (port 0 asks for any free one).
public func buildApplication(
    _ service: TallyService, _ options: ServerOptions, logger: Logger, onRunning: @escaping @Sendable (_ address: String, _ port: Int) async -> Void
) -> some ApplicationProtocol {
    application(buildRouter(service), services: service.backgroundServices(options.schedule), options, logger: logger, onRunning: onRunning)
}

/// The hosted service (`tally serve --ledgers DIR`) as a Hummingbird application: the router
/// over `ledgers`, which closes idle ledgers as it runs and every ledger at shutdown.
public func buildHostedApplication(
    _ ledgers: HostedLedgers, _ options: ServerOptions, services: [any Service] = [], logger: Logger,
    onRunning: @escaping @Sendable (_ address: String, _ port: Int) async -> Void
) -> some ApplicationProtocol {
    application(buildHostedRouter(ledgers, metrics: Metrics()), services: services + [ledgers], options, logger: logger, onRunning: onRunning)
}

/// `router` served with the connection limit and idle timeout of `options`, `services` beside it.
private func application(
    _ router: Router<TallyRequestContext>, services: [any Service], _ options: ServerOptions, logger: Logger,
    onRunning: @escaping @Sendable (_ address: String, _ port: Int) async -> Void
) -> some ApplicationProtocol {
    let connections = ConnectionLimit(maximum: options.maxConnections, maximumPerAddress: options.maxConnectionsPerAddress)
    return Application(
        router: router,
        // Half-sent requests cannot pile up and hold the service's descriptors (a streaming
        // response, whose request was read whole, is not idle in this sense); a request the HTTP
        // parser refuses is answered with a JSON error too; ClosingAfterAnswer says when else a
        // connection ends (a CONNECT or Upgrade, a body a route left unread); ContinueAnswer
        // tells a client that expects it to send its body.
        server: .http1(
            configuration: .init(
                additionalChannelHandlers: [connections.handler(), UnreadableRequestAnswer(), ClosingAfterAnswer(), ContinueAnswer()],
                idleTimeout: options.idleTimeout)),
        configuration: .init(address: .hostname(options.host, port: options.port), serverName: "tally"),
        services: services,
        onServerRunning: { channel in
            let address = channel.localAddress.map { "\($0)" } ?? "\(options.host):\(options.port)"
            await onRunning(address, channel.localAddress?.port ?? options.port)
        },
        logger: logger)
}
