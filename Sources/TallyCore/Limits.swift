/// Bounds on what a single entity or the settings store may hold. Chosen so a household
/// ledger never meets them and a hostile client cannot grow a row without bound.
public enum Limits {
    /// Largest amount in minor units: 10^15 (a quadrillion won, ~10^13 dollars).
    public static let maxAmount: Int64 = 1_000_000_000_000_000
    /// Longest name (category) in characters.
    public static let maxNameLength = 128
    /// Longest todo title in characters.
    public static let maxTitleLength = 256
    /// Longest memo in characters.
    public static let maxMemoLength = 4_096
    /// Most occurrences a recurring rule's `count` may ask for.
    public static let maxOccurrences = 100_000
    /// The most rows one statement import may create (one durable batch).
    public static let maxImportRows = 1_000_000
    /// Days a recurring rule may skip.
    public static let maxSkippedDates = 1_000
    /// Longest short text (payment method, icon, tag) in characters.
    public static let maxShortTextLength = 64
    /// Most tags on one expense.
    public static let maxTags = 32
    /// Most attachments on one entity.
    public static let maxAttachments = 32
    /// Most checks on one todo (ten years of days).
    public static let maxChecks = 3_660
    /// Longest setting key in bytes (keys are ASCII, see `EntitySchema.validateSettingKey`).
    public static let maxSettingKeyBytes = 64
    /// Most replicated settings (like a key-value cloud store).
    public static let maxReplicatedSettings = 1_024
    /// Total bytes of keys and values of all replicated settings.
    public static let maxReplicatedSettingsBytes = 1 << 20
    /// Longest actor name in bytes.
    public static let maxActorBytes = 128
}

extension Limits {
    /// Most rows one page of a list holds, for the CLI and the API alike (more: follow `nextCursor`).
    public static let maxPageSize = 1_000
    /// Rows a page holds when the caller does not say.
    public static let defaultPageSize = 100

    /// The most people one expense is shared among.
    public static let maxSharePeople = 20
    /// Lines of one split receipt.
    public static let maxLinesPerExpense = 100
}
