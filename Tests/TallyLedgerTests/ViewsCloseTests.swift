import Foundation
import Testing
import TallyCore
import TallyLedger
import TallyLog
import TallyStore
import TallyTestSupport

/// What a ledger's close leaves of its views' WAL, and what the next open does with it
/// (`CurrentViews.close`): a hosted ledger is closed and opened again all day, and before this
/// its reopen read back up to 4 MiB of WAL and wrote to the views before serving anything.
@Suite struct ViewsCloseTests {
    let folder = TemporaryDirectory("tally-views-close")

    private func wal(_ directory: DataDirectory) throws -> (bytes: Int, index: Bool) {
        let path = try #require(ProjectionDatabase.currentPath(directory))
        let attributes = try FileManager.default.attributesOfItem(atPath: path + "-wal")
        return ((attributes[.size] as? Int) ?? -1, FileManager.default.fileExists(atPath: path + "-shm"))
    }

    private func expenseCount(_ ledger: Ledger) throws -> Int {
        try ledger.views.expenses(ExpenseQuery([("limit", "1000")])).rows.count
    }

    @Test func aShortWALIsLeftAsItIsAndReadBackByTheNextOpen() async throws {
        let directory = try DataDirectory.create(path: folder.file("short"), name: "short")
        let ledger = try Ledger(directory: directory)
        for amount in 1...3 { _ = try await ledger.create(.expense, [.amount: .int(Int64(amount))], actor: "t") }
        #expect(try expenseCount(ledger) == 3)  // opens readers, which close before the writer
        ledger.close()

        let left = try wal(directory)
        #expect(left.bytes > 0, "the three writes stay in the WAL: no checkpoint and no fsyncs at close")
        #expect(left.index, "the WAL's index is kept, so the next open creates no file")
        let reopened = try Ledger(directory: directory)
        #expect(try expenseCount(reopened) == 3, "what only the WAL held is read back")
        #expect(reopened.opening.caughtUp == 0, "the views were whole: nothing re-applied from the log")
        reopened.close()
    }

    @Test func openingAndClosingWithoutWritingLeavesTheWALUntouched() async throws {
        let directory = try DataDirectory.create(path: folder.file("idle"), name: "idle")
        let ledger = try Ledger(directory: directory)
        _ = try await ledger.create(.expense, [.amount: .int(5)], actor: "t")
        ledger.close()
        let before = try wal(directory).bytes

        // GRDB writes at every open unless it finds a non-empty WAL at the path it opened plus
        // "-wal": opened through the link `projections.sqlite`, it never did, and each reopen
        // grew the WAL by a write (with an fsync of the WAL and of the folder).
        for _ in 0..<3 {
            let reopened = try Ledger(directory: directory)
            #expect(try expenseCount(reopened) == 1)
            reopened.close()
        }
        #expect(try wal(directory).bytes == before)
    }

    @Test func aLongWALIsCheckpointedAndCutToNothing() async throws {
        let directory = try DataDirectory.create(path: folder.file("long"), name: "long")
        let ledger = try Ledger(directory: directory)
        var written = 0
        while try wal(directory).bytes <= 256 << 10 {
            _ = try await ledger.create(.expense, [.amount: .int(Int64(written + 1)), .memo: .string(String(repeating: "m", count: 500))], actor: "t")
            written += 1
            try #require(written < 5_000, "the WAL never grew past 256 KiB")
        }
        #expect(try expenseCount(ledger) == written)
        ledger.close()

        let left = try wal(directory)
        #expect(left.bytes == 0, "checkpointed into the database and emptied: the next open reads none of it")
        #expect(left.index)
        let reopened = try Ledger(directory: directory)
        #expect(try expenseCount(reopened) == written)
        #expect(reopened.opening.caughtUp == 0)
        _ = try await reopened.create(.expense, [.amount: .int(1)], actor: "t")  // writes after an emptied WAL
        reopened.close()
        let again = try Ledger(directory: directory)
        #expect(try expenseCount(again) == written + 1)
        again.close()
    }
}
