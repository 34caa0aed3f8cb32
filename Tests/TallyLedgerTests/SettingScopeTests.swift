import Foundation
import Testing
import TallyCore
import TallyLedger
import TallyLog
import TallyStore
import TallyTestSupport

/// One key, one scope, on every replica: `local.…` keys are local-only, all others replicated,
/// so a peer's setting can never overwrite a local-only one (they used to share an entity).
@Suite struct SettingScopeTests {
    let folder = TemporaryDirectory("tally-setting-scope")

    @Test func theKeyNamesTheScope() async throws {
        let ledger = try Ledger(directory: try DataDirectory.create(path: folder.file("r"), name: "r"))
        defer { ledger.close() }
        _ = try await ledger.setSetting("local.theme", json: "\"dark\"", actor: "cli:test")
        _ = try await ledger.setSetting("theme", json: "\"light\"", actor: "cli:test")
        let settings = try ledger.views.settings().map { "\($0.scope):\($0.key)=\($0.value)" }.sorted()
        #expect(settings == ["local:local.theme=\"dark\"", "replicated:theme=\"light\""])
        await #expect { try await ledger.setSetting("font", json: "1", isLocal: true, actor: "cli:test") } throws: { "\($0)".contains("local.font") }
        await #expect { try await ledger.setSetting("local.font", json: "1", isLocal: false, actor: "cli:test") } throws: { "\($0)".contains("never leave") }
        #expect(try ledger.views.settings().count == 2, "a refused write changes nothing")
    }

    /// A peer's replicated setting named like a local-only one is refused by the field rules.
    @Test func aReplicatedEventCannotCarryALocalKey() {
        let event = Event(
            origin: .random(), sequence: 1, timestamp: HybridTimestamp(millis: 1, counter: 0), actor: "peer",
            entityType: .setting, entityID: .settingKey("local.theme"), operation: .create,
            properties: [.value: .json("\"dark\"")], previousHash: .zero)
        #expect(throws: ValidationError.self) { try EntitySchema.checkIncoming(event) }
        var replicated = event
        replicated.entityID = .settingKey("theme")
        #expect(throws: Never.self) { try EntitySchema.checkIncoming(replicated) }
    }
}
