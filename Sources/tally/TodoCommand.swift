import ArgumentParser
import Foundation
import TallyCore

struct TodoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "todo", abstract: "Add, change or delete a to-do or challenge.",
        subcommands: [Add.self, Update.self, Delete.self])

    struct Fields: ParsableArguments {
        @Option(help: "The title.") var title: String?
        @Option(help: "A note.") var memo: String?
        @Option(help: "Start date (ISO 8601; 'none' clears it on update).") var start: String?
        @Option(help: "End date (ISO 8601; 'none' clears it on update).") var end: String?
        @Option(help: "One check per day or step, e.g. 1,0,1.") var checks: String?
        @Flag(inversion: .prefixedNo, help: "Whether this is a challenge.") var challenge: Bool?
        @Flag(inversion: .prefixedNo, help: "Whether it is completed.") var completed: Bool?

        func properties() throws -> PropertyMap {
            var map: PropertyMap = [:]
            map[.title] = FlagValue.text(title)
            map[.memo] = FlagValue.text(memo)
            if let start { map[.startDate] = start == "none" ? .null : try FlagValue.date(start, flag: "start") }
            if let end { map[.endDate] = end == "none" ? .null : try FlagValue.date(end, flag: "end") }
            if let checks { map[.checks] = try FlagValue.checks(checks) }
            if let challenge { map[.isChallenge] = .bool(challenge) }
            if let completed { map[.isCompleted] = .bool(completed) }
            return map
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a to-do; prints its id.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var fields: Fields
        @Flag(help: "Print the new to-do as JSON.") var json = false

        func run() throws {
            guard fields.title != nil else { throw CLIError("missing --title: a to-do needs a title") }
            let (event, entity) = try LedgerWrite.perform(global) { _, currency in
                let defaults = EntitySchema.defaults(for: .todo, defaultCurrency: currency, now: .now)
                return EventDraft(entityType: .todo, entityID: .uuid(UUID()), operation: .create,
                                  properties: defaults.overlaid(with: try fields.properties()), actor: "")
            }
            WriteOutput.printCreated(event, entity, json: json)
        }
    }

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change some fields of a to-do.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The to-do's id.") var id: String
        @OptionGroup var fields: Fields
        @Flag(help: "Print the to-do afterwards as JSON.") var json = false

        func run() throws {
            let uuid = try FlagValue.id(id)
            let (_, entity) = try LedgerWrite.perform(global) { _, _ in
                EventDraft(entityType: .todo, entityID: .uuid(uuid), operation: .update, properties: try fields.properties(), actor: "")
            }
            WriteOutput.printUpdated(entity, json: json)
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a to-do (its history stays in the log).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The to-do's id.") var id: String
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let uuid = try FlagValue.id(id)
            let (event, _) = try LedgerWrite.perform(global) { _, _ in
                EventDraft(entityType: .todo, entityID: .uuid(uuid), operation: .delete, actor: "")
            }
            WriteOutput.printDeleted(event, json: json)
        }
    }
}
