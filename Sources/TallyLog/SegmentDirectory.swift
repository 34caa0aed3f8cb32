import Foundation

/// The segment files of a log directory, in log order, and the small file-system chores
/// around them (durable creation, directory fsync).
enum SegmentDirectory {
    /// Segment file names sorted by first index (hex names sort the same way).
    static func segmentNames(in directory: String) throws -> [String] {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw LogError.notALog(path: directory, reason: "cannot list it (\(error.localizedDescription))")
        }
        return names.filter { SegmentFormat.firstIndex(fromFileName: $0) != nil }.sorted()
    }

    /// Fsyncs a directory so that creations and renames in it survive a crash.
    static func syncDirectory(_ directory: String) throws(LogError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw LogError.io(operation: "open", path: directory, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw LogError.io(operation: "fsync", path: directory, errno: errno) }
    }

    /// Writes all of `bytes` at the file's current position, retrying short writes.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(LogError) {
        var done = 0
        while done < bytes.count {
            let written = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if written < 0 {
                if errno == EINTR { continue }
                throw LogError.io(operation: "write", path: path, errno: errno)
            }
            done += written
        }
    }

    /// Creates a segment file durably: header written beside the final name, fsynced, renamed,
    /// directory fsynced. Returns a descriptor open for appending.
    static func createSegment(in directory: String, firstIndex: UInt64) throws -> Int32 {
        let name = SegmentFormat.fileName(firstIndex: firstIndex)
        let path = directory + "/" + name
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LogError.io(operation: "create", path: temporary, errno: errno) }
        do {
            try SegmentFormat.fileHeader(firstIndex: firstIndex).withUnsafeBytes { try writeAll(fd, $0, path: temporary) }
            guard fsync(fd) == 0 else { throw LogError.io(operation: "fsync", path: temporary, errno: errno) }
            guard rename(temporary, path) == 0 else { throw LogError.io(operation: "rename", path: temporary, errno: errno) }
            try syncDirectory(directory)
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// The folder inside a log directory where segment files wait to be adopted (see
    /// `LogWriter.adoptSegments`).
    static let adoptionFolderName = "adopting"

    /// Removes `*.tmp` files left by a crash during segment creation, and an adoption folder
    /// left by a crash before its files were taken (never acknowledged data either way).
    static func removeLeftovers(in directory: String) throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var removed = false
        for name in names where name.hasSuffix("." + SegmentFormat.fileExtension + ".tmp") || name == adoptionFolderName {
            try FileManager.default.removeItem(atPath: directory + "/" + name)
            removed = true
        }
        if removed { try syncDirectory(directory) }
    }
}
