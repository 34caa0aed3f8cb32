import ArgumentParser
import Foundation
import TallyCore

/// The flags of one entity type's fields, for `add` and `update` (see `ExpenseCommand.Fields`).
protocol EntityFlags: ParsableArguments {
    /// The entity type the flags write.
    static var entityType: EntityType { get }
    /// The properties the given flags set.
    func properties() throws -> PropertyMap
    /// Throws a message naming the flag that a create cannot do without.
    func checkCreate() throws
    /// Files given with `--attach`, to store and reference (none for types without attachments).
    var attachmentFiles: [String] { get }
}

extension EntityFlags {
    var attachmentFiles: [String] { [] }

    /// The properties the flags set, with the `--attach` files stored as attachments and
    /// referenced (replacing the attachments on an update, like `--tag` replaces tags).
    func properties(storingAttachmentsIn global: GlobalOptions) throws -> PropertyMap {
        var map = try properties()
        guard !attachmentFiles.isEmpty else { return map }
        let directory = try global.open()
        let digests = try attachmentFiles.map { try AttachmentFiles.store($0, in: directory).0.digest }
        map[.attachments] = .strings(Array(Set(digests)).sorted())
        return map
    }
}

/// `tally <type> add`: creates one entity; prints its id, or with `--json` the entity as
/// `GET /v1/{type}/{id}` shows it.
struct AddEntity<Flags: EntityFlags>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "add", abstract: "Create \(Flags.entityType.withArticle); prints its id.")
    }
    @OptionGroup var global: GlobalOptions
    @OptionGroup var fields: Flags
    @Flag(help: "Print it as JSON.") var json = false

    func run() async throws {
        try fields.checkCreate()
        let properties = try fields.properties(storingAttachmentsIn: global)
        try await WriteOutput.reportingViewsBehind {
            let (entity, _) = try await global.withLedger { try await $0.create(Flags.entityType, properties, actor: global.resolvedActor) }
            WriteOutput.printCreated(entity, json: json)
        }
    }
}

/// `tally <type> update ID`: sets only the fields whose flags are given.
struct UpdateEntity<Flags: EntityFlags>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "update", abstract: "Change some fields of \(Flags.entityType.withArticle) (only the flags given).")
    }
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Its id.") var id: String
    @OptionGroup var fields: Flags
    @Flag(help: "Print it afterwards as JSON.") var json = false

    func run() async throws {
        let (uuid, properties) = (try FlagInput.id(id), try fields.properties(storingAttachmentsIn: global))
        try await WriteOutput.reportingViewsBehind {
            WriteOutput.printUpdated(
                try await global.withLedger { try await $0.update(Flags.entityType, id: uuid, properties, actor: global.resolvedActor) }, json: json)
        }
    }
}

/// `tally <type> delete ID`: deletes it (its history stays in the log).
struct DeleteEntity<Flags: EntityFlags>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "delete", abstract: "Delete \(Flags.entityType.withArticle) (its history stays in the log).")
    }
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Its id.") var id: String
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let uuid = try FlagInput.id(id)
        try await WriteOutput.reportingViewsBehind {
            try await global.withLedger { try await $0.delete(Flags.entityType, id: uuid, actor: global.resolvedActor) }
            WriteOutput.printDeleted(uuid.lowercased, json: json)
        }
    }
}
