/// The intervals an app passes (a sync's, a watch's, a writer's idle time, a retry's waits),
/// brought within what makes sense: zero would spin a loop, and a huge one would overflow the
/// deadline of the sleep it becomes.
enum Intervals {
    static let year = Duration.seconds(365 * 86_400)

    /// `interval` within `shortest` … a year.
    static func bounded(_ interval: Duration, shortest: Duration) -> Duration {
        min(max(interval, shortest), year)
    }
}
