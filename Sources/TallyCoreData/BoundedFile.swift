import Foundation

/// Reads files named by outside input without following them anywhere unexpected: only
/// regular files (a symbolic link, a FIFO or a device is refused), and never more than a bound.
enum BoundedFile {
    /// The size of the regular file at `path`, or nil when there is none (missing, a directory,
    /// a link, a device). Symbolic links are not followed.
    static func regularFileSize(_ path: String) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let type = attributes[.type] as? FileAttributeType, type == .typeRegular,
            let size = attributes[.size] as? NSNumber
        else { return nil }
        return size.int64Value
    }

    /// The whole of the regular file at `path`, refused when it is not one or holds more than
    /// `limit` bytes. `what` names the file in the error ("mapping file").
    static func read(_ path: String, limit: Int64, what: String) throws -> Data {
        guard let size = regularFileSize(path) else {
            throw CoreDataStoreError(.cannotOpen, "the \(what) \(path) is not there or is not a regular file")
        }
        guard size <= limit else {
            throw CoreDataStoreError(.tooLarge, "the \(what) \(path) has \(size) bytes; at most \(limit) are read")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CoreDataStoreError(.cannotOpen, "the \(what) \(path) cannot be opened for reading")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            // One byte more than allowed: a file that grew since it was measured is still caught.
            data = try handle.read(upToCount: Int(clamping: min(limit, Int64(Int32.max))) + 1) ?? Data()
        } catch {
            throw CoreDataStoreError(.cannotOpen, "the \(what) \(path) could not be read", cause: "\(error)")
        }
        guard Int64(data.count) <= limit else {
            throw CoreDataStoreError(.tooLarge, "the \(what) \(path) has more than \(limit) bytes")
        }
        return data
    }
}
