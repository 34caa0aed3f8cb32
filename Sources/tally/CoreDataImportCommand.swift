import ArgumentParser
import Foundation
import TallyCoreData
import TallyLedger

/// `tally import coredata Store.sqlite`: the household app's Core Data store — expenses with
/// their category tree, tags, repeats and images, to-dos, and settings — once however often
/// it is imported (docs/IMPORT.md, "Core Data").
struct CoreDataImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coredata", abstract: "A Core Data SQLite store of the household app (read, never changed).")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The folder the app saved images in (imagePath names a file there).") var files: String?
    @Option(help: "A JSON file naming another model's entities and attributes (docs/IMPORT.md).") var mapping: String?
    @Option(help: "A property-list export of the app's key-value store (NSUbiquitousKeyValueStore).") var settings: String?
    @Option(help: "The amounts' currency (default: setting defaultCurrency, else KRW).") var currency: String?
    @Flag(help: "Show what would be created; write nothing.") var dryRun = false
    @Flag(help: "Print the report as JSON.") var json = false
    @Argument(help: "The store file (e.g. Household.sqlite; its -wal beside it is read too).") var store: String

    func run() async throws {
        let reader: CoreDataStore
        do {
            let model = try mapping.map { try CoreDataMapping(jsonFile: $0) } ?? .household
            reader = try CoreDataStore(path: store, mapping: model, filesFolder: files)
        } catch let error as CoreDataStoreError {
            throw CLIError("\(store): \(error)")
        }
        let report = try await global.withLedger { ledger in
            try await CoreDataImport.run(reader, settingsFile: settings, currency: currency, into: ledger, actor: global.resolvedActor, dryRun: dryRun)
        }
        if json {
            print(report.json.serialized)
            return
        }
        ImportOutput.print(report.expenses, json: false)
        print("To-dos: \(report.todosCreated) created, \(report.todosHeld) already here")
        print("Expenses completed with a repeat or an image: \(report.expensesCompleted) (\(report.attachmentsStored) images stored)")
        print("Settings set: \(report.settingsSet)")
        for problem in report.problems.prefix(50) { print("  problem: \(problem)") }
        if report.problems.count > 50 { print("  … and \(report.problems.count - 50) more problems (--json lists up to 1,000)") }
    }
}
