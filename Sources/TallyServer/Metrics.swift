import Foundation
import Hummingbird
import Prometheus

/// Counters, gauges and latency histograms for `/metrics`, kept by swift-prometheus in a
/// registry of this service's own (not the process-wide swift-metrics bootstrap, which a
/// process may set once: tests run many services in one process) and written by it in the
/// Prometheus text format.
public final class Metrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let logEvents: Gauge
    private let projectionLag: Gauge

    static let buckets: [Duration] = [
        .milliseconds(1), .microseconds(2_500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2_500),
    ]
    // Made once, not per request (each is a few strings the registry joins into the series'
    // name). `MetricNameDescriptor` is not marked `Sendable`, but it is a struct of strings held
    // in a `let`: nothing can change it, so sharing it is safe.
    nonisolated(unsafe) static let requests = MetricNameDescriptor(
        namespace: "tally", subsystem: "http", metricName: "requests", unitName: "total", helpText: "HTTP requests by route, method and status.")
    nonisolated(unsafe) static let duration = MetricNameDescriptor(
        namespace: "tally", subsystem: "http", metricName: "request_duration", unitName: "seconds", helpText: "Request latency by route.")
    nonisolated(unsafe) static let replicatedEvents = MetricNameDescriptor(
        namespace: "tally", metricName: "replicated_events", unitName: "total", helpText: "Events received from each peer.")

    init() {
        logEvents = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "tally", subsystem: "log", metricName: "events", unitName: "",  // no unit: tally_log_events
                helpText: "Events in the log (its last index)."))
        projectionLag = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "tally", subsystem: "projection", metricName: "lag",
                unitName: "events", helpText: "Events appended but not yet in the views."))
    }

    /// Counts a request by route pattern, method and status, and times it by route.
    func record(route: String, method: String, status: Int, duration: Duration) {
        registry.makeCounter(descriptor: Self.requests, labels: [("route", route), ("method", method), ("status", String(status))]).increment()
        registry.makeDurationHistogram(descriptor: Self.duration, labels: [("route", route)], buckets: Self.buckets).record(duration)
    }

    /// Counts events received from a peer (or a push).
    public func replicated(_ count: Int, from peer: String) {
        guard count > 0 else { return }
        registry.makeCounter(descriptor: Self.replicatedEvents, labels: [("peer", peer)]).increment(by: Int64(count))
    }

    /// The hosted server's own exposition text (`tally serve --ledgers`, `GET /metrics` with an
    /// operator token): requests by route pattern across every ledger, and the open set as it
    /// is now. Nothing is labelled by ledger — there may be 100,000 — so the series stay few;
    /// a ledger's own numbers are at its `/v1/ledgers/NAME/metrics` and in `tally ledgers show`.
    func renderHosting(_ hosting: HostingCounts) -> [UInt8] {
        func gauge(_ name: String, _ help: String) -> Gauge {
            registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "tally", subsystem: "hosting", metricName: name, unitName: "", helpText: help))
        }
        gauge("open_ledgers", "Ledgers open now.").set(Int64(hosting.open))
        gauge("opened_ledgers", "Ledgers opened since the server started (total).").set(Int64(hosting.opened))
        gauge("closed_ledgers", "Ledgers closed since the server started (total).").set(Int64(hosting.closed))
        gauge("open_failures", "Opens of a ledger that failed since the server started (total).").set(Int64(hosting.failedOpens))
        gauge("change_feeds", "Change feeds open now, over every ledger.").set(Int64(hosting.changeFeeds))
        return registry.emitToBuffer()
    }

    /// The exposition text, with the log and projection gauges set to what they are now.
    func render(appendedIndex: UInt64, projectedIndex: UInt64) -> [UInt8] {
        logEvents.set(Int64(clamping: appendedIndex))
        projectionLag.set(Int64(clamping: appendedIndex > projectedIndex ? appendedIndex - projectedIndex : 0))
        return registry.emitToBuffer()
    }
}

/// What a hosted server's `/metrics` tells of its open set (`HostedLedgers.counts`).
struct HostingCounts {
    var open = 0, opened = 0, closed = 0, failedOpens = 0, changeFeeds = 0
}

/// Times every request and counts it by route pattern (not raw path, so ids do not explode series).
struct MetricsMiddleware: RouterMiddleware {
    let metrics: Metrics

    func handle(_ request: Request, context: TallyRequestContext, next: (Request, TallyRequestContext) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        // Hummingbird names what no route matched "NotFound" once past the middleware that
        // stopped it, and nothing before: both are "unmatched".
        let route = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "unmatched"
        metrics.record(
            route: route, method: request.method.rawValue, status: response.status.code,
            duration: ContinuousClock.now - start)
        return response
    }
}
