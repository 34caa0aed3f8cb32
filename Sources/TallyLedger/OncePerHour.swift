import Synchronization

/// Says whether something is told for the first time within the hour: a warning every
/// client's sync would repeat (each pulls every 30 s) goes to the log once an hour. Keeps at
/// most 1,000 things; past that it starts over.
public final class OncePerHour: Sendable {
    private let told = Mutex<[String: ContinuousClock.Instant]>([:])

    public init() {}

    public func isFirstWithinTheHour(_ thing: String, now: ContinuousClock.Instant = .now) -> Bool {
        told.withLock { told in
            if let last = told[thing], now - last < .seconds(3600) { return false }
            if told.count >= 1_000 { told.removeAll() }
            told[thing] = now
            return true
        }
    }
}
