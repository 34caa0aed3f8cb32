import Foundation
import GRDB
import Testing
import TallyCore
@testable import TallyStore
import TallyTestSupport

/// `ExpenseFilter.walksOneIndexInOrder`: the pages the server answers on the request's own task
/// really are read off one index in date order, with no sort and no scan of the table.
@Suite struct IndexWalkTests {
    @Test func pagesSaidToWalkOneIndexAreReadOffAnIndexInOrder() throws {
        let replica = try TestReplica()
        let projector = try Projector(directory: replica.data)
        var filters: [ExpenseFilter] = []
        for month in [nil, "2026-03"] {
            for range in [false, true] {
                for cursor in [false, true] {
                    var filter = ExpenseFilter()
                    filter.month = month
                    if range {
                        (filter.from, filter.to) = (
                            DateTime(epochMillis: 1_772_323_200_000, offsetMinutes: 0), DateTime(epochMillis: 1_775_000_000_000, offsetMinutes: 0)
                        )
                    }
                    if cursor { filter.after = (1_772_400_000_000, "8b1a9953-c461-4b3e-9f5c-1d6a3b1e2f00") }
                    filter.limit = 1_000
                    filters.append(filter)
                }
            }
        }
        for filter in filters {
            #expect(filter.walksOneIndexInOrder)
            let plan = try projector.database.read { db -> [String] in
                let (statement, arguments) = try ProjectionQueries.expensesStatement(db, filter)
                return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: arguments).map { $0["detail"] as String }
            }
            let expenses = plan.filter { $0.contains(" e ") || $0.hasSuffix(" e") }
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(filter.month ?? "-") \(filter.from != nil) \(filter.after != nil): \(plan)")
            #expect(expenses.count == 1 && expenses.allSatisfy { $0.contains("USING INDEX") || $0.contains("USING COVERING INDEX") }, "\(plan)")
        }
        var text = ExpenseFilter()
        text.text = "bakery"
        #expect(!text.walksOneIndexInOrder)
    }
}
