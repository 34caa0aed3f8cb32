import Foundation
import Testing
import TallyCore
import TallyLedger
import TallyLog
import TallySync
import TallyTestSupport

/// Signed origins (docs/MERGE.md): a replica accepts another origin's events only under a head
/// signed with the key pinned for that origin. Three replicas: A writes honestly, B receives,
/// and M — holding a replicate token, as any peer does — tries to add events to A's chain.
@Suite struct SignedOriginTests {
    let folder = TemporaryDirectory("tally-signed")
    let a: DataDirectory
    let b: DataDirectory
    let m: DataDirectory

    init() throws {
        a = try DataDirectory.create(path: folder.file("a"), name: "a")
        b = try DataDirectory.create(path: folder.file("b"), name: "b")
        m = try DataDirectory.create(path: folder.file("m"), name: "m")
        try write(2, in: a)
        try ship(from: a, to: b)  // B pins A's key on first contact
        try ship(from: a, to: m)  // M holds A's real chain, to continue it
    }

    func write(_ count: Int, in directory: DataDirectory) throws {
        let writer = try directory.openWriter()
        defer { writer.close() }
        for index in 0..<count { try writer.append([SampleEvents.expenseCreate(amount: Int64(100 + index))]) }
    }

    /// A bundle from `source` with what `target` lacks, imported into `target`.
    @discardableResult
    func ship(from source: DataDirectory, to target: DataDirectory) throws -> SegmentBundle.ImportReport {
        let path = folder.file("bundle-\(UUID().uuidString.prefix(8))")
        let writer = try target.openWriter()
        defer { writer.close() }
        _ = try SegmentBundle.export(source, to: path, for: VersionVector(head: writer.head, excluding: target.identity.localOnlyOrigin))
        return try SegmentBundle.importBundle(from: path, into: writer, maximumSkewMillis: 300_000)
    }

    /// How M signs the event it forges as A's next.
    enum Forgery: CaseIterable, CustomTestStringConvertible {
        case resignedWithOwnKey, unsigned, claimingAsKeyWithABadSignature
        var testDescription: String { "\(self)" }
        var fragment: String {
            switch self {
            case .resignedWithOwnKey: "not the key pinned"
            case .unsigned: "without a head signed"
            case .claimingAsKeyWithABadSignature: "does not verify"
            }
        }
    }

    /// Appends to M's log, bypassing every check (M is hostile), an event claiming A's next
    /// sequence, chained correctly, signed as `forgery` says.
    func forgeNextOfA(in m: DataDirectory, _ forgery: Forgery, origin: ReplicaID? = nil) throws {
        let writer = try m.openWriter()
        defer { writer.close() }
        let chain = writer.head.chains[origin ?? a.identity.origin]!
        let draft = SampleEvents.expenseCreate(amount: 666, actor: "token:app")
        let event = Event(
            origin: origin ?? a.identity.origin, sequence: chain.sequence + 1, timestamp: HybridTimestamp(millis: HybridClock.wallMillis(), counter: 0),
            actor: draft.actor, entityType: draft.entityType, entityID: draft.entityID, operation: draft.operation,
            properties: draft.properties, previousHash: chain.hash)
        let forged = [(bytes: EventCodec.encode(event), event: event)]
        var signatures: [SignatureRecord] = []
        switch forgery {
        case .resignedWithOwnKey:
            signatures = TestSigning.heads(for: forged, key: try ReplicaSigningKey.read(from: m.signingKeyPath)!)
        case .unsigned:
            break
        case .claimingAsKeyWithABadSignature:
            guard case .head(var head) = TestSigning.heads(for: forged).first! else { return }
            head.key = try ReplicaSigningKey.read(from: a.signingKeyPath)!.publicKey
            signatures = [.head(head)]
        }
        try writer.appendEncoded(forged, signatures: signatures)
    }

    func chainOfA(in directory: DataDirectory) throws -> ChainHead? { try directory.reader.head().chains[a.identity.origin] }

