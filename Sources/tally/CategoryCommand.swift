import ArgumentParser
import TallyCore

struct CategoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "category", abstract: "Add, change or delete a category (a sub-category has a parent).",
        subcommands: [AddEntity<Fields>.self, UpdateEntity<Fields>.self, DeleteEntity<Fields>.self])

    struct Fields: EntityFlags {
        static let entityType = EntityType.category
        @Option(help: FlagInput.help(.category, .name)) var name: String?
        @Option(help: FlagInput.help(.category, .parentId)) var parent: String?
        @Option(help: FlagInput.help(.category, .icon)) var icon: String?
        @Option(help: FlagInput.help(.category, .kind)) var kind: String?

        func properties() throws -> PropertyMap {
            try FlagInput.properties(.category, [(.name, "name", name), (.parentId, "parent", parent), (.icon, "icon", icon), (.kind, "kind", kind)])
        }

        func checkCreate() throws {
            guard name != nil else { throw CLIError("missing --name: a category needs a name") }
        }
    }
}
