import Foundation
import XCTest
@testable import TallyCoreData

final class DecimalTextTests: XCTestCase {
    func testRealsAreWrittenWithTheirShortestDigits() {
        let cases: [(Double, String)] = [
            (12.5, "12.5"), (12.0, "12"), (15000, "15000"), (0.1, "0.1"), (0.1 + 0.2, "0.30000000000000004"),
            (1e-5, "0.00001"), (-1.25e-7, "-0.000000125"), (1e16, "10000000000000000"), (-0.0, "0"), (0, "0"),
            (123456789.125, "123456789.125"), (-42, "-42"),
        ]
        for (value, text) in cases {
            XCTAssertEqual(DecimalText.plain(value), text, "\(value)")
            // The text reads back as the same double: nothing was rounded.
            XCTAssertEqual(DecimalText.plain(value).flatMap { Double($0) }, value, "\(value)")
        }
        XCTAssertNil(DecimalText.plain(.infinity))
        XCTAssertNil(DecimalText.plain(-.infinity))
        XCTAssertNil(DecimalText.plain(.nan))
    }

    func testPlainDecimalLiterals() {
        for text in ["12", "12.50", "-3", "0.001", "1234567890.12"] {
            XCTAssertTrue(DecimalText.isPlainDecimal(text), text)
        }
        for text in ["", "-", "abc", "1e3", "12.", ".5", "1.2.3", "+4", "NaN", "inf", " 1", String(repeating: "9", count: 41)] {
            XCTAssertFalse(DecimalText.isPlainDecimal(text), text)
        }
    }
}