    /// Plays a hostile sender: `source`'s events of `origin` after `sequence`, as stored, with
    /// no signature record, received by `target` as a stream is. The refusal's text, or nil.
    func receiveRaw(eventsOf origin: ReplicaID, after sequence: UInt64, from source: DataDirectory, into target: DataDirectory) throws -> String? {
        var records: [UInt8] = []
        try source.reader.forEachStoredEvent { routing, bytes in
            if routing.origin == origin, routing.sequence > sequence { EventRecords.append(bytes, to: &records) }
        }
        let writer = try target.openWriter()
        defer { writer.close() }
        var receiver = try StreamReceiver(writer: writer, source: "raw", maximumSkewMillis: 300_000)
        do {
            try receiver.feed(records)
            try receiver.finish()
        } catch { return "\(error)" }
        return nil
    }

    /// The sequence squat and the re-signed chain, over a bundle, a push and a pull: refused whole
    /// naming the reason, nothing changes, and A's real next event still syncs afterwards.
    @Test(arguments: Forgery.allCases) func aForgedNextEventOfAnotherOriginIsRefusedOverEveryTransport(_ forgery: Forgery) async throws {
        try forgeNextOfA(in: m, forgery)
        let held = try chainOfA(in: b)
        for (name, transport) in [
            ("bundle", BadDeliveryContractTests.bundle), ("push", BadDeliveryContractTests.push), ("pull", BadDeliveryContractTests.pull),
        ] {
            let refusal = try await transport(BadDeliveryContractTests.Delivery(source: m, target: b, folder: folder))
            if forgery == .unsigned {
                // Our own sender sends nothing that no head covers (`HeldUntilSigned`); a hostile
                // one's bytes are refused by the receiver, below.
                #expect(refusal == nil, "\(name): the unsigned event was not sent (got \(refusal ?? ""))")
            } else {
                #expect(refusal?.contains(forgery.fragment) == true, "\(name): refused naming why (got \(refusal ?? "acceptance"))")
                #expect(refusal?.contains(a.identity.origin.description) == true, "\(name): the refusal names the origin")
            }
            #expect(try chainOfA(in: b) == held, "\(name): nothing of the forgery was applied")
        }
        if forgery == .unsigned {
            let refusal = try receiveRaw(eventsOf: a.identity.origin, after: held?.sequence ?? 0, from: m, into: b)
            #expect(refusal?.contains(forgery.fragment) == true, "raw: refused naming why (got \(refusal ?? "acceptance"))")
            #expect(try chainOfA(in: b) == held, "raw: nothing of the forgery was applied")
        }
        #expect(try Ledger.pinnedKeys(of: b).map(\.pin.key) == [try ReplicaSigningKey.read(from: a.signingKeyPath)!.publicKey.description])
        // The honest replica keeps syncing: A's real #3 goes through.
        try write(1, in: a)
        let report = try ship(from: a, to: b)
        #expect(report.applied == 1)
        #expect(try chainOfA(in: b) == (try chainOfA(in: a)))
    }

    /// The receiver's own origin is public (`/health`): an event claiming it from outside is
    /// refused over every transport whatever its signature, and the receiver's next write is its own.
    @Test(arguments: Forgery.allCases) func anEventClaimingTheReceiversOwnOriginIsRefusedOverEveryTransport(_ forgery: Forgery) async throws {
        try write(1, in: b)
        let own = try b.reader.head().chains[b.identity.origin]!
        try ship(from: b, to: m)
        try forgeNextOfA(in: m, forgery, origin: b.identity.origin)
        for (name, transport) in [
            ("bundle", BadDeliveryContractTests.bundle), ("push", BadDeliveryContractTests.push), ("pull", BadDeliveryContractTests.pull),
        ] {
            let refusal = try await transport(BadDeliveryContractTests.Delivery(source: m, target: b, folder: folder))
            if forgery == .unsigned {
                #expect(refusal == nil, "\(name): the unsigned event was not sent (got \(refusal ?? ""))")
            } else {
                #expect(refusal?.contains("own origin") == true, "\(name): refused naming why (got \(refusal ?? "acceptance"))")
            }
            #expect(try b.reader.head().chains[b.identity.origin] == own, "\(name): nothing was applied")
        }
        if forgery == .unsigned {
            let refusal = try receiveRaw(eventsOf: b.identity.origin, after: own.sequence, from: m, into: b)
            #expect(refusal?.contains("own origin") == true, "raw: refused naming why (got \(refusal ?? "acceptance"))")
            #expect(try b.reader.head().chains[b.identity.origin] == own, "raw: nothing was applied")
        }
        try write(1, in: b)
        #expect(try b.reader.head().chains[b.identity.origin]?.sequence == own.sequence + 1)
        #expect(try Ledger.verify(b).findings.isEmpty)
    }

