import ArgumentParser
import TallyCore

struct SettingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setting", abstract: "Set or delete a setting (a key with a JSON value).",
        subcommands: [Set.self, Delete.self])

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set KEY to a JSON value, e.g. tally setting set defaultCurrency '\"USD\"'.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The setting's key.") var key: String
        @Argument(help: "The value as JSON (quote strings: '\"dark\"').") var value: String
        @Flag(help: "Keep the setting on this replica only (never replicated); its key must start with 'local.', which alone makes it local.") var local = false
        @Flag(help: "Print the setting as JSON.") var json = false

        func run() throws {
            try WriteOutput.reportingViewsBehind {
                let setting = try global.withLedger { try $0.setSetting(key, json: value, isLocal: local ? true : nil, actor: global.resolvedActor) }
                if json { print(setting.serialized) }
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a setting.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The setting's key.") var key: String
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            try WriteOutput.reportingViewsBehind {
                try global.withLedger { try $0.deleteSetting(key, actor: global.resolvedActor) }
                WriteOutput.printDeleted(key, json: json)
            }
        }
    }
}
