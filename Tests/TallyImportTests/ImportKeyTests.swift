import Foundation
import Testing
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
}