    /// Trust on first use can be replaced by a pin made by hand before first contact: a replica
    /// that pinned A's real key refuses M's version of A's chain even if it arrives first.
    @Test func aKeyPinnedByHandDecidesBeforeFirstContact() async throws {
        let c = try DataDirectory.create(path: folder.file("c"), name: "c")
        let aKey = try ReplicaSigningKey.read(from: a.signingKeyPath)!.publicKey
        try Ledger.trust(originText: a.identity.replicaId, keyHex: aKey.description, in: c)
        // M rewrites A's history from the start under its own key.
        let fake = try DataDirectory.create(path: folder.file("fake"), name: "fake")
        let writer = try fake.openWriter()
        let event = Event(
            origin: a.identity.origin, sequence: 1, timestamp: HybridTimestamp(millis: HybridClock.wallMillis(), counter: 0), actor: "cli:a",
            entityType: .expense, entityID: .uuid(UUID()), operation: .create,
            properties: SampleEvents.expenseCreate().properties, previousHash: .zero)
        let forged = [(bytes: EventCodec.encode(event), event: event)]
        try writer.appendEncoded(forged, signatures: TestSigning.heads(for: forged))
        writer.close()
        #expect { try ship(from: fake, to: c) } throws: { "\($0)".contains("not the key pinned") }
        #expect(try chainOfA(in: c) == nil)
        try ship(from: a, to: c)
        #expect(try chainOfA(in: c) == (try chainOfA(in: a)))
        // A pin moves only by a rotation the pinned key signed, never by hand.
        #expect { try Ledger.trust(originText: a.identity.replicaId, keyHex: String(repeating: "ab", count: 32), in: c) } throws: {
            "\($0)".contains("already has key")
        }
        #expect { try Ledger.trust(originText: c.identity.replicaId, keyHex: aKey.description, in: c) } throws: { "\($0)".contains("own origin") }
        #expect { try Ledger.trust(originText: "x", keyHex: aKey.description, in: c) } throws: { "\($0)".contains("not a replica id") }
        #expect { try Ledger.trust(originText: a.identity.replicaId, keyHex: "12", in: c) } throws: { "\($0)".contains("not a public key") }
    }

    /// A rotation signed by the old key moves the pin; one signed by any other key is refused.
    @Test func aRotationSignedByThePinnedKeyIsFollowedAndAForgedOneRefused() async throws {
        let ledger = try Ledger(directory: a)
        let rotation = try await ledger.rotateSigningKey()
        _ = try await ledger.create(.expense, [.kind: .string("expense"), .amount: .int(7), .currency: .string("KRW")], actor: "cli:a")
        ledger.close()
        #expect(try Ledger.publicKey(of: a) == rotation.newKey)
        #expect(try ship(from: a, to: b).applied == 1)
        #expect(try Ledger.pinnedKeys(of: b).first?.pin.key == rotation.newKey.description)
        #expect(try Ledger.pinnedKeys(of: b).first?.pin.pinnedBy == "rotation")
        #expect(try Ledger.verify(b).findings.isEmpty)
        #expect(try Ledger.verify(b).authorship.first { $0.origin == a.identity.origin }?.keys == [rotation.oldKey, rotation.newKey])

        // M "rotates" A's chain (as far as M holds it, #2) to a key of its own, signing with its
        // own key: a replica receiving A's chain from M refuses it.
        let mKey = try ReplicaSigningKey.read(from: m.signingKeyPath)!
        let c = try DataDirectory.create(path: folder.file("c"), name: "c")
        try Ledger.trust(originText: a.identity.replicaId, keyHex: rotation.oldKey.description, in: c)
        let writer = try m.openWriter()
        try writer.appendEncoded([], signatures: [.rotation(mKey.rotation(of: a.identity.origin, afterSequence: 2, to: .generate()))])
        writer.close()
        #expect { try ship(from: m, to: c) } throws: { "\($0)".contains("not its pinned key") }
        #expect(try chainOfA(in: c) == nil, "nothing applied")
        // The same record arriving where the receiver already holds more of A's chain is history
        // it cannot place: passed over, and the pin does not move.
        try ship(from: a, to: c)
        try ship(from: m, to: c)
        #expect(try Ledger.pinnedKeys(of: c).first?.pin.key == rotation.newKey.description)
    }

    /// Two deliveries checked against the same pins cannot both move one: the second finds the
    /// pin changed under it and is refused (a stale push could otherwise swap an origin's key).
    @Test func aPinMovesOnlyFromTheKeyTheDeliveryWasCheckedAgainst() async throws {
        let store = OriginKeyStore(logDirectory: b.logPath)
        let origin = ReplicaID.random()
        let real = ReplicaSigningKey.generate().publicKey, other = ReplicaSigningKey.generate().publicKey
        try store.record([origin: PinChange(pin: PinnedOriginKey(key: real, pinnedBy: "first contact"), replacing: nil)])
        // A delivery that saw no pin for the origin, arriving after the real one was pinned.
        #expect(throws: LogError.self) {
            try store.record([origin: PinChange(pin: PinnedOriginKey(key: other, pinnedBy: "rotation"), replacing: nil)])
        }
        #expect(try store.keys()[origin] == real)
        try store.record([origin: PinChange(pin: PinnedOriginKey(key: other, pinnedBy: "rotation"), replacing: real)])
        #expect(try store.keys()[origin] == other)
    }

    /// Rotation records cannot bloat a log: replaying rotations back and forth, or one placed
    /// where its origin's chain does not stand, is refused.
    @Test func rotationsOutOfPlaceOrReplayedAreRefused() async throws {
        let x = ReplicaID.random()
        let k1 = ReplicaSigningKey.generate(), k2 = ReplicaSigningKey.generate()
        let event = Event(
            origin: x, sequence: 1, timestamp: HybridTimestamp(millis: HybridClock.wallMillis(), counter: 0), actor: "x",
            entityType: .expense, entityID: .uuid(UUID()), operation: .create,
            properties: SampleEvents.expenseCreate().properties, previousHash: .zero)
        let encoded = [(bytes: EventCodec.encode(event), event: event)]
        var incoming = IncomingEvents(head: LogHead(), localOrigins: [], maximumSkewMillis: 300_000)
        try incoming.offer(encoded[0].bytes, decoded: event, hash: EventCodec.hash(encoded[0].bytes), source: "t")
        for record in TestSigning.heads(for: encoded, key: k1) { try incoming.offer(record, source: "t") }
        #expect(throws: SyncRejection.self) { try incoming.offer(.rotation(k1.rotation(of: x, afterSequence: 5, to: k2)), source: "t") }
        var replayed = incoming
        try replayed.offer(.rotation(k1.rotation(of: x, afterSequence: 1, to: k2)), source: "t")
        try replayed.offer(.rotation(k2.rotation(of: x, afterSequence: 1, to: k1)), source: "t")
        #expect {
            for _ in 0..<IncomingEvents.maxRotationsPerDelivery {
                try replayed.offer(.rotation(k1.rotation(of: x, afterSequence: 1, to: k2)), source: "t")
                try replayed.offer(.rotation(k2.rotation(of: x, afterSequence: 1, to: k1)), source: "t")
            }
        } throws: { "\($0)".contains("key rotations in one delivery") }
    }

    /// A rotation of an origin this replica holds no key for pins nothing: a rotation is never a
    /// first contact (found by a hostile run: one made-up rotation, the whole delivery, pinned a
    /// real replica's origin to the sender's key, and the real replica was refused from then
    /// on, here and by every replica that pulled from here). Its events' own heads pin it later.
    @Test func aRotationIsNeverAFirstContact() async throws {
        let x = ReplicaID.random()
        let real = ReplicaSigningKey.generate(), madeUp = ReplicaSigningKey.generate()
        var incoming = IncomingEvents(head: LogHead(), localOrigins: [], maximumSkewMillis: 300_000)
        try incoming.offer(.rotation(madeUp.rotation(of: x, afterSequence: 0, to: .generate())), source: "t")
        try incoming.finishDelivery(source: "t")
        let rotationOnly = try incoming.takeCovered(source: "t")
        #expect(rotationOnly.pins.isEmpty && rotationOnly.isEmpty, "nothing pinned, nothing to store or forward")
        let event = Event(
            origin: x, sequence: 1, timestamp: HybridTimestamp(millis: HybridClock.wallMillis(), counter: 0), actor: "x",
            entityType: .expense, entityID: .uuid(UUID()), operation: .create,
            properties: SampleEvents.expenseCreate().properties, previousHash: .zero)
        let encoded = [(bytes: EventCodec.encode(event), event: event)]
        try incoming.offer(encoded[0].bytes, decoded: event, hash: EventCodec.hash(encoded[0].bytes), source: "t")
        for record in TestSigning.heads(for: encoded, key: real) { try incoming.offer(record, source: "t") }
        try incoming.finishDelivery(source: "t")
        #expect(try incoming.takeCovered(source: "t").pins[x]?.pin.key == real.publicKey.description, "the real replica's events pin its key")
    }

    /// A ledger takes events from at most `IncomingEvents.maxOrigins` origins (found by a hostile
    /// run: 26,500 made-up origins, one signed event each, grew the version vector past the
    /// 1 MiB a peer reads, and every later sync — this replica's, and those of replicas that
    /// pulled from it — was refused for good).
    @Test func aDeliveryBringingTooManyOriginsIsRefused() throws {
        var head = LogHead()
        for _ in 0..<(IncomingEvents.maxOrigins - 1) { head.chains[.random()] = ChainHead(sequence: 1, hash: .zero) }
        let held = head.chains.keys.first!
        var incoming = IncomingEvents(head: head, localOrigins: [], maximumSkewMillis: 300_000)
        func offerFirstEvent(of origin: ReplicaID, after previous: ChainHead? = nil) throws {
            let event = Event(
                origin: origin, sequence: (previous?.sequence ?? 0) + 1, timestamp: HybridTimestamp(millis: HybridClock.wallMillis(), counter: 0),
                actor: "x", entityType: .expense, entityID: .uuid(UUID()), operation: .create,
                properties: SampleEvents.expenseCreate().properties, previousHash: previous?.hash ?? .zero)
            let bytes = EventCodec.encode(event)
            try incoming.offer(bytes, decoded: event, hash: EventCodec.hash(bytes), source: "t")
        }
        try offerFirstEvent(of: .random())  // the last origin there is room for
        #expect { try offerFirstEvent(of: .random()) } throws: { "\($0)".contains("past \(IncomingEvents.maxOrigins) origins") }
        #expect(throws: Never.self) { try offerFirstEvent(of: held, after: head.chains[held]) }  // an origin held goes on
    }

    /// `tally audit verify` proves authorship: it names a signature that does not verify, a
    /// head signed by a key other than the origin's, and a pin that disagrees with the log.
    @Test func auditVerifyChecksEverySignature() async throws {
        #expect(try Ledger.verify(b).findings.isEmpty)
        #expect(try Ledger.verify(b).authorship.map(\.signedThrough) == [2])
        // Written past every check, as a tamperer with the files could.
        let x = ReplicaID.random()
        let event = Event(
            origin: x, sequence: 1, timestamp: HybridTimestamp(millis: HybridClock.wallMillis(), counter: 0), actor: "x",
            entityType: .expense, entityID: .uuid(UUID()), operation: .create,
            properties: SampleEvents.expenseCreate().properties, previousHash: .zero)
        let encoded = [(bytes: EventCodec.encode(event), event: event)]
        guard case .head(var bad) = TestSigning.heads(for: encoded).first! else { return }
        bad.signature[0] ^= 1
        let writer = try b.openWriter()
        try writer.appendEncoded(encoded, signatures: [.head(bad)] + TestSigning.heads(for: encoded) + TestSigning.heads(for: encoded))
        writer.close()
        let findings = try Ledger.verify(b).findings.map(\.problem)
        #expect(findings.contains { $0.contains("signature is not valid") })
        #expect(findings.contains { $0.contains("not the origin's key") }, "the third head, by another key than the second's")
        // A pin that is not the key the log shows for that origin.
        try FileManager.default.removeItem(atPath: b.logPath + "/origin-keys.json")
        try Ledger.trust(originText: a.identity.replicaId, keyHex: String(repeating: "cd", count: 32), in: b)
        #expect(try Ledger.verify(b).findings.contains { $0.problem.contains("the key pinned for it is") })
    }

    /// A data directory from before signing gets a key when its log is next opened for writing,
    /// and its chain so far is signed then, so other replicas accept it.
    @Test func aDataDirectoryFromBeforeSigningGetsAKeyAndItsChainSigned() async throws {
        let old = try DataDirectory.create(path: folder.file("old"), name: "old")
        try FileManager.default.removeItem(atPath: old.signingKeyPath)
        let bare = try LogWriter(directory: old.logPath, localOrigin: old.identity.origin, localOnlyOrigin: old.identity.localOnlyOrigin)
        try bare.append([SampleEvents.expenseCreate(), SampleEvents.expenseCreate()])  // as an older build wrote: no signatures
        bare.close()
        #expect(try Ledger.publicKey(of: old) == nil)
        try old.openWriter().close()
        let key = try #require(try Ledger.publicKey(of: old))
        let entry = try Ledger.verify(old).authorship.first { $0.origin == old.identity.origin }
        #expect(entry?.keys == [key] && entry?.signedThrough == 2)
        #expect(try ship(from: old, to: b).applied == 2)
    }

    /// A crash that cut the signatures frame after a batch leaves its events unsigned; the next
    /// open signs the chain's head, so they can still be shipped.
    @Test func aCutSignaturesFrameIsMadeGoodOnTheNextOpen() async throws {
        try write(1, in: a)
        let newest = try a.reader.segmentNames().last!
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: a.logPath + "/" + newest))
        let size = try handle.seekToEnd()
        try handle.truncate(atOffset: size - 10)
        try handle.close()
        #expect(try Ledger.verify(a).authorship.first?.signedThrough == 2, "#3 lost its signature with the cut")
        try a.openWriter().close()
        #expect(try Ledger.verify(a).authorship.first?.signedThrough == 3)
        #expect(try ship(from: a, to: b).applied == 1)
    }

    /// A crash that cut the signatures frame after a batch B received from A leaves A's events
    /// in B unsigned, and B cannot sign A's chain. B sends them on to nobody — not in a stream nor
    /// in a bundle — until a later head of A covers them; before, every peer refused B's whole
    /// delivery for them, at every sync.
    @Test func eventsReceivedWithoutTheirHeadAreNotSentOn() async throws {
        try write(1, in: a)
        try ship(from: a, to: b)
        let newest = try b.reader.segmentNames().last!
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: b.logPath + "/" + newest))
        let size = try handle.seekToEnd()
        try handle.truncate(atOffset: size - 10)
        try handle.close()
        try b.openWriter().close()
        #expect(try chainOfA(in: b)?.sequence == 3)
        #expect(try Ledger.verify(b).authorship.first { $0.origin == a.identity.origin }?.signedThrough == 2, "#3 lost its head with the cut")
        let transports = [("bundle", BadDeliveryContractTests.bundle), ("push", BadDeliveryContractTests.push), ("pull", BadDeliveryContractTests.pull)]
        var targets: [String: DataDirectory] = [:]
        for (name, transport) in transports {
            let target = try DataDirectory.create(path: folder.file("c-\(name)"), name: "c-\(name)")
            targets[name] = target
            let refusal = try await transport(BadDeliveryContractTests.Delivery(source: b, target: target, folder: folder))
            #expect(refusal == nil, "\(name): what B sends is accepted (got \(refusal ?? ""))")
            #expect(try chainOfA(in: target)?.sequence == 2, "\(name): #1…#2, under their head, and not #3")
        }
        // A's next head covers #3 too: once B holds it, B sends both.
        try write(1, in: a)
        try ship(from: a, to: b)
        for (name, transport) in transports {
            let target = try #require(targets[name])
            let refusal = try await transport(BadDeliveryContractTests.Delivery(source: b, target: target, folder: folder))
            #expect(refusal == nil, "\(name): (got \(refusal ?? ""))")
            #expect(try chainOfA(in: target) == (try chainOfA(in: a)), "\(name): #3 and #4 came with A's head")
            #expect(try Ledger.verify(target).findings.isEmpty)
        }
    }

    /// Found by review of the mend above: A's events waiting in B for their head, then A
    /// rotates its key and writes on. The rotation waits with them, and goes out in its place
    /// once the new key's head covers them all; before, B dropped them and sent the rotation
    /// alone, which a receiver holding less of A's chain refuses, at every sync.
    @Test func aRotationAfterEventsWaitingForTheirHeadGoesOutInItsPlace() async throws {
        try write(1, in: a)
        try ship(from: a, to: b)
        let newest = try b.reader.segmentNames().last!
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: b.logPath + "/" + newest))
        try handle.truncate(atOffset: try handle.seekToEnd() - 10)
        try handle.close()
        try b.openWriter().close()
        let ledger = try Ledger(directory: a)
        let rotation = try await ledger.rotateSigningKey()
        _ = try await ledger.create(.expense, [.kind: .string("expense"), .amount: .int(7), .currency: .string("KRW")], actor: "cli:a")
        ledger.close()
        try ship(from: a, to: b)
        #expect(try chainOfA(in: b) == (try chainOfA(in: a)))
        for (name, transport) in [
            ("bundle", BadDeliveryContractTests.bundle), ("push", BadDeliveryContractTests.push), ("pull", BadDeliveryContractTests.pull),
        ] {
            let target = try DataDirectory.create(path: folder.file("r-\(name)"), name: "r-\(name)")
            try Ledger.trust(originText: a.identity.replicaId, keyHex: rotation.oldKey.description, in: target)
            let refusal = try await transport(BadDeliveryContractTests.Delivery(source: b, target: target, folder: folder))
            #expect(refusal == nil, "\(name): (got \(refusal ?? ""))")
            #expect(try chainOfA(in: target) == (try chainOfA(in: a)), "\(name): #1…#4, the rotation in its place")
            #expect(try Ledger.pinnedKeys(of: target).first?.pin.key == rotation.newKey.description, "\(name): the pin followed the rotation")
        }
    }

    /// A rotation interrupted by a crash: if its record is durable the new key is taken, else dropped.
    @Test func aRotationInterruptedByACrashIsFinishedOrDropped() async throws {
        // Durable record, key file not yet renamed (the crash came between).
        let next = ReplicaSigningKey.generate()
        try next.write(to: a.signingKeyPath + ".next")
        let writer = try LogWriter(directory: a.logPath, localOrigin: a.identity.origin, localOnlyOrigin: a.identity.localOnlyOrigin)
        let old = try ReplicaSigningKey.read(from: a.signingKeyPath)!
        try writer.appendEncoded([], signatures: [.rotation(old.rotation(of: a.identity.origin, afterSequence: 2, to: next))])
        writer.close()
        try a.openWriter().close()
        #expect(try Ledger.publicKey(of: a) == next.publicKey)
        #expect(!FileManager.default.fileExists(atPath: a.signingKeyPath + ".next"))
        // A new key file without its record: dropped, the key stays.
        try ReplicaSigningKey.generate().write(to: a.signingKeyPath + ".next")
        try a.openWriter().close()
        #expect(try Ledger.publicKey(of: a) == next.publicKey)
        #expect(!FileManager.default.fileExists(atPath: a.signingKeyPath + ".next"))
        try write(1, in: a)
        #expect(try ship(from: a, to: b).applied == 1)
        #expect(try Ledger.verify(a).findings.isEmpty)
    }

    /// The private key is the owner's alone.
    @Test func theSigningKeyIsOwnerOnly() async throws {
        var info = stat()
        #expect(stat(a.signingKeyPath, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }
}
