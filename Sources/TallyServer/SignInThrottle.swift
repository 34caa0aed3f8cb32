import Foundation
import NIOCore
import Synchronization
import TallyCore

/// Slows guessing of passwords: after `freeFailures` failed sign-ins of one account (a
/// ledger's member name) or from one address, each further try within the lockout is refused
/// (429, `Retry-After`) before any password is checked, and the lockout doubles with each
/// failure — 1 s, 2 s, 4 s … up to 15 minutes, counted from the moment the failure is known
/// (after the password's slow check, so a busy server's check cannot outlast the lockout).
/// A success clears the account's count. What a
/// guesser on many addresses gains against one account is bounded by the account's count;
/// what one address gains across many accounts, by the address's.
///
/// An address is an IPv4 address, or the first 64 bits of an IPv6 one (a client given a /64
/// has as many addresses as it likes).
///
/// Kept in memory (a restart forgets it), at most `maxKeys` entries. Past that, a tenth goes:
/// those with the fewest failures first, then the least recently locked — so a flood of new
/// addresses (each one failure) cannot push out an account's count, and with it its lockout.
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

    /// A try of `keys`: how long they must still wait (nothing counted then), or nil — the
    /// try allowed and counted as a failure at once, so that tries sent together each count
    /// before any password is checked (`succeeded` takes a success's count back).
    public func attempt(_ keys: [String], now: ContinuousClock.Instant = .now) -> Duration? {
        failures.withLock { failures in
            if let wait = Self.wait(keys, in: failures, now: now) { return wait }
            if failures.count > Self.maxKeys {
                let fewestFirst = failures.sorted {
                    ($0.value.count, $0.value.lockedUntil) < ($1.value.count, $1.value.lockedUntil)
                }
                for key in fewestFirst.prefix(failures.count / 10).map(\.key) {
                    failures[key] = nil
                }
            }
            for key in keys {
                let count = (failures[key]?.count ?? 0) + 1
                failures[key] = Failures(count: count, lockedUntil: now + Self.lockout(afterFailures: count))
            }
            return nil
        }
    }

    /// How long `keys` must still wait, if they must — nothing counted (a sign-in asks before it
    /// waits for its turn at the password's check, and counts its try once it has the turn).
    public func waiting(_ keys: [String], now: ContinuousClock.Instant = .now) -> Duration? {
        failures.withLock { failures in Self.wait(keys, in: failures, now: now) }
    }

    private static func wait(_ keys: [String], in failures: [String: Failures], now: ContinuousClock.Instant) -> Duration? {
        keys.compactMap { failures[$0].map { $0.lockedUntil - now } }.filter { $0 > .zero }.max()
    }

    /// The try of `keys` failed: their lockout starts again now, when the failure is known.
    public func failed(_ keys: [String], now: ContinuousClock.Instant = .now) {
        failures.withLock { failures in
            for key in keys {
                guard var entry = failures[key] else { continue }
                entry.lockedUntil = max(entry.lockedUntil, now + Self.lockout(afterFailures: entry.count))
                failures[key] = entry
            }
        }
    }

    /// The key a client's address counts under: as `ConnectionLimit` counts connections (an
    /// IPv4 address, or the first 64 bits of an IPv6 one), and loopback, which that does not
    /// count, by its address.
    static func addressKey(_ address: SocketAddress?) -> String {
        "address:" + (ConnectionLimit.addressKey(address).map { Hex.lowercase($0) } ?? address?.ipAddress ?? "?")
    }

    static func lockout(afterFailures count: Int) -> Duration {
        let over = count - freeFailures
        return over < 0 ? .zero : min(.seconds(1 << min(over, 12)), maxLockout)
    }

    /// The try of `keys` succeeded: an account's count is cleared, an address's try taken back.
    public func succeeded(_ keys: [String]) {
        failures.withLock { failures in
            for key in keys {
                if key.hasPrefix("account:") {
                    failures[key] = nil
                } else if var entry = failures[key] {
                    entry.count -= 1
                    failures[key] = entry.count > 0 ? entry : nil
                }
            }
        }
    }
}
