import Foundation
import PropertyBased
import Testing
@testable import TallyStore
import TallyCore
import TallyTestSupport

@Suite struct EntityStateCodecTests {
    /// For random histories (several origins, updates with bases, deletes): every folded
    /// entity's state decodes back equal; the same events folded in another order give the
    /// same bytes (the encoding is canonical, whatever order the dictionaries hold things in);
    /// and every truncation of a blob is refused with an error, never misread.
    @Test func statesRoundTripCanonicallyAndTruncationsAreRefused() async {
        await propertyCheck(count: 100, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            do {
                var rng = SplitMix64(seed: seed)
                let events = RandomHistory.events(seed: seed, count: Int.random(in: 1...80, using: &rng))
                var inOrder = LedgerState(), shuffled = LedgerState()
                events.forEach { inOrder.apply($0) }
                events.shuffled(using: &rng).forEach { shuffled.apply($0) }
                for (id, entity) in inOrder.entities {
                    let bytes = EntityStateCodec.encode(entity)
                    #expect(try EntityStateCodec.decode(bytes, id: id) == entity, "seed \(seed)")
                    #expect(EntityStateCodec.encode(shuffled.entities[id]!) == bytes, "seed \(seed)")
                    for length in 0..<bytes.count {
                        #expect(throws: EntityStateCodec.DecodingError.self) { try EntityStateCodec.decode(Array(bytes[..<length]), id: id) }
                    }
                }
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    /// Stamps are stored once per entity: an expense created and then edited four times takes
    /// well under half the bytes of a stamp per property.
    @Test func sharedStampsAreStoredOnce() throws {
        var state = LedgerState()
        let origin = ReplicaID(UUID())
        let id = EntityID.uuid(UUID())
        var previous = HybridTimestamp(millis: 1_763_000_000_000, counter: 0)
        state.apply(
            Event(
                origin: origin, sequence: 1, timestamp: previous, actor: "t", entityType: .expense, entityID: id, operation: .create,
                properties: SampleEvents.expenseCreate(amount: 5).properties, previousHash: .zero))
        for step in 2...5 {
            let now = HybridTimestamp(millis: previous.millis + 60_000, counter: 0)
            state.apply(
                Event(
                    origin: origin, sequence: UInt64(step), timestamp: now, actor: "t", entityType: .expense, entityID: id, operation: .update,
                    properties: [.amount: .int(Int64(step))], previousHash: .zero, basis: [.amount: WriteStamp(timestamp: previous, origin: origin)]))
            previous = now
        }
        let entity = state.entities[id]!
        let stampsAlone = (entity.properties.count + 1) * 26  // version 1: a stamp (26 bytes) per property and the create
        #expect(EntityStateCodec.encode(entity).count < stampsAlone, "\(EntityStateCodec.encode(entity).count) bytes")
    }
}
