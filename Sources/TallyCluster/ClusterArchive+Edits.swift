import Foundation
import Logging
import NIOCore
import PostgresNIO

/// An edit of a ledger's files answered: its id, and why it was refused (nil: made).
public struct EditAnswer: Sendable, Equatable {
    public var id: Int64
    public var refusal: String?

    public init(id: Int64, refusal: String?) { (self.id, self.refusal) = (id, refusal) }
}

/// The operator's edits of a ledger's files (its tokens, members, invitations, quota), made
/// with the CLI on any machine that reaches PostgreSQL (TallyServer's `CredentialEdit`; bytes
/// here). The files are the serving node's to write, under its lease, so an edit is queued for
/// it: the node applies it to its folder and stores the files and the edit's answer in one
/// transaction (`store(_:removing:answering:of:)`). With no node serving the ledger, the CLI
/// applies it to the files as PostgreSQL holds them (`applyWhileUnserved`), holding the lease's
/// row so no node takes the ledger meanwhile; a node that takes it next reads the files after.
extension ClusterArchive {
    /// Queues `edit` of `ledger`; returns its id. A 'no such ledger' refusal (`invalid`) when the
    /// cluster registers none.
    public func queueEdit(_ edit: [UInt8], of ledger: String) async throws -> Int64 {
        guard edit.count <= Self.maxEditBytes else { throw ClusterRefusal.invalid("an edit of \(edit.count) bytes (at most \(Self.maxEditBytes))") }
        var id: Int64?
        for try await (made, ) in try await client.query(
            """
            INSERT INTO tally_file_edits (ledger, edit) SELECT ledger, \(ByteBuffer(bytes: edit)) FROM tally_ledgers WHERE ledger = \(ledger)
            RETURNING id
            """, logger: logger
        ).decode((Int64,).self) {
            id = made
        }
        guard let id else { throw ClusterRefusal.invalid("no ledger named '\(ledger)' in the cluster") }
        return id
    }

    /// The most bytes one edit may hold (they are small: a token's or a member's record).
    public static let maxEditBytes = 64 << 10

    /// The edits of `ledger` not answered yet, oldest first.
    public func pendingEdits(of ledger: String) async throws -> [(id: Int64, edit: [UInt8])] {
        var edits: [(id: Int64, edit: [UInt8])] = []
        for try await (id, bytes) in try await client.query(
            "SELECT id, edit FROM tally_file_edits WHERE ledger = \(ledger) AND answered_at IS NULL ORDER BY id", logger: logger
        ).decode((Int64, ByteBuffer).self) {
            edits.append((id, Array(bytes.readableBytesView)))
        }
        return edits
    }

    /// How many edits of each ledger wait to be answered (`tally cluster status`); a ledger
    /// with none is left out.
    public func waitingEdits() async throws -> [String: Int] {
        var waiting: [String: Int] = [:]
        for try await (ledger, count) in try await client.query(
            "SELECT ledger, count(*) FROM tally_file_edits WHERE answered_at IS NULL GROUP BY ledger", logger: logger
        ).decode((String, Int64).self) {
            waiting[ledger] = Int(count)
        }
        return waiting
    }

    /// The answer to edit `id`; nil while it waits.
    public func answer(ofEdit id: Int64) async throws -> EditAnswer? {
        var answer: EditAnswer?
        for try await (answered, refusal) in try await client.query(
            "SELECT answered_at IS NOT NULL, refusal FROM tally_file_edits WHERE id = \(id)", logger: logger
        ).decode((Bool, String?).self) where answered {
            answer = EditAnswer(id: id, refusal: refusal)
        }
        return answer
    }

    /// Applies edit `id` of `ledger` to the files PostgreSQL holds, if no node holds a live
    /// lease on the ledger: `apply` is given the edit and the files and returns the files after
    /// it and its refusal. Returns the answer, or nil when a node serves the ledger (it answers).
    public func applyWhileUnserved(
        _ id: Int64, of ledger: String, _ apply: ([UInt8], [String: [UInt8]]) throws -> (files: [String: [UInt8]], refusal: String?)
    ) async throws -> EditAnswer? {
        do {
            return try await applyUnderTheLeaseRow(id, of: ledger, apply)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55P03" {
            return nil  // the lease's row stayed locked (a node taking the ledger): its owner answers
        }
    }

    private func applyUnderTheLeaseRow(
        _ id: Int64, of ledger: String, _ apply: ([UInt8], [String: [UInt8]]) throws -> (files: [String: [UInt8]], refusal: String?)
    ) async throws -> EditAnswer? {
        try await transaction { connection in
            try await connection.query("SET LOCAL lock_timeout = '2s'", logger: logger)
            // The lease's row, locked as a take locks it: no node takes the ledger until this commits.
            try await connection.query(
                "INSERT INTO tally_leases (ledger, epoch, owner, expires_at) VALUES (\(ledger), 0, '', '-infinity') ON CONFLICT DO NOTHING",
                logger: logger)
            var served = false
            for try await (live, ) in try await connection.query(
                "SELECT expires_at > statement_timestamp() FROM tally_leases WHERE ledger = \(ledger) FOR UPDATE", logger: logger
            ).decode((Bool,).self) {
                served = live
            }
            guard !served else { return nil }
            // A new epoch: the last owner, whose lease ran out untaken, may not renew it and serve
            // its copy of the files from before this edit (or store that copy over it).
            try await connection.query("UPDATE tally_leases SET epoch = epoch + 1, owner = '' WHERE ledger = \(ledger)", logger: logger)
            var edit: (bytes: [UInt8], answered: Bool, refusal: String?)?
            for try await (bytes, answered, refusal) in try await connection.query(
                "SELECT edit, answered_at IS NOT NULL, refusal FROM tally_file_edits WHERE id = \(id) AND ledger = \(ledger) FOR UPDATE", logger: logger
            ).decode((ByteBuffer, Bool, String?).self) {
                edit = (Array(bytes.readableBytesView), answered, refusal)
            }
            guard let edit else { throw ClusterRefusal.invalid("no edit \(id) of ledger '\(ledger)'") }
            if edit.answered { return EditAnswer(id: id, refusal: edit.refusal) }  // its node answered before it let the ledger go
            var files: [String: [UInt8]] = [:]
            for try await (name, bytes) in try await connection.query(
                "SELECT name, bytes FROM tally_ledger_files WHERE ledger = \(ledger)", logger: logger
            ).decode((String, ByteBuffer).self) {
                files[name] = Array(bytes.readableBytesView)
            }
            let after = try apply(edit.bytes, files)
            try LedgerFiles.check(after.files, of: ledger)
            let changed = after.files.filter { files[$0.key] != $0.value }
            let removed = files.keys.filter { after.files[$0] == nil }
            let answer = EditAnswer(id: id, refusal: after.refusal)
            try await Self.write(changed, removing: Array(removed), answering: [answer], of: ledger, on: connection, logger: logger)
            return answer
        }
    }
}
