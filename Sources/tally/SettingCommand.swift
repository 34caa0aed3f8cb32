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
        @Flag(help: "Keep the setting on this replica only (never replicated).") var local = false
        @Flag(help: "Print the setting as JSON.") var json = false

        func run() throws {
            try EntitySchema.validateSettingKey(key)
            let (_, entity) = try LedgerWrite.perform(global) { state, _ in
                let exists = try state.live(.settingKey(key)) != nil
                return EventDraft(entityType: .setting, entityID: .settingKey(key), operation: exists ? .update : .create,
                                  properties: [.value: .json(value)], actor: "", isLocalOnly: local)
            }
            if json, let entity { print(EntityJSON.render(entity).serialized) }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a setting.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The setting's key.") var key: String
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let (event, _) = try LedgerWrite.perform(global) { state, _ in
                // The scope is the setting's own; nobody should have to repeat it to delete.
                EventDraft(entityType: .setting, entityID: .settingKey(key), operation: .delete, actor: "",
                           isLocalOnly: try state.live(.settingKey(key))?.isLocalOnly ?? false)
            }
            WriteOutput.printDeleted(event, json: json)
        }
    }
}
