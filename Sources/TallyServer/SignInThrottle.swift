import Foundation
import Synchronization

/// Slows guessing of passwords: after `freeFailures` failed sign-ins of one account (a
/// ledger's member name) or from one address, each further try within the lockout is refused
/// (429, `Retry-After`) before any password is checked, and the lockout doubles with each
/// failure — 1 s, 2 s, 4 s … up to 15 minutes. A success clears the account's count. What a
/// guesser on many addresses gains against one account is bounded by the account's count;
/// what one address gains across many accounts, by the address's.
///
/// Kept in memory (a restart forgets it), at most `maxKeys` entries, the oldest dropped first.
public final class SignInThrottle: Sendable {
    struct Failures {
        var count: Int
        var lockedUntil: ContinuousClock.Instant
    }
    private let failures = Mutex<[String: Failures]>([:])
    static let freeFailures = 5
    static let maxLockout: Duration = .seconds(900)
    static let maxKeys = 100_000

    public init() {}

    /// How long `keys` must still wait; nil when a try is allowed now.
    public func wait(_ keys: [String], now: ContinuousClock.Instant = .now) -> Duration? {
        failures.withLock { failures in
            keys.compactMap { failures[$0].map { $0.lockedUntil - now } }.filter { $0 > .zero }.max()
        }
    }

    /// A failed try for each of `keys`.
    public func failed(_ keys: [String], now: ContinuousClock.Instant = .now) {
        failures.withLock { failures in
            if failures.count > Self.maxKeys {
                for key in failures.sorted(by: { $0.value.lockedUntil < $1.value.lockedUntil }).prefix(failures.count / 10).map(\.key) {
                    failures[key] = nil
                }
            }
            for key in keys {
                let count = (failures[key]?.count ?? 0) + 1
                let over = count - Self.freeFailures
                let lockout: Duration = over < 0 ? .zero : min(.seconds(1 << min(over, 12)), Self.maxLockout)
                failures[key] = Failures(count: count, lockedUntil: now + lockout)
            }
        }
    }

    /// A sign-in of `key` succeeded.
    public func succeeded(_ key: String) {
        _ = failures.withLock { $0.removeValue(forKey: key) }
    }
}
