import Foundation
import TallyCoreData
import TallyLedger

/// The way in from Core Data: the app's own store, imported once however often it is run —
/// an app calls it at every launch until it stops using Core Data (docs/IMPORT.md, "Core Data").
extension Replica {
    /// Imports the household app's Core Data store at `store` (read, never changed): expenses
    /// with their category tree, tags, repeats and images (`imageFromCloud`, or `imagePath` in
    /// `files`), to-dos, and — with `settings`, a property-list export of the key-value store —
    /// settings. `mapping` names another model's entities and attributes.
    @discardableResult
    public func importCoreData(
        store: String, files: String? = nil, mapping: CoreDataMapping = .household, settings: String? = nil, currency: String? = nil
    ) async throws -> CoreDataImport.Report {
        let reader = try CoreDataStore(path: store, mapping: mapping, filesFolder: files)
        let actor = actor
        return try await writing { ledger in
            try await CoreDataImport.run(reader, settingsFile: settings, currency: currency, into: ledger, actor: actor)
        }
    }
}
