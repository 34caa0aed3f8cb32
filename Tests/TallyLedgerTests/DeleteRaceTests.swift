import Foundation
import Testing
import TallyCore
@testable import TallyLedger
import TallyLog
import TallyTestSupport

/// Updates racing a delete of the same entity (found by the review of issue 30): an update
/// checked before the delete was appended, and appended after it, loses to the delete on every
/// replica, and its caller is told "not found" — never that the views failed to show a
/// durable write (a 500 that sent operators to verify views that were right).
@Suite struct DeleteRaceTests {
    let folder = TemporaryDirectory("tally-delete-race")

    @Test func anEntityADeleteReachedFirstIsNotFound() async throws {
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file("r"), name: "r"))
        defer { ledger.close() }
        let (entity, _) = try await ledger.create(.expense, [.amount: .int(1_200)], actor: "t")
        guard case .string(let text)? = entity.member("id"), let id = UUID(uuidString: text)
        else { Issue.record("no id"); return }
        try await ledger.delete(.expense, id: id, actor: "t")
        #expect {
            try ledger.written(.expense, id)
        } throws: { error in
            (error as? ValidationError)?.kind == .notFound && "\(error)".contains("was deleted")
        }
    }

    @Test func updatesRacingADeleteSucceedOrAreNotFound() async throws {
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file("race"), name: "race"))
        defer { ledger.close() }
        for round in 0..<10 {
            let (entity, _) = try await ledger.create(.expense, [.amount: .int(1_000 + Int64(round))], actor: "t")
            guard case .string(let text)? = entity.member("id"), let id = UUID(uuidString: text)
            else { Issue.record("no id"); return }
            let outcomes = await withTaskGroup(of: String.self) { group in
                for step in 0..<16 {
                    group.addTask {
                        do {
                            if step == 8 {
                                try await ledger.delete(.expense, id: id, actor: "t")
                            } else {
                                _ = try await ledger.update(.expense, id: id, [.amount: .int(Int64(50 + step))], actor: "t")
                            }
                            return "ok"
                        } catch let error as ValidationError where error.kind == .notFound {
                            return "not found"
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 == "ok" || $0 == "not found" }, "round \(round): \(outcomes)")
            #expect(try ledger.views.entityJSON(.expense, id: id) == nil, "the delete wins")
        }
    }
}
