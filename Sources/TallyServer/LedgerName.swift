import TallyCore

/// The name of a hosted ledger: its folder under `tally serve --ledgers DIR` and its segment
/// of `/v1/ledgers/{ledger}/…`. One to 63 of `a`–`z`, `0`–`9` and `-`, starting with a letter
/// or digit — a DNS label's alphabet, in lower case only.
///
/// Everything else is refused before any file is touched: `..` and `.` (no dot at all), `/`,
/// NUL and every other control, percent-encodings (no `%`), upper case (so `Kim` and `kim`
/// cannot be two ledgers on a case-insensitive disk), and every non-ASCII character (so no
/// Unicode look-alike of another ledger's name — a Cyrillic `а` in `kаng` — can exist).
public struct LedgerName: Sendable, Hashable, CustomStringConvertible {
    public let text: String

    /// The most characters a name has.
    public static let maxLength = 63

    /// `text` if it is a valid name; throws a `ValidationError` naming the rule otherwise.
    public init(_ text: String) throws {
        guard let name = LedgerName(checking: text) else {
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
            throw ValidationError(
                field: "ledger", "'\(shown)' is not a ledger name: 1 to \(Self.maxLength) of a-z, 0-9 and '-', not starting with '-'")
        }
        self = name
    }

    /// `text` if it is a valid name, else nil.
    public init?(checking text: String) {
        let bytes = Array(text.utf8)
        guard (1...Self.maxLength).contains(bytes.count), bytes[0] != UInt8(ascii: "-") else { return nil }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"): continue
            default: return nil
            }
        }
        self.text = text
    }

    public var description: String { text }
}
