import Foundation
import TallyCluster
import TallyCore
import TallyLog

/// A change the operator makes with the CLI to a hosted ledger's tokens, members, invitations
/// or quota (`tally token|members … --cluster URL --ledger NAME`, `tally ledgers quota NAME
/// --cluster URL`). On a cluster a ledger's folder is the serving node's copy of what
/// PostgreSQL holds, so the CLI changes no folder: it queues the edit in PostgreSQL
/// (`ClusterArchive.queueEdit`) and the node that serves the ledger applies it to its folder
/// within a renewal and stores the files with the edit's answer in one transaction; with no
/// node serving it, the CLI applies it to PostgreSQL's copy itself (`applyWhileUnserved`).
///
/// An edit carries everything it stores — a token's hash, a member's bcrypt hash, an
/// invitation's hash — made by the CLI, so a secret never leaves the operator's machine and
/// applying an edit again to the files as PostgreSQL holds them gives the same files.
public enum CredentialEdit: Codable, Sendable, Equatable {
    case addToken(TokenRecord)
    case revokeToken(name: String)
    case addMember(Member)
    case removeMember(name: String)
    case addInvitation(Invitation)
    /// The limits `limits` sets (those it leaves nil as they were), after removing every limit
    /// first with `clearing`.
    case changeQuota(limits: LedgerQuota, clearing: Bool)

    /// Applies the edit to the ledger folder at `folder`: nil when done, else why it was
    /// refused (nothing changed).
    public func apply(folder: String) -> String? {
        do {
            switch self {
            case .addToken(let record): try TokenStore(folder: folder).add(record)
            case .revokeToken(let name):
                guard try TokenStore(folder: folder).revoke(name: name) else { return "no token named '\(name)'" }
            case .addMember(let member): try MemberStore(folder: folder).add(member)
            case .removeMember(let name):
                guard try MemberStore(folder: folder).remove(name) else { return "no member named '\(name)'" }
            case .addInvitation(let invitation): try MemberStore(folder: folder).add(invitation)
            case .changeQuota(let limits, let clearing):
                try LedgerQuota.write(try LedgerQuota.read(folder: folder).changed(by: limits, clearing: clearing), folder: folder)
            }
            return nil
        } catch let error as ValidationError {
            return error.message
        } catch let error as LogError {
            if case .rejected(let reason) = error { return reason }
            return "\(error)"
        } catch {
            return "\(error)"
        }
    }

    /// The most bytes an edit may hold; a node refuses a larger one unread.
    public static let maxBytes = ClusterArchive.maxEditBytes

    /// The edit as it is queued.
    public var bytes: [UInt8] { Array((try? JSONEncoder().encode(self)) ?? Data()) }

    /// An edit read back from the queue; nil for bytes that are not one.
    public init?(bytes: [UInt8]) {
        guard let edit = try? JSONDecoder().decode(CredentialEdit.self, from: Data(bytes)) else { return nil }
        self = edit
    }

    /// Applies the edit queued as `bytes` to `files` (a ledger folder's files as PostgreSQL
    /// holds them) in a folder of their own: the files after it, and why it was refused (nil
    /// when done).
    static func applied(_ bytes: [UInt8], to files: [String: [UInt8]]) throws -> (files: [String: [UInt8]], refusal: String?) {
        guard let edit = CredentialEdit(bytes: bytes) else { return (files, "not an edit this tally can read") }
        let (refusal, after) = try LedgerFiles.inFolderOfTheirOwn(files) { edit.apply(folder: $0) }
        return (after, refusal)
    }
}

extension ClusterArchive {
    /// Makes `edit` of the hosted ledger `ledger` (the CLI's way on a cluster): queued for the
    /// node that serves the ledger, which applies it within a renewal (a third of a lease), or
    /// applied here to the files PostgreSQL holds while no node serves it. Returns the answer:
    /// nil when made, else why it was refused. Throws `EditNotAnswered` when no answer came
    /// within `patience`.
    public func make(_ edit: CredentialEdit, of ledger: String, patience: Duration = .seconds(30)) async throws -> String? {
        let id = try await queueEdit(edit.bytes, of: ledger)
        let start = ContinuousClock.now
        while true {
            // Asked without a lock first: the lease's row is what every write of the ledger locks.
            if try await servingNode(of: ledger) == nil, let answer = try await applyWhileUnserved(id, of: ledger, CredentialEdit.applied) {
                return answer.refusal
            }
            if let answer = try await answer(ofEdit: id) { return answer.refusal }
            guard ContinuousClock.now - start < patience else { throw EditNotAnswered(ledger: ledger, waited: patience) }
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}

/// No answer came to an operator's edit in time: it stays queued, made by the ledger's owner at
/// a later renewal, or by the node that takes the ledger before it serves it.
public struct EditNotAnswered: Error, CustomStringConvertible {
    public let ledger: String
    public let waited: Duration

    public var description: String {
        "no node answered the edit of ledger '\(ledger)' within \(waited.components.seconds) s; it stays queued, and the node that serves the ledger makes it at its next renewal (or before it next serves the ledger); a token made so is of no use (its secret was not shown): revoke it"
    }
}
