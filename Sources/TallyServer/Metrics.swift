import Foundation
import Hummingbird
import Synchronization
import TallyStore

/// Counters and latency histograms for `/metrics` (Prometheus text format 0.0.4).
///
/// Hand-rolled rather than swift-metrics + swift-prometheus: a handful of series, no labels
/// beyond route and status, and two fewer packages to build on a 2-core CI.
public final class Metrics: Sendable {
    static let buckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    struct Series: Hashable { var route: String; var method: String; var status: Int }
    struct Histogram { var counts = [Int](repeating: 0, count: Metrics.buckets.count + 1); var sum = 0.0; var total = 0 }

    private let state = Mutex<(requests: [Series: Int], latency: [String: Histogram], replicated: [String: Int])>(([:], [:], [:]))

    func record(route: String, method: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.requests[Series(route: route, method: method, status: status), default: 0] += 1
            var histogram = state.latency[route] ?? Histogram()
            let bucket = Self.buckets.firstIndex { seconds <= $0 } ?? Self.buckets.count
            histogram.counts[bucket] += 1
            histogram.sum += seconds
            histogram.total += 1
            state.latency[route] = histogram
        }
    }

    /// Counts events received from a peer (or a push).
    public func replicated(_ count: Int, from peer: String) {
        guard count > 0 else { return }
        state.withLock { $0.replicated[peer, default: 0] += count }
    }

    /// The exposition text, with the log and projection gauges read now.
    func render(appendedIndex: UInt64, projectedIndex: UInt64) -> String {
        state.withLock { state in
            var out = "# HELP tally_http_requests_total HTTP requests by route, method and status.\n# TYPE tally_http_requests_total counter\n"
            for (series, count) in state.requests.sorted(by: { "\($0.key)" < "\($1.key)" }) {
                out += "tally_http_requests_total{route=\"\(series.route)\",method=\"\(series.method)\",status=\"\(series.status)\"} \(count)\n"
            }
            out += "# HELP tally_http_request_duration_seconds Request latency by route.\n# TYPE tally_http_request_duration_seconds histogram\n"
            for (route, histogram) in state.latency.sorted(by: { $0.key < $1.key }) {
                var cumulative = 0
                for (index, bound) in Self.buckets.enumerated() {
                    cumulative += histogram.counts[index]
                    out += "tally_http_request_duration_seconds_bucket{route=\"\(route)\",le=\"\(bound)\"} \(cumulative)\n"
                }
                out += "tally_http_request_duration_seconds_bucket{route=\"\(route)\",le=\"+Inf\"} \(histogram.total)\n"
                out += "tally_http_request_duration_seconds_sum{route=\"\(route)\"} \(histogram.sum)\n"
                out += "tally_http_request_duration_seconds_count{route=\"\(route)\"} \(histogram.total)\n"
            }
            out += "# HELP tally_log_events Events in the log (its last index).\n# TYPE tally_log_events gauge\ntally_log_events \(appendedIndex)\n"
            out += "# HELP tally_projection_lag_events Events appended but not yet in the views.\n# TYPE tally_projection_lag_events gauge\n"
            out += "tally_projection_lag_events \(appendedIndex > projectedIndex ? appendedIndex - projectedIndex : 0)\n"
            out += "# HELP tally_replicated_events_total Events received from each peer.\n# TYPE tally_replicated_events_total counter\n"
            for (peer, count) in state.replicated.sorted(by: { $0.key < $1.key }) {
                out += "tally_replicated_events_total{peer=\"\(peer)\"} \(count)\n"
            }
            return out
        }
    }
}

/// Times every request and counts it by route pattern (not raw path, so ids do not explode series).
struct MetricsMiddleware: RouterMiddleware {
    let metrics: Metrics

    func handle(_ request: Request, context: TallyRequestContext, next: (Request, TallyRequestContext) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        metrics.record(route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: response.status.code, seconds: seconds)
        return response
    }
}
