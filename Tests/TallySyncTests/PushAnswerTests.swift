import Foundation
import Testing
import TallySync

/// A peer's answer to a push is the peer's word: its counts are added up by the caller
/// (`Ledger.sync`), so only whole numbers in range are taken (an `alreadyHeld` of Int.max
/// once overflowed the sum and stopped the process).
@Suite struct PushAnswerTests {
    func answer(_ text: String) throws -> SendReport {
        try SendReport(peerAnswer: Data(text.utf8), from: "peer: POST /replication/push")
    }

    @Test func aServersAnswerIsRead() throws {
        #expect(try answer(#"{"applied":12,"alreadyHeld":3}"#) == SendReport(applied: 12, alreadyHeld: 3))
        #expect(try answer(#"{"alreadyHeld":0,"applied":0,"other":"ignored"}"#) == SendReport(applied: 0, alreadyHeld: 0))
    }

    @Test(arguments: [
        #"{"applied":0,"alreadyHeld":9223372036854775807}"#, #"{"applied":-1,"alreadyHeld":0}"#,
        #"{"applied":1e300,"alreadyHeld":0}"#, #"{"applied":1.5,"alreadyHeld":0}"#, #"{"applied":"3","alreadyHeld":0}"#,
        #"{"applied":3}"#, #"{"applied":99999999999999999999999,"alreadyHeld":0}"#, "[]", "", "\u{1B}[2J not json",
    ])
    func anythingElseIsRefusedWithoutRepeatingIt(text: String) throws {
        #expect {
            _ = try answer(text)
        } throws: { error in
            let shown = "\(error)"
            return error is SyncRejection && shown.contains("does not count") && !shown.contains("\u{1B}")
        }
    }
}
