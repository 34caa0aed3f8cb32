import Foundation

/// The bounds the reader holds a store to, so that a crafted store costs a bounded amount of
/// disk, memory and time. Past a bound a value becomes a problem entry, or (for the store as a
/// whole) a `CoreDataStoreError.Code.tooLarge`; nothing is silently cut short.
struct CoreDataLimits: Sendable {
    /// The store file, and its `-wal`, each at most this (they are copied before reading).
    var maxStoreBytes: Int64 = 512 * 1024 * 1024
    /// One Binary Data or Transformable value, inline or in `_EXTERNAL_DATA`, and one file named
    /// by an image path: 50 MiB.
    var maxBlobBytes: Int64 = 50 * 1024 * 1024
    /// One string attribute, in characters (`length()` in SQLite).
    var maxTextLength: Int64 = 1_000_000
    /// Rows of one entity; past it the read is refused rather than cut short.
    var maxRowsPerEntity = 1_000_000
    /// Amounts at or beyond this magnitude are refused (Tally's import refuses amounts past
    /// 10^15 minor units; no household amount comes near).
    var maxAmountMagnitude: Double = 1e15
    /// A key-value settings export file.
    var maxSettingsBytes: Int64 = 16 * 1024 * 1024
    /// A JSON mapping file.
    var maxMappingBytes: Int64 = 1024 * 1024

    /// The bounds used unless a test asks for others.
    static let standard = CoreDataLimits()
}
