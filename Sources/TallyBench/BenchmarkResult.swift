import Foundation

/// One reported figure beside the baseline measured in the same run.
struct BenchmarkResult {
    var name: String
    var value: Double
    var unit: String
    var baseline: Double
    var baselineName: String

    /// value / baseline.
    var ratio: Double { baseline == 0 ? 0 : value / baseline }

    /// The machine-readable line `scripts/bench` ends with.
    var jsonLine: String {
        func number(_ x: Double) -> String { x.isFinite ? String(format: "%.6g", x) : "null" }
        return "{\"bench\": \"\(name)\", \"value\": \(number(value)), \"unit\": \"\(unit)\", \"baseline\": \(number(baseline)), \"ratio\": \(number(ratio))}"
    }

    /// A line for people.
    var humanLine: String {
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        return pad(name, 22) + String(format: "%12.4g ", value) + pad(unit, 9)
            + String(format: " baseline %12.4g ", baseline) + pad("(\(baselineName))", 44) + String(format: " ratio %.3f", ratio)
    }
}

/// Monotonic time in seconds.
func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// The q-quantile (0…1) of unsorted samples.
func quantile(_ samples: [Double], _ q: Double) -> Double {
    let sorted = samples.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
}
