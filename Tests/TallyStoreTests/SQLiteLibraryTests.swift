import Foundation
import Testing
import TallyCore
import TallyLog
import TallyStore
import TallyTestSupport

/// `SQLiteLibrary`: SQLite's process-wide settings, made before the first connection.
@Suite struct SQLiteLibraryTests {
    /// In a process of its own (an exit test): the settings are the process's, and another
    /// test of this process may have opened SQLite first some other way. Opening a replica's
    /// views and writing to them leaves SQLite counting no memory: had it counted, every
    /// allocation would have taken its process-wide mutex.
    @Test func viewsOpenWithSQLiteCountingNoMemory() async {
        await #expect(processExitsWith: .success) {
            let replica = try TestReplica()
            let writer = try replica.data.openWriter()
            defer { writer.close() }
            let projector = try Projector(directory: replica.data)
            let group = ProjectionGroupCommit(projector: projector)
            try group.project(try writer.appendLogged((0..<20).map { SampleEvents.expenseCreate(amount: Int64($0 + 1)) }))
            guard try projector.checkpoint() == 20 else { exit(2) }
            guard SQLiteLibrary.configured, SQLiteLibrary.countedBytes == 0 else { exit(1) }
        }
    }
}
