import Foundation
import Testing
import TallyCore
@testable import TallyImport

/// Import keys decide what a re-import skips, so their text must never change between
/// versions: the date part is written exactly as `%04d-%02d-%02dT…` always wrote it.
@Suite struct ImportKeyTests {
    @Test func paddedNumbersAreWhatPrintfWrites() {
        for width in [2, 4] {
            for number in [-10_000, -123, -5, -1, 0, 1, 5, 9, 10, 59, 99, 100, 999, 1_000, 2_026, 9_999, 10_000, 123_456] {
                #expect(StatementReader.padded(number, width) == String(format: "%0\(width)d", number), "\(number) in \(width)")
            }
        }
    }

    /// Rows alike are numbered as `String`s compare, by canonical equivalence: a payee written
    /// composed (NFC) and the same payee decomposed (NFD) are the first and second of one text,
    /// as they always were — else re-importing the file would make the second again.
    @Test func rowsAlikeUpToUnicodeNormalisationAreNumberedTogether() throws {
        let composed = "Caf\u{E9} \u{AC00}"  // é, 가
        let decomposed = "Cafe\u{301} \u{1100}\u{1161}"  // e + combining acute, ᄀ + ᅡ
        #expect(composed == decomposed && Array(composed.utf8) != Array(decomposed.utf8))
        var csv = "이용일,가맹점,이용금액,할부\n"
        for payee in [composed, decomposed, composed, "Other"] { csv += "2026.03.01,\(payee),\"12,000원\",일시불\n" }
        let rows = try StatementReader.csv(Array(csv.utf8), options: StatementOptions()).rows
        #expect(rows.map { $0.importKey.split(separator: "\u{1F}").last.map(String.init) } == ["1", "2", "3", "1"])
        #expect(Set(rows.map(\.importKey)).count == 4, "every row its own key")
    }
}
