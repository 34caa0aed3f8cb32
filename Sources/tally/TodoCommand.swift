import ArgumentParser
import TallyCore

struct TodoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "todo", abstract: "Add, change or delete a to-do or challenge.",
        subcommands: [AddEntity<Fields>.self, UpdateEntity<Fields>.self, DeleteEntity<Fields>.self])

    struct Fields: EntityFlags {
        static let entityType = EntityType.todo
        @Option(help: FlagInput.help(.todo, .title)) var title: String?
        @Option(help: FlagInput.help(.todo, .memo)) var memo: String?
        @Option(help: "Start date (ISO 8601; 'none' clears it on update).") var start: String?
        @Option(help: "End date (ISO 8601; 'none' clears it on update).") var end: String?
        @Option(help: FlagInput.help(.todo, .checks)) var checks: String?
        @Flag(inversion: .prefixedNo, help: FlagInput.help(.todo, .isChallenge)) var challenge: Bool?
        @Flag(inversion: .prefixedNo, help: FlagInput.help(.todo, .isCompleted)) var completed: Bool?

        func properties() throws -> PropertyMap {
            var map = try FlagInput.properties(
                .todo,
                [
                    (.title, "title", title), (.memo, "memo", memo), (.startDate, "start", start), (.endDate, "end", end), (.checks, "checks", checks),
                ])
            if let challenge { map[.isChallenge] = .bool(challenge) }
            if let completed { map[.isCompleted] = .bool(completed) }
            return map
        }

        func checkCreate() throws {
            guard title != nil else { throw CLIError("missing --title: a to-do needs a title") }
        }
    }
}
