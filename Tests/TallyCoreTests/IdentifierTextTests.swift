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

@Suite struct HexTests {
    @Test func hexIsLowerCaseTwoDigitsPerByte() {
        #expect(Hex.lowercase([UInt8]([0x00, 0x0f, 0xa0, 0xff, 0x5c])) == "000fa0ff5c")
        #expect(Hex.lowercase([UInt8]()) == "")
        let all = (0...255).map { UInt8($0) }
        #expect(Hex.lowercase(all) == all.map { String(format: "%02x", $0) }.joined())
    }
}
