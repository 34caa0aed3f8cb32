import ArgumentParser
import TallyCore

struct SettingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setting", abstract: "Set or delete a setting (a key with a JSON value).",
        subcommands: [Set.self, Delete.self])

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set KEY to a JSON value, e.g. tally setting set defaultCurrency '\"USD\"'.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The setting's key.") var key: String
        @Argument(help: "The value as JSON (quote strings: '\"dark\"').") var value: String
        @Flag(help: "Keep the setting on this replica only (never replicated); its key must start with 'local.', which alone makes it local.") var local = false
        @Flag(help: "Print the setting as JSON.") var json = false

        func run() async throws {
            try await WriteOutput.reportingViewsBehind {
                let setting = try await global.withLedger {
                    try await $0.setSetting(key, json: value, isLocal: local ? true : nil, actor: global.resolvedActor)
                }
                if json { print(setting.serialized) }
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a setting.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The setting's key.") var key: String
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            try await WriteOutput.reportingViewsBehind {
                try await global.withLedger { try await $0.deleteSetting(key, actor: global.resolvedActor) }
                WriteOutput.printDeleted(key, json: json)
            }
        }
    }
}
