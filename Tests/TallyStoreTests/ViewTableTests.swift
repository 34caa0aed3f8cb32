import Foundation
import GRDB
import Testing
import TallyCore
@testable import TallyStore
import TallyTestSupport

/// The view tables' columns come from the entities' specs (`ViewTable`); the migrations create
/// them. The two must agree: a shown field added to a spec without its column (or a column a
/// migration adds that no spec field or derived column fills) fails here, naming it, instead
/// of failing the first write.
@Suite struct ViewTableTests {
    @Test func everyViewTableHasExactlyTheColumnsItsSpecDerives() throws {
        let folder = TemporaryDirectory()
        let pool = try DatabasePool(path: folder.file("views.sqlite"), configuration: ProjectionDatabase.configuration())
        try ProjectionDatabase.migrate(pool)
        for table in [ViewTable.expenses, .todos, .budgets] {
            let migrated = try pool.read { db in try Row.fetchAll(db, sql: "PRAGMA table_info(\(table.name))").map { $0["name"] as String } }
            #expect(Set(migrated).subtracting(table.columnNames).isEmpty, "\(table.name): columns no spec field fills")
            #expect(Set(table.columnNames).subtracting(migrated).isEmpty, "\(table.name): spec fields without a column (add a migration)")
            #expect(table.columnNames.first == "id")
        }
    }

    @Test func columnsAreTheFieldsJSONNamesInSnakeCase() {
        #expect(ViewTable.columnName(.startDate) == "start_date")
        #expect(ViewTable.columnName(.isChallenge) == "is_challenge")
        #expect(ViewTable.columnName(.amount) == "amount")
        #expect(ViewTable.writtenReference("category_id") == "category_ref")
        #expect(ViewTable.expenses.shownColumn(of: .categoryId) == "category_id")
    }
}
