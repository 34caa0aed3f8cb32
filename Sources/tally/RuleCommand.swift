import ArgumentParser
import Foundation
import TallyCore
import TallyLedger

/// `tally rule add|update|delete`, `tally rules list`: categorisation rules that imports apply.
struct RuleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rule",
        abstract: "Add, change or delete a categorisation rule: imported rows whose payee or memo contains its text get its category and tags.",
        subcommands: [AddEntity<Fields>.self, UpdateEntity<Fields>.self, DeleteEntity<Fields>.self])

    struct Fields: EntityFlags {
        static let entityType = EntityType.rule
        @Option(help: FlagInput.help(.rule, .pattern)) var pattern: String?
        @Option(help: FlagInput.help(.rule, .match)) var match: String?
        @Option(help: FlagInput.help(.rule, .categoryId)) var category: String?
        @Option(name: .customLong("tag"), help: "A tag a matching row gets (repeatable; on update, replaces all).") var tags: [String] = []

        func properties() throws -> PropertyMap {
            var map = try FlagInput.properties(.rule, [(.pattern, "pattern", pattern), (.match, "match", match), (.categoryId, "category", category)])
            if !tags.isEmpty { map[.tags] = .strings(tags) }
            return map
        }

        func checkCreate() throws {
            guard pattern != nil else { throw CLIError("missing --pattern: the text a row's payee or memo contains") }
        }
    }
}

struct RulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rules", abstract: "List categorisation rules.", subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every categorisation rule.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var asOf: AsOfOption
        @Flag(help: "Print JSON, as GET /v1/rules answers.") var json = false

        func run() throws {
            let views = try asOf.openViews(global)
            if json {
                print(try views.rulesDocument().serialized)
                return
            }
            let rules = try views.rules()
            print(
                Table.render(
                    header: ["PATTERN", "MATCH", "CATEGORY", "TAGS", "ID"],
                    rows: rules.map { rule in
                        func text(_ name: String) -> String {
                            guard case .object(let fields) = rule, let value = fields.first(where: { $0.0 == name })?.1 else { return "" }
                            switch value {
                            case .string(let text): return text
                            case .array(let items): return items.compactMap { if case .string(let t) = $0 { t } else { nil } }.joined(separator: ", ")
                            default: return ""
                            }
                        }
                        return [text("pattern"), text("match"), text("categoryId"), text("tags"), text("id")]
                    }))
        }
    }
}
