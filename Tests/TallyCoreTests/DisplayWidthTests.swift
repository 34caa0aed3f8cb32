import Testing
@testable import TallyCore

/// Terminal cell widths (UAX #11, counted per grapheme cluster) and the padding that
/// `tally`'s tables are built from.
@Suite struct DisplayWidthTests {
    @Test func asciiIsOneCellPerCharacter() {
        #expect(DisplayWidth.of("") == 0)
        #expect(DisplayWidth.of("Coffee") == 6)
        #expect(DisplayWidth.of("2026-03-01  4,500 KRW") == 21)
    }

    @Test func hangulAndOtherWideTextIsTwoCells() {
        #expect(DisplayWidth.of("식비") == 4)
        #expect(DisplayWidth.of("Coffee 커피") == 11)
        #expect(DisplayWidth.of("日本語") == 6)
        #expect(DisplayWidth.of("カタカナ") == 8)
        #expect(DisplayWidth.of("「」") == 4)
        #expect(DisplayWidth.of("\u{3000}") == 2)  // ideographic space
    }

    @Test func fullwidthFormsAreTwoCellsAndHalfwidthOne() {
        #expect(DisplayWidth.of("ＡＢ") == 4)
        #expect(DisplayWidth.of("￦1,000") == 7)
        #expect(DisplayWidth.of("ｶﾀｶﾅ") == 4)
    }

    @Test func emojiAreTwoCellsPerPicture() {
        #expect(DisplayWidth.of("☕") == 2)
        #expect(DisplayWidth.of("🚀") == 2)
        #expect(DisplayWidth.of("👨‍👩‍👧") == 2)  // ZWJ sequence
        #expect(DisplayWidth.of("🇰🇷") == 2)  // flag
        #expect(DisplayWidth.of("👍🏽") == 2)  // skin tone modifier
        #expect(DisplayWidth.of("☺") == 1)  // text presentation by default…
        #expect(DisplayWidth.of("☺\u{FE0F}") == 2)  // …emoji with VS16
        #expect(DisplayWidth.of("1\u{FE0F}\u{20E3}") == 2)  // keycap
        #expect(DisplayWidth.of("Lunch 🍱🍜") == 10)
    }

    @Test func combiningMarksAndJamoSequencesTakeTheirBasesWidth() {
        #expect(DisplayWidth.of("e\u{301}") == 1)
        #expect(DisplayWidth.of("cafe\u{301}") == DisplayWidth.of("café"))
        #expect(DisplayWidth.of("\u{1100}\u{1161}") == 2)  // ᄀ + ᅡ, drawn as 가
        #expect(DisplayWidth.of("\u{1100}\u{1161}\u{11A8}") == 2)  // 각
        #expect(DisplayWidth.of("\u{1100}\u{1161}") == DisplayWidth.of("가"))
    }

    @Test func zeroWidthAndControlCharactersTakeNoCells() {
        #expect(DisplayWidth.of("\u{200B}") == 0)
        #expect(DisplayWidth.of("\u{200D}") == 0)
        #expect(DisplayWidth.of("\u{FE0F}") == 0)
        #expect(DisplayWidth.of("a\u{200B}b") == 2)
        #expect(DisplayWidth.of("a\tb\nc") == 3)
        #expect(DisplayWidth.of("\u{1B}") == 0)
    }

    /// UAX #11 ambiguous characters count one cell (terminals outside CJK locales draw them narrow).
    @Test func ambiguousWidthIsOneCell() {
        #expect(DisplayWidth.of("Ωμέγα") == 5)
        #expect(DisplayWidth.of("├─┤") == 3)
        #expect(DisplayWidth.of("“quoted”") == 8)
        #expect(DisplayWidth.of("①") == 1)
    }

    @Test func paddedFillsToTheWidthInCells() {
        #expect(DisplayWidth.padded("식비", to: 6) == "식비  ")
        #expect(DisplayWidth.padded("식비", to: 6, rightAligned: true) == "  식비")
        #expect(DisplayWidth.padded("☕", to: 3) == "☕ ")
        #expect(DisplayWidth.padded("e\u{301}", to: 3) == "e\u{301}  ")
        #expect(DisplayWidth.padded("4,500", to: 9, rightAligned: true) == "    4,500")
        #expect(DisplayWidth.padded("", to: 2) == "  ")
    }

    @Test func paddedLeavesTextAlreadyWideEnoughAlone() {
        #expect(DisplayWidth.padded("커피", to: 4) == "커피")
        #expect(DisplayWidth.padded("커피", to: 3, rightAligned: true) == "커피")
        #expect(DisplayWidth.padded("abc", to: 0) == "abc")
    }

    /// What keeps table columns aligned: every cell padded to its column's widest cell takes
    /// exactly that many cells, so each following column starts at the same cell offset on every line.
    @Test(arguments: [false, true])
    func paddedColumnsStartAtTheSameCellOffset(rightAligned: Bool) {
        let rows = [
            ["DATE", "CATEGORY", "MEMO", "AMOUNT"],
            ["2026-03-01", "식비", "Coffee 커피 ☕", "4,500"],
            ["2026-03-02", "👨‍👩‍👧 가족", "e\u{301}te\u{301} 🇰🇷", "1,250,000"],
            ["2026-03-03", "ＡＢ", "\u{1100}\u{1161}\u{200B}", "9.99"],
        ]
        let widths = rows[0].indices.map { column in rows.map { DisplayWidth.of($0[column]) }.max() ?? 0 }
        #expect(widths == [10, 8, 14, 9])
        for row in rows {
            var offset = 0
            for (column, cell) in row.enumerated() {
                let padded = DisplayWidth.padded(cell, to: widths[column], rightAligned: rightAligned)
                #expect(DisplayWidth.of(padded) == widths[column], "\(cell.debugDescription) in column \(column)")
                offset += DisplayWidth.of(padded + "  ")
                #expect(offset == widths[...column].reduce(0, +) + 2 * (column + 1))
            }
        }
    }
}
