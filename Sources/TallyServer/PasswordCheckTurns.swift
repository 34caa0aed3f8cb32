import TallyLedger

/// Sign-ins take turns at their password's slow check (bcrypt, ~0.25 s of a core at cost 12):
/// at most `atOnce` run in the process, the rest wait for a turn without holding a thread, and
/// past `maxWaiting` a sign-in is refused at once (503, `Retry-After`). Found by review: a
/// member who knows their own password (a success clears the throttle's count) could sign in
/// in a loop from a few connections and keep both cores hashing, stopping every other
/// household; now such a loop costs at most one core and delays only sign-ins.
final class PasswordCheckTurns: Sendable {
    private let turns: Turns

    /// The process's turns: one check at a time, so one core stays for everything else.
    static let shared = PasswordCheckTurns(atOnce: 1, maxWaiting: 64)

    init(atOnce: Int, maxWaiting: Int) { turns = Turns(atOnce: atOnce, maxWaiting: maxWaiting) }

    /// Runs `check` in its turn; throws `APIError` 503 if too many already wait.
    func run<Result: Sendable>(_ check: () async throws -> Result) async throws -> Result {
        var busy = APIError(.serviceUnavailable, "busy", "too many sign-ins wait for their password's check; try again in a few seconds")
        busy.retryAfter = 5
        return try await turns.run(refusal: busy, check)
    }
}
