import Foundation

/// An expense's image as the store gives it.
public enum CoreDataImage: Sendable, Equatable {
    /// A file to read: one of Core Data's external-storage files
    /// (`.<store>_SUPPORT/_EXTERNAL_DATA/<UUID>`), or the file an image path names in the
    /// caller's files folder. Checked to be a regular file within the size bound when read.
    case file(path: String)
    /// Bytes stored in the row itself.
    case bytes(Data)
}
