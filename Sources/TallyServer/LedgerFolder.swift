import Foundation
import TallyCore
import TallyLog

/// A folder of hosted ledgers on disk (`tally serve --ledgers DIR`) and what an operator does
/// to it (`tally ledgers`): each ledger is a data directory named by its `LedgerName`; a
/// deleted one is moved to `.trash/NAME.SECONDS` (its log, views, tokens and attachments as
/// they were) and removed for good only by a purge of what is older than its grace period.
///
/// A ledger deleted while a server has it open keeps the writes that server still makes (they
/// follow the moved folder into the trash); its tokens stop working at once, because the
/// server reads them from the ledger's place, where there is no longer any.
public struct LedgerFolder: Sendable {
    public let root: String

    public init(root: String) { self.root = (root as NSString).standardizingPath }

    var trashPath: String { root + "/.trash" }

    /// The operator's own folder: its tokens for the server's `/metrics` (`operatorTokens`).
    /// Its name cannot be a ledger's (a `LedgerName` has no dot).
    public var operatorPath: String { root + "/.operator" }

    /// The tokens that read the hosted server's own `/metrics` — no ledger's data: made by
    /// `tally ledgers operator-token`, read by the server at each request.
    public var operatorTokens: TokenStore { TokenStore(folder: operatorPath) }

    /// A new operator token named `name` (its secret, shown once), scope `read`.
    public func createOperatorToken(name: String) throws -> String {
        try FileManager.default.createDirectory(atPath: operatorPath, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return try operatorTokens.create(name: name, scopes: [.read])
    }

    public func path(of name: LedgerName) -> String { root + "/" + name.text }

    /// Makes a new ledger `name` (the folder made if need be); refuses a name taken.
    public func create(_ name: LedgerName) throws -> DataDirectory {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        guard !FileManager.default.fileExists(atPath: path(of: name)) else { throw LedgerFolderError("a ledger named '\(name)' exists") }
        let directory = try DataDirectory.create(path: path(of: name), name: name.text)
        try directory.openWriter().close()  // its log and signing key from the first moment
        return directory
    }

    /// The ledgers, by name (anything else in the folder is not one and is left alone).
    public func names() throws -> [LedgerName] {
        guard FileManager.default.fileExists(atPath: root) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: root).compactMap { LedgerName(checking: $0) }
            .filter { FileManager.default.fileExists(atPath: path(of: $0) + "/replica.json") }
            .sorted { $0.text < $1.text }
    }

    /// The ledger `name`, which must exist.
    public func open(_ name: LedgerName) throws -> DataDirectory {
        guard FileManager.default.fileExists(atPath: path(of: name)) else { throw LedgerFolderError("no ledger named '\(name)'") }
        return try DataDirectory(path: path(of: name))
    }

    /// Moves the ledger `name` to the trash; returns where it went.
    @discardableResult
    public func trash(_ name: LedgerName, now: Date = Date()) throws -> String {
        _ = try open(name)
        try FileManager.default.createDirectory(atPath: trashPath, withIntermediateDirectories: true)
        var seconds = Int(now.timeIntervalSince1970)
        while FileManager.default.fileExists(atPath: "\(trashPath)/\(name).\(seconds)") { seconds += 1 }
        let destination = "\(trashPath)/\(name).\(seconds)"
        try FileManager.default.moveItem(atPath: path(of: name), toPath: destination)
        return destination
    }

    /// A ledger in the trash: its name, when it was deleted, where it is.
    public struct Trashed: Sendable {
        public let name: LedgerName
        public let deletedAt: Date
        public let path: String
    }

    /// What the trash holds, oldest first.
    public func trashed() throws -> [Trashed] {
        guard FileManager.default.fileExists(atPath: trashPath) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: trashPath).compactMap { entry -> Trashed? in
            let parts = entry.split(separator: ".")
            guard parts.count == 2, let name = LedgerName(checking: String(parts[0])), let seconds = Int(parts[1]) else { return nil }
            return Trashed(name: name, deletedAt: Date(timeIntervalSince1970: Double(seconds)), path: trashPath + "/" + entry)
        }.sorted { $0.deletedAt < $1.deletedAt }
    }

    /// Moves the most recently deleted ledger `name` back; refuses if the name is taken again.
    public func restore(_ name: LedgerName) throws {
        guard let newest = try trashed().last(where: { $0.name == name }) else { throw LedgerFolderError("the trash holds no ledger named '\(name)'") }
        guard !FileManager.default.fileExists(atPath: path(of: name)) else {
            throw LedgerFolderError("a ledger named '\(name)' exists; delete or rename it first")
        }
        try FileManager.default.moveItem(atPath: newest.path, toPath: path(of: name))
    }

    /// Removes for good what was deleted before `cutoff`; returns the names removed.
    public func purge(deletedBefore cutoff: Date) throws -> [LedgerName] {
        let old = try trashed().filter { $0.deletedAt < cutoff }
        for entry in old { try FileManager.default.removeItem(atPath: entry.path) }
        return old.map(\.name)
    }
}

/// An operator's request the folder of ledgers refuses, with why.
public struct LedgerFolderError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
