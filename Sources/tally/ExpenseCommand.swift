import ArgumentParser
import Foundation
import TallyCore

struct ExpenseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "expense", abstract: "Add, change or delete a transaction line.",
        subcommands: [Add.self, Update.self, Delete.self])

    /// Flags named after the expense's fields; every one optional so `update` can take just some.
    struct Fields: ParsableArguments {
        @Option(help: "income or expense (add default: expense).") var kind: String?
        @Option(parsing: .unconditional, help: "Amount in integer minor units (12000 = ₩12,000; 1250 = $12.50).") var amount: String?
        @Option(help: "ISO 4217 code (add default: setting defaultCurrency, else KRW).") var currency: String?
        @Option(help: "ISO 8601 date-time; a bare YYYY-MM-DD is local midnight (add default: now).") var date: String?
        @Option(help: "Category id ('none' clears it on update).") var category: String?
        @Option(help: "Payment method: card, cash, transfer, … (free text).") var payment: String?
        @Option(help: "A note.") var memo: String?
        @Option(name: .customLong("tag"), help: "A tag (repeatable; on update, replaces all tags).") var tags: [String] = []
        @Option(help: "none, daily, weekly, monthly or yearly (add default: none).") var `repeat`: String?

        func properties() throws -> PropertyMap {
            var map: PropertyMap = [:]
            map[.kind] = FlagValue.text(kind)
            if let amount { map[.amount] = try FlagValue.amount(amount) }
            map[.currency] = FlagValue.text(currency)
            if let date { map[.date] = try FlagValue.date(date, flag: "date") }
            if let category { map[.categoryId] = try FlagValue.reference(category, flag: "category") }
            map[.payment] = FlagValue.text(payment)
            map[.memo] = FlagValue.text(memo)
            if !tags.isEmpty { map[.tags] = .strings(tags) }
            map[.repeat] = FlagValue.text(`repeat`)
            return map
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Record a new expense or income; prints its id.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var fields: Fields
        @Flag(help: "Print the new expense as JSON.") var json = false

        func run() throws {
            guard fields.amount != nil else { throw CLIError("missing --amount: an expense needs an amount in minor units") }
            let (event, entity) = try LedgerWrite.perform(global) { _, currency in
                let defaults = EntitySchema.defaults(for: .expense, defaultCurrency: currency, now: .now)
                return EventDraft(entityType: .expense, entityID: .uuid(UUID()), operation: .create,
                                  properties: defaults.overlaid(with: try fields.properties()), actor: "")
            }
            WriteOutput.printCreated(event, entity, json: json)
        }
    }

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change some fields of an expense (only the flags given).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The expense's id.") var id: String
        @OptionGroup var fields: Fields
        @Flag(help: "Print the expense afterwards as JSON.") var json = false

        func run() throws {
            let uuid = try FlagValue.id(id)
            let (_, entity) = try LedgerWrite.perform(global) { _, _ in
                EventDraft(entityType: .expense, entityID: .uuid(uuid), operation: .update, properties: try fields.properties(), actor: "")
            }
            WriteOutput.printUpdated(entity, json: json)
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an expense (its history stays in the log).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The expense's id.") var id: String
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let uuid = try FlagValue.id(id)
            let (event, _) = try LedgerWrite.perform(global) { _, _ in
                EventDraft(entityType: .expense, entityID: .uuid(uuid), operation: .delete, actor: "")
            }
            WriteOutput.printDeleted(event, json: json)
        }
    }
}

extension DateTime {
    /// The current time in this machine's UTC offset.
    static var now: DateTime {
        let date = Date()
        return DateTime(epochMillis: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)),
                        offsetMinutes: Int16(TimeZone.current.secondsFromGMT(for: date) / 60))
    }
}
