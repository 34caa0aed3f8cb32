import ArgumentParser
import Foundation
import TallyCore

struct CategoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "category", abstract: "Add, change or delete a category (a sub-category has a parent).",
        subcommands: [Add.self, Update.self, Delete.self])

    struct Fields: ParsableArguments {
        @Option(help: "The category's name.") var name: String?
        @Option(help: "Parent category id ('none' makes it top level on update).") var parent: String?
        @Option(help: "An icon name or emoji.") var icon: String?
        @Option(help: "income or expense (add default: expense).") var kind: String?

        func properties() throws -> PropertyMap {
            var map: PropertyMap = [:]
            map[.name] = FlagValue.text(name)
            if let parent { map[.parentId] = try FlagValue.reference(parent, flag: "parent") }
            map[.icon] = FlagValue.text(icon)
            map[.kind] = FlagValue.text(kind)
            return map
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a category; prints its id.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var fields: Fields
        @Flag(help: "Print the new category as JSON.") var json = false

        func run() throws {
            guard fields.name != nil else { throw CLIError("missing --name: a category needs a name") }
            let (event, entity) = try LedgerWrite.perform(global) { _, currency in
                let defaults = EntitySchema.defaults(for: .category, defaultCurrency: currency, now: .now)
                return EventDraft(entityType: .category, entityID: .uuid(UUID()), operation: .create,
                                  properties: defaults.overlaid(with: try fields.properties()), actor: "")
            }
            WriteOutput.printCreated(event, entity, json: json)
        }
    }

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change some fields of a category.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The category's id.") var id: String
        @OptionGroup var fields: Fields
        @Flag(help: "Print the category afterwards as JSON.") var json = false

        func run() throws {
            let uuid = try FlagValue.id(id)
            let (_, entity) = try LedgerWrite.perform(global) { _, _ in
                EventDraft(entityType: .category, entityID: .uuid(uuid), operation: .update, properties: try fields.properties(), actor: "")
            }
            WriteOutput.printUpdated(entity, json: json)
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a category (its history stays in the log).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The category's id.") var id: String
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let uuid = try FlagValue.id(id)
            let (event, _) = try LedgerWrite.perform(global) { _, _ in
                EventDraft(entityType: .category, entityID: .uuid(uuid), operation: .delete, actor: "")
            }
            WriteOutput.printDeleted(event, json: json)
        }
    }
}
