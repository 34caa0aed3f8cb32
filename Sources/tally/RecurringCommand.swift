import ArgumentParser
import Foundation
import TallyCore
import TallyLedger

/// `tally recurring add|update|delete|skip|end|list|run`: rules whose occurrences become
/// ordinary expenses (docs/HOUSEHOLD.md).
struct RecurringCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recurring", abstract: "Recurring entries: rules whose occurrences become expenses up to today.",
        subcommands: [AddEntity<Fields>.self, UpdateEntity<Fields>.self, DeleteEntity<Fields>.self, Skip.self, End.self, List.self, Run.self])

    struct Fields: EntityFlags {
        static let entityType = EntityType.recurring
        @Option(help: FlagInput.help(.recurring, .cadence)) var cadence: String?
        @Option(help: FlagInput.help(.recurring, .startDate)) var start: String?
        @Option(help: FlagInput.help(.recurring, .endDate)) var end: String?
        @Option(help: FlagInput.help(.recurring, .count)) var count: String?
        @Option(name: .customLong("month-end"), help: FlagInput.help(.recurring, .monthEnd)) var monthEnd: String?
        @Option(help: FlagInput.help(.recurring, .kind)) var kind: String?
        @Option(help: FlagInput.help(.recurring, .amount)) var amount: String?
        @Option(help: FlagInput.help(.recurring, .currency)) var currency: String?
        @Option(help: FlagInput.help(.recurring, .categoryId)) var category: String?
        @Option(help: FlagInput.help(.recurring, .payee)) var payee: String?
        @Option(help: FlagInput.help(.recurring, .payment)) var payment: String?
        @Option(help: FlagInput.help(.recurring, .memo)) var memo: String?
        @Option(name: .customLong("tag"), help: "A tag each occurrence gets (repeatable; on update, replaces all).") var tags: [String] = []

        func properties() throws -> PropertyMap {
            var map = try FlagInput.properties(
                .recurring,
                [
                    (.cadence, "cadence", cadence), (.startDate, "start", start), (.endDate, "end", end), (.count, "count", count),
                    (.monthEnd, "month-end", monthEnd), (.kind, "kind", kind), (.amount, "amount", amount), (.currency, "currency", currency),
                    (.categoryId, "category", category), (.payee, "payee", payee), (.payment, "payment", payment), (.memo, "memo", memo),
                ])
            if !tags.isEmpty { map[.tags] = .strings(tags) }
            return map
        }

        func checkCreate() throws {
            guard cadence != nil, amount != nil else { throw CLIError("missing --cadence or --amount: a rule needs both") }
        }
    }

    struct Skip: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Skip one occurrence (one already created is deleted).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The rule's id.") var id: String
        @Option(help: "The day to skip, YYYY-MM-DD.") var date: String

        func run() async throws {
            let uuid = try FlagInput.id(id)
            try await WriteOutput.reportingViewsBehind {
                print(try await global.withLedger { try await $0.skipOccurrence(rule: uuid, day: date, actor: global.resolvedActor) }.serialized)
            }
        }
    }

    struct End: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End a rule: no occurrence after the given day.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The rule's id.") var id: String
        @Option(help: "The last day that may have an occurrence (ISO 8601).") var on: String

        func run() async throws {
            let uuid = try FlagInput.id(id)
            let properties = try FlagInput.properties(.recurring, [(.endDate, "on", on)])
            try await WriteOutput.reportingViewsBehind {
                print(try await global.withLedger { try await $0.update(.recurring, id: uuid, properties, actor: global.resolvedActor) }.serialized)
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every rule, with its next occurrences.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Flag(help: "Print JSON, as GET /v1/recurring answers.") var json = false

        func run() throws {
            let views = try asOf.openViews(global)
            if json { print(try views.recurringDocument().serialized); return }
            let rules = try views.recurringRuleEntities().map { try LedgerViews.ruleJSON($0) }
            print(
                Table.render(
                    header: ["CADENCE", "START", "END", "AMOUNT", "CUR", "PAYEE", "NEXT", "ID"],
                    rows: rules.map { rule in
                        func text(_ name: String) -> String {
                            guard case .object(let fields) = rule, let value = fields.first(where: { $0.0 == name })?.1 else { return "" }
                            switch value {
                            case .string(let text): return text
                            case .int(let number): return String(number)
                            case .array(let items): return items.compactMap { if case .string(let text) = $0 { text } else { nil } }.joined(separator: ", ")
                            default: return ""
                            }
                        }
                        return [
                            text("cadence"), String(text("startDate").prefix(10)), String(text("endDate").prefix(10)), text("amount"), text("currency"),
                            text("payee"), text("next"), text("id"),
                        ]
                    }, rightAligned: [3]))
        }
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create every occurrence due by now that this replica never held (the service does this itself).")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let created = try await global.withLedger { try await $0.materializeRecurrences() }
            print("Created \(created) occurrences.")
        }
    }
}
