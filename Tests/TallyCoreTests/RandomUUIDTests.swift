import Foundation
import Testing
import TallyCore

@Suite struct RandomUUIDTests {
    /// Version 4, RFC 4122 variant, and never the same twice in 10,000 (nor all zeros).
    @Test func randomUUIDsAreVersionFourAndDistinct() {
        let ids = (0..<10_000).map { _ in UUID.random() }
        #expect(Set(ids).count == ids.count)
        for id in ids.prefix(100) {
            #expect(id.uuid.6 >> 4 == 4)
            #expect(id.uuid.8 >> 6 == 0b10)
            #expect(id != UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
            #expect(UUID(uuidString: id.uuidString) == id)
        }
    }
}
