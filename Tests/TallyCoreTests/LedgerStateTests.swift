import Foundation
import PropertyBased
import Testing
import TallyCore
import TallyTestSupport

@Suite struct LedgerStateTests {
    let replicaA = ReplicaID(string: "aaaaaaaa-0000-0000-0000-000000000000")!
    let replicaB = ReplicaID(string: "bbbbbbbb-0000-0000-0000-000000000000")!
    let id = EntityID.uuid(UUID(uuidString: "11111111-2222-3333-4444-555555555555")!)

    func event(
        _ origin: ReplicaID, _ sequence: UInt64, _ millis: UInt64, _ operation: EventOperation, _ properties: PropertyMap = [:], type: EntityType = .expense
    ) -> Event {
        Event(
            origin: origin, sequence: sequence, timestamp: HybridTimestamp(millis: millis, counter: 0), actor: "t",
            entityType: type, entityID: type == .setting ? .settingKey("theme") : id, operation: operation, properties: properties, previousHash: .zero)
    }

    @Test func concurrentEditsOfDifferentPropertiesBothSurvive() {
        let create = event(replicaA, 1, 10, .create, [.amount: .int(100), .memo: .string("a")])
        let editAmount = event(replicaA, 2, 20, .update, [.amount: .int(200)])
        let editMemo = event(replicaB, 1, 15, .update, [.memo: .string("b")])
        for order in [[create, editAmount, editMemo], [editMemo, editAmount, create], [editAmount, create, editMemo]] {
            var state = LedgerState()
            order.forEach { state.apply($0) }
            #expect(state.live(id)?.values == [.amount: .int(200), .memo: .string("b")])
        }
    }

    @Test func theGreaterStampWinsAPropertyAndTiesGoToTheGreaterOrigin() {
        var state = LedgerState()
        state.apply(event(replicaA, 1, 10, .create, [.amount: .int(1)]))
        state.apply(event(replicaB, 1, 30, .update, [.amount: .int(3)]))
        state.apply(event(replicaA, 2, 20, .update, [.amount: .int(2)]))
        #expect(state.live(id)?.values[.amount] == .int(3))
        state.apply(event(replicaA, 3, 30, .update, [.amount: .int(4)]))
        #expect(state.live(id)?.values[.amount] == .int(3), "same time: replica b > replica a")
    }

    @Test func aDeleteWinsOverEarlierAndLaterWrites() {
        let create = event(replicaA, 1, 10, .create, [.amount: .int(1)])
        let delete = event(replicaB, 1, 20, .delete)
        let laterUpdate = event(replicaA, 2, 30, .update, [.amount: .int(2)])
        for order in [[create, delete, laterUpdate], [laterUpdate, delete, create], [delete, create, laterUpdate]] {
            var state = LedgerState()
            order.forEach { state.apply($0) }
            #expect(state.live(id) == nil)
            #expect(state.entities[id]?.deleted != nil)
        }
    }

    @Test func aSettingSetAfterItsDeleteIsLiveAgain() {
        var state = LedgerState()
        state.apply(event(replicaA, 1, 10, .create, [.value: .json("1")], type: .setting))
        state.apply(event(replicaA, 2, 20, .delete, type: .setting))
        #expect(state.live(.settingKey("theme")) == nil)
        state.apply(event(replicaB, 1, 30, .create, [.value: .json("2")], type: .setting))
        #expect(state.live(.settingKey("theme"))?.values[.value] == .json("2"))
    }

    /// The same events in any order, any number of times, give the same state.
    @Test func applyingIsCommutativeAndIdempotent() async {
        await propertyCheck(count: 300, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            let ids = (0..<3).map { _ in EntityID.uuid(RandomEvents.uuid(&rng)) }
            let origins = [replicaA, replicaB]
            var events: [Event] = []
            for sequence in 1...UInt64.random(in: 1...30, using: &rng) {
                let operation: EventOperation = [.create, .update, .update, .update, .delete].randomElement(using: &rng)!
                let properties: PropertyMap =
                    operation == .delete
                    ? [:]
                    : [[.amount: .int(Int64(sequence))], [.memo: .string("m\(sequence)")], [.amount: .int(7), .memo: .string("x")]].randomElement(using: &rng)!
                events.append(
                    Event(
                        origin: origins.randomElement(using: &rng)!, sequence: sequence,
                        timestamp: HybridTimestamp(millis: UInt64.random(in: 1...10, using: &rng), counter: UInt32(sequence)), actor: "t",
                        entityType: .expense, entityID: ids.randomElement(using: &rng)!, operation: operation,
                        properties: properties, previousHash: .zero))
            }
            var inOrder = LedgerState()
            events.forEach { inOrder.apply($0) }
            var shuffledTwice = LedgerState()
            (events.shuffled(using: &rng) + events.shuffled(using: &rng)).forEach { shuffledTwice.apply($0) }
            #expect(inOrder.entities == shuffledTwice.entities)
        }
    }

    /// Each property holds the value of the latest write that set it, whatever subset of
    /// properties each event carries (the fold walks an event's properties and the entity's
    /// together, inserting between existing ones); entries stay in strictly increasing code order.
    @Test func everyPropertyHoldsItsLatestWrite() async {
        await propertyCheck(count: 200, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix64(seed: seed)
            var entity: LedgerState.Entity?
            var latest: [PropertyName: (stamp: WriteStamp, value: PropertyValue)] = [:]
            for sequence in 1...UInt64.random(in: 1...40, using: &rng) {
                var properties = PropertyMap()
                for name in PropertyName.allCases where Int.random(in: 0...4, using: &rng) == 0 {
                    properties[name] = .int(Int64.random(in: 0...1_000, using: &rng))
                }
                let event = Event(
                    origin: [replicaA, replicaB].randomElement(using: &rng)!, sequence: sequence,
                    timestamp: HybridTimestamp(millis: UInt64.random(in: 1...50, using: &rng), counter: UInt32(sequence)), actor: "t",
                    entityType: .expense, entityID: id, operation: sequence == 1 ? .create : .update,
                    properties: properties, previousHash: .zero)
                if entity == nil { entity = LedgerState.Entity(first: event) }
                entity!.apply(event)
                for (name, value) in properties where latest[name].map({ $0.stamp < event.stamp }) ?? true {
                    latest[name] = (event.stamp, value)
                }
            }
            let names = entity!.properties.entries.map(\.name)
            #expect(names == names.sorted() && Set(names).count == names.count)
            #expect(Set(names) == Set(latest.keys))
            for (name, write) in latest {
                #expect(entity!.value(name) == write.value)
                #expect(entity!.properties[name]?.stamp == write.stamp)
            }
        }
    }
}
