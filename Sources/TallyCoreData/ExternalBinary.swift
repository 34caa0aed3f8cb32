import Foundation

/// A Binary Data (or Transformable) attribute's BLOB when the attribute "Allows External
/// Storage". Core Data then prefixes every value with one byte (its `_PFExternalReferenceData`):
/// `0x01` followed by the bytes themselves (stored inline), or `0x02` followed by the name of a
/// file — a UUID in text, NUL-terminated — in `.<store name>_SUPPORT/_EXTERNAL_DATA/` beside
/// the store, which holds the bytes. A BLOB starting with neither byte is taken as the raw
/// bytes of an attribute without external storage (no image format starts with 0x01 or 0x02).
enum ExternalBinary: Equatable {
    /// The bytes, stored in the row.
    case inline(Data)
    /// The bytes are in the support folder's file of this name (a UUID's text).
    case external(name: String)

    /// Reads the marker of `blob`.
    static func parse(_ blob: Data) throws -> ExternalBinary {
        guard let marker = blob.first else { return .inline(Data()) }
        switch marker {
        case 0x01:
            return .inline(Data(blob.dropFirst()))
        case 0x02:
            var nameBytes = Array(blob.dropFirst())
            if let end = nameBytes.firstIndex(of: 0) { nameBytes = Array(nameBytes[..<end]) }
            // A UUID's text, never a path: the name is joined to the support folder's path.
            guard nameBytes.count == 36, let name = String(bytes: nameBytes, encoding: .ascii), UUID(uuidString: name) != nil else {
                throw FieldProblem("is an external-storage reference to \(nameBytes.count) bytes that are not a UUID")
            }
            return .external(name: name)
        default:
            return .inline(blob)
        }
    }
}

/// The folder Core Data keeps externally stored values in, beside a store at `storePath`:
/// `<folder>/.<store file name without extension>_SUPPORT/_EXTERNAL_DATA`.
struct ExternalDataFolder: Sendable {
    /// The folder's path.
    let path: String

    /// The folder for the store at `storePath` (`Household.sqlite` → `.Household_SUPPORT`).
    init(storePath: String) {
        let store = URL(fileURLWithPath: storePath)
        let base = store.deletingPathExtension().lastPathComponent
        path = store.deletingLastPathComponent().appendingPathComponent(".\(base)_SUPPORT").appendingPathComponent("_EXTERNAL_DATA").path
    }

    /// The path of the file `name`, which must be a regular file of at most `limit` bytes.
    func file(named name: String, limit: Int64) throws -> String {
        let filePath = path + "/" + name
        guard let size = BoundedFile.regularFileSize(filePath) else {
            throw FieldProblem("refers to the external file \(name), which is not in \(path)")
        }
        guard size <= limit else { throw FieldProblem("refers to the external file \(name) of \(size) bytes, over the limit of \(limit)") }
        return filePath
    }

    /// The bytes of the file `name` (see `file(named:limit:)`).
    func read(named name: String, limit: Int64) throws -> Data {
        let filePath = try file(named: name, limit: limit)
        do {
            return try BoundedFile.read(filePath, limit: limit, what: "external data file")
        } catch {
            throw FieldProblem("refers to the external file \(name), which could not be read: \(error)")
        }
    }
}
