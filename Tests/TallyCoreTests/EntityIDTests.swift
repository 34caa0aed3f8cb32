import Foundation
import Testing
import TallyCore

@Suite struct EntityIDTests {
    /// Projections write in id order via `<`; it must agree with the ids' text order.
    @Test func idsSortLikeTheirText() {
        var ids: [EntityID] = (0..<2_000).map { _ in .uuid(UUID()) }
        ids += ["theme", "defaultCurrency", "a.b", "zzz"].map { .settingKey($0) }
        ids.append(.uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!))
        ids.append(.uuid(UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!))
        #expect(ids.sorted().map(\.description) == ids.map(\.description).sorted())
    }
}
