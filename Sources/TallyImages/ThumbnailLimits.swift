/// What making thumbnails may cost the process (docs/SECURITY.md, "Thumbnails"): memory per
/// decode, decodes at once, and time per decode. A thumbnail's memory is bounded by bytes, not
/// pixels: channels and bit depth multiply a pixel count, and some files (an interlaced PNG,
/// a progressive JPEG, HEIC) are decoded whole, not a strip at a time.
public struct ThumbnailLimits: Sendable, Equatable {
    /// The most memory one decode may need, by the estimate read from the image's header
    /// (`ImageHeader.decodeBytes`); more is refused (422) before a pixel is decoded. 320 MiB
    /// takes a 48-megapixel HEIC from an iPhone's main camera.
    public var maxDecodeBytes: Int
    /// Decodes running at once in the process; more wait in line.
    public var concurrentDecodes: Int
    /// Requests that may wait for a decode; more are answered 503 at once.
    public var maxWaiting: Int
    /// The longest one decode may run; it is stopped there (a 150-megapixel PNG takes ~6 s).
    public var decodeTimeout: Duration
    /// The command that decodes in a process of its own (`ThumbnailWorker`: its memory capped
    /// by the kernel, killed at its deadline); nil decodes in this process. `tally serve` sets
    /// it to itself and `thumbnail-worker`.
    public var workerCommand: [String]?

    /// `decodeTimeout` in whole milliseconds (what the shim and the worker's flag take).
    var decodeTimeoutMilliseconds: Int64 {
        let parts = decodeTimeout.components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }

    public init(
        maxDecodeBytes: Int = 320 << 20, concurrentDecodes: Int = 2, maxWaiting: Int = 32, decodeTimeout: Duration = .seconds(10),
        workerCommand: [String]? = nil
    ) {
        (self.maxDecodeBytes, self.concurrentDecodes, self.maxWaiting, self.decodeTimeout) = (maxDecodeBytes, concurrentDecodes, maxWaiting, decodeTimeout)
        self.workerCommand = workerCommand
    }
}
