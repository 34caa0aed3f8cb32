import Foundation
import Testing
import TallyCluster
import TallyServer
import TallyTestSupport

/// The operator's edits of a hosted ledger's credentials and quota made on a cluster
/// (`CredentialEdit`): each applied to a ledger folder as the CLI's command would change it,
/// refused with a reason and nothing changed, and read back from its bytes.
@Suite struct CredentialEditTests {
    let folder = TemporaryDirectory("tally-credential-edits")

    @Test func tokensAreAddedAndRevokedAndANameTakenOrMissingIsRefused() throws {
        let path = folder.file("tokens")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let (secret, record) = try TokenStore.make(name: "phone", scopes: [.read, .write])
        #expect(CredentialEdit.addToken(record).apply(folder: path) == nil)
        #expect(try TokenStore(folder: path).authenticate(secret)?.name == "phone")
        let (_, again) = try TokenStore.make(name: "phone", scopes: [.read])
        #expect(CredentialEdit.addToken(again).apply(folder: path)?.contains("exists") == true)
        #expect(try TokenStore(folder: path).authenticate(secret)?.scopes == [.read, .write], "the refused edit changed nothing")
        #expect(CredentialEdit.revokeToken(name: "phone").apply(folder: path) == nil)
        #expect(try TokenStore(folder: path).authenticate(secret) == nil)
        #expect(CredentialEdit.revokeToken(name: "phone").apply(folder: path) == "no token named 'phone'")
    }

    @Test func membersAreAddedAndRemovedWithTheirSessionsAndTheLastOwnerStays() throws {
        let path = folder.file("members")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let store = MemberStore(folder: path, cost: 4)
        #expect(CredentialEdit.addMember(try MemberStore.member("mina", role: .owner, password: "correct horse", cost: 4)).apply(folder: path) == nil)
        #expect(CredentialEdit.addMember(try MemberStore.member("joon", role: .member, password: "battery staple", cost: 4)).apply(folder: path) == nil)
        let session = try #require(try store.signIn("joon", password: "battery staple"))
        #expect(try store.session(session.secret) != nil)
        #expect(CredentialEdit.removeMember(name: "joon").apply(folder: path) == nil)
        #expect(try store.session(session.secret) == nil, "a removed member's sessions end")
        #expect(CredentialEdit.removeMember(name: "joon").apply(folder: path) == "no member named 'joon'")
        #expect(CredentialEdit.removeMember(name: "mina").apply(folder: path)?.contains("only owner") == true)
        #expect(try store.all().map(\.name) == ["mina"])
    }

    @Test func anInvitationMadeByTheCLIIsAcceptedOnce() throws {
        let path = folder.file("invitations")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let (code, invitation) = MemberStore.invitation(role: .readOnly, by: "operator")
        #expect(CredentialEdit.addInvitation(invitation).apply(folder: path) == nil)
        let store = MemberStore(folder: path, cost: 4)
        #expect(try store.accept(code, name: "guest", password: "a long password").member.role == .readOnly)
        #expect(throws: (any Error).self) { try store.accept(code, name: "second", password: "a long password") }
    }

    @Test func aQuotaChangeSetsWhatItNamesAndLeavesTheRest() throws {
        let path = folder.file("quota")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var events = LedgerQuota()
        events.eventsPerDay = 500
        #expect(CredentialEdit.changeQuota(limits: events, clearing: false).apply(folder: path) == nil)
        var members = LedgerQuota()
        members.members = 3
        #expect(CredentialEdit.changeQuota(limits: members, clearing: false).apply(folder: path) == nil)
        var expected = LedgerQuota()
        expected.eventsPerDay = 500
        expected.members = 3
        #expect(try LedgerQuota.read(folder: path) == expected)
        #expect(CredentialEdit.changeQuota(limits: LedgerQuota(), clearing: true).apply(folder: path) == nil)
        #expect(try LedgerQuota.read(folder: path) == LedgerQuota())
    }

    @Test func anEditOfPostgreSQLsCopySeesOnlyTheCredentialFilesAndKeepsTheRest() throws {
        let files: [String: [UInt8]] = [
            "replica.key": Array("secret key".utf8), "replica.json": Array("{}".utf8), "tokens.json": Array("[]".utf8),
            "invites.json": Array("[]".utf8),
        ]
        let (seen, after) = try LedgerFiles.inFolderOfTheirOwn(files) { folder in
            let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") || $0.hasSuffix(".key") }.sorted()
            try Data("[1]".utf8).write(to: URL(fileURLWithPath: folder + "/tokens.json"))
            try FileManager.default.removeItem(atPath: folder + "/invites.json")
            return names
        }
        #expect(seen == ["invites.json", "tokens.json"], "the signing key is never written out for an edit")
        #expect(after == ["replica.key": Array("secret key".utf8), "replica.json": Array("{}".utf8), "tokens.json": Array("[1]".utf8)])
    }

    @Test func anEditIsReadBackFromItsBytesAndOtherBytesAreNone() throws {
        let (_, record) = try TokenStore.make(name: "kit", scopes: [.replicate])
        for edit in [CredentialEdit.addToken(record), .revokeToken(name: "kit"), .removeMember(name: "x"), .changeQuota(limits: LedgerQuota(), clearing: true)]
        {
            #expect(CredentialEdit(bytes: edit.bytes) == edit)
        }
        for hostile in ["", "{}", "[]", #"{"dropTables":{}}"#, #"{"revokeToken":{"name":7}}"#, String(repeating: "[", count: 100_000)] {
            #expect(CredentialEdit(bytes: Array(hostile.utf8)) == nil, "\(hostile.prefix(20))")
        }
    }
}
