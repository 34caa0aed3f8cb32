import ArgumentParser
import Foundation
import TallyCore
import TallyLedger

extension GlobalOptions {
    /// Opens the replica for writing: the writer lock (waiting up to `--lock-timeout`), views caught up.
    func openLedger() throws -> Ledger { try Ledger(directory: try open(), lockTimeout: lockTimeout) }

    /// Opens the replica's views for reading (no lock), caught up with the log.
    func openViews() throws -> LedgerViews { try LedgerViews.open(try open()) }

    /// Runs `body` on the ledger and closes it.
    func withLedger<T>(_ body: (Ledger) throws -> T) throws -> T {
        let ledger = try openLedger()
        defer { ledger.close() }
        return try body(ledger)
    }

    /// `withLedger` for the ledger's async operations (its writes).
    func withLedger<T>(_ body: (Ledger) async throws -> T) async throws -> T {
        let ledger = try openLedger()
        defer { ledger.close() }
        return try await body(ledger)
    }
}

/// Flag text to property values through the entity's `EntitySpec`: the same conversions and
/// rules as a JSON body, with errors that name the flag.
enum FlagInput {
    /// The properties the given flags set (a nil flag sets nothing). `flag` is the flag's name
    /// where it differs from the field's (`--category` for `categoryId`).
    static func properties(_ type: EntityType, _ flags: [(name: PropertyName, flag: String, text: String?)]) throws -> PropertyMap {
        let spec = EntitySpec.of(type)
        var map = PropertyMap()
        for (name, flag, text) in flags {
            guard let text, let field = spec.field(name) else { continue }
            do { map[name] = try field.value(fromText: text) } catch {
                throw CLIError("invalid --\(flag) '\(text)': \(error.message)")
            }
        }
        return map
    }

    /// The help line of a field, from its spec.
    static func help(_ type: EntityType, _ name: PropertyName) -> ArgumentHelp {
        ArgumentHelp(stringLiteral: EntitySpec.of(type).field(name)?.help ?? "")
    }

    /// An entity id argument.
    static func id(_ text: String) throws -> UUID {
        guard let uuid = UUID(uuidString: text) else { throw CLIError("invalid id '\(text)': not a UUID") }
        return uuid
    }
}

/// Prints what a write command reports: the new id alone, or the entity as JSON — the same
/// JSON `GET /v1/{type}/{id}` answers with.
enum WriteOutput {
    static func printCreated(_ entity: JSONText, json: Bool) {
        if json {
            print(entity.serialized)
        } else if case .string(let id)? = entity.member("id") {
            print(id)
        }
    }

    static func printUpdated(_ entity: JSONText, json: Bool) {
        if json { print(entity.serialized) }
    }

    /// Runs a write; if it was written but the views could not take it, says so on stderr and
    /// prints the id — exit 0, since the write stands (running it again would write it twice).
    static func reportingViewsBehind(_ write: () async throws -> Void) async throws {
        do { try await write() } catch LedgerError.viewsBehind(let id, let cause) {
            Output.standardError("warning: written durably, but the views could not show it yet (\(cause)); it appears once they catch up\n")
            print(id)
        }
    }

    static func printDeleted(_ id: String, json: Bool) {
        if json { print(JSONText.object([("id", .string(id)), ("deleted", .bool(true))]).serialized) }
    }
}

/// Prints a warning on standard error (the output stays clean for scripts).
func warn(_ message: String) {
    Output.standardError("warning: " + Output.printable(message) + "\n")
}

/// `--as-of`, on the commands that read the views: a log index or a moment (`AsOf`).
struct AsOfOption: ParsableArguments {
    @Option(
        name: .customLong("as-of"),
        help:
            "Answer as the views stood then on this replica: a log index, or a date-time such as 2026-03-31T23:59 (local time unless it ends in Z or an offset), or a day (its end)."
    )
    var text: String?

    /// The views now, or as of `--as-of` (saying which log index that was on standard error).
    func openViews(_ global: GlobalOptions) throws -> LedgerViews {
        let views = try global.openViews()
        guard let text else { return views }
        let point: AsOf
        do { point = try AsOf(parsing: text) } catch { throw CLIError("invalid --as-of '\(text)': \(error.message)") }
        let past = try views.asOf(point, warn: { warn($0) })
        Output.standardError("as of log index \(past.asOfIndex ?? 0)\n")
        return past
    }
}
