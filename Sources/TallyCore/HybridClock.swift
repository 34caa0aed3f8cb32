/// A hybrid logical clock (Kulkarni et al.): stays close to wall time, never goes backwards,
/// and moves past every remote reading it accepts, so causally later writes get later stamps.
public struct HybridClock: Sendable {
    /// The last reading handed out or observed.
    public private(set) var last: HybridTimestamp
    /// How far ahead of local wall time a remote reading may be before it is refused.
    public var maximumSkewMillis: UInt64

    /// Creates a clock that continues after `last` (the greatest stamp already in the log).
    public init(last: HybridTimestamp = .zero, maximumSkewMillis: UInt64 = 5 * 60 * 1000) {
        self.last = last
        self.maximumSkewMillis = maximumSkewMillis
    }

    /// The next reading for a local write, given the current wall time: always greater than
    /// every reading handed out or observed before. A full counter carries into the
    /// milliseconds (a wrap to 0 would hand out a stamp that loses to an older one).
    public mutating func tick(wallMillis: UInt64) -> HybridTimestamp {
        if wallMillis > last.millis {
            last = HybridTimestamp(millis: wallMillis, counter: 0)
        } else if last.counter < .max {
            last = HybridTimestamp(millis: last.millis, counter: last.counter + 1)
        } else if last.millis < .max {
            last = HybridTimestamp(millis: last.millis + 1, counter: 0)
        }
        return last
    }

    /// Takes note of a remote reading so later local writes order after it.
    ///
    /// A reading more than `maximumSkewMillis` ahead of `wallMillis` is refused and leaves the
    /// clock unchanged: adopting it would drag every later local stamp into the future.
    public mutating func observe(_ remote: HybridTimestamp, wallMillis: UInt64) throws(ClockSkewError) {
        if remote.millis > wallMillis, remote.millis - wallMillis > maximumSkewMillis {
            throw ClockSkewError(remote: remote, wallMillis: wallMillis, maximumSkewMillis: maximumSkewMillis)
        }
        if remote > last { last = remote }
    }

    /// Current wall time in milliseconds since 1970 (a clock set before 1970 reads as 1970: it
    /// trapped converting the negative seconds; the hybrid clock's counter keeps order).
    public static func wallMillis() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        guard spec.tv_sec >= 0 else { return 0 }
        return UInt64(spec.tv_sec) * 1000 + UInt64(spec.tv_nsec) / 1_000_000
    }
}

/// A remote clock reading too far in the future to be trusted.
public struct ClockSkewError: Error, Sendable, CustomStringConvertible {
    /// The refused reading.
    public let remote: HybridTimestamp
    /// Local wall time when it was refused.
    public let wallMillis: UInt64
    /// The configured limit.
    public let maximumSkewMillis: UInt64

    public var description: String {
        "clock skew: a remote stamp is \(remote.millis - wallMillis) ms ahead of this replica's clock "
            + "(limit \(maximumSkewMillis) ms); fix the clock of the replica that wrote it, or raise the maximum skew"
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
