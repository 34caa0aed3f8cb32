import Testing
import TallyCore

@Suite struct CategoryDeduplicationTests {
    typealias C = CategoryDeduplication.Category
    let a = "0a000000-0000-0000-0000-000000000000", b = "0b000000-0000-0000-0000-000000000000"
    let c = "0c000000-0000-0000-0000-000000000000", d = "0d000000-0000-0000-0000-000000000000"
    let e = "0e000000-0000-0000-0000-000000000000", f = "0f000000-0000-0000-0000-000000000000"

    @Test func namesNormalize() {
        #expect(CategoryDeduplication.normalizedName("  Food  & Drink ") == "food & drink")
        #expect(CategoryDeduplication.normalizedName("ＦＯＯＤ") == "food")
        #expect(CategoryDeduplication.normalizedName("식비") == CategoryDeduplication.normalizedName(" 식비"))
    }

    @Test func theSameDefaultsFromTwoReplicasMergeIntoTheSmallestID() {
        let (canonical, merges) = CategoryDeduplication.resolve([
            C(id: b, name: "Food", parentId: nil), C(id: a, name: "food ", parentId: nil),
            C(id: c, name: "Transport", parentId: nil),
        ])
        #expect(canonical == [a: a, b: a, c: c])
        #expect(merges.map(\.loser) == [b])
        #expect(merges.first?.reason.contains("same name 'food'") == true)
    }

    @Test func childrenOfMergedParentsMergeInTurn() {
        // b and a merge; their children "Lunch" (d under b, e under a) then share a key too.
        let (canonical, _) = CategoryDeduplication.resolve([
            C(id: b, name: "Food", parentId: nil), C(id: a, name: "Food", parentId: nil),
            C(id: d, name: "Lunch", parentId: b), C(id: e, name: "lunch", parentId: a),
            C(id: f, name: "Snack", parentId: d), C(id: c, name: "Snack", parentId: e),
        ])
        #expect(canonical[b] == a && canonical[e] == d && canonical[d] == d)
        #expect(canonical[f] == c && canonical[c] == c, "the cascade goes all the way down")
    }

    @Test func aSmallerDuplicateArrivingLaterTakesOver() {
        let before = CategoryDeduplication.resolve([C(id: c, name: "Food", parentId: nil), C(id: d, name: "Food", parentId: nil)]).canonical
        #expect(before[d] == c)
        let after = CategoryDeduplication.resolve([
            C(id: c, name: "Food", parentId: nil), C(id: d, name: "Food", parentId: nil),
            C(id: a, name: "FOOD", parentId: nil),
        ]).canonical
        #expect(after == [a: a, c: a, d: a])
    }

    @Test func renamesCreateAndRemoveCollisions() {
        let apart = CategoryDeduplication.resolve([C(id: a, name: "Food", parentId: nil), C(id: b, name: "Meals", parentId: nil)])
        #expect(apart.merges.isEmpty)
        let together = CategoryDeduplication.resolve([C(id: a, name: "Food", parentId: nil), C(id: b, name: "food", parentId: nil)])
        #expect(together.canonical[b] == a)
        let apartAgain = CategoryDeduplication.resolve([C(id: a, name: "Groceries", parentId: nil), C(id: b, name: "food", parentId: nil)])
        #expect(apartAgain.merges.isEmpty)
    }

    @Test func sameNameUnderDifferentParentsStaysApart() {
        let (_, merges) = CategoryDeduplication.resolve([
            C(id: a, name: "Food", parentId: nil), C(id: b, name: "Travel", parentId: nil),
            C(id: c, name: "Other", parentId: a), C(id: d, name: "Other", parentId: b),
        ])
        #expect(merges.isEmpty)
    }

    @Test func aParentCycleDoesNotHang() {
        let (canonical, _) = CategoryDeduplication.resolve([C(id: a, name: "X", parentId: b), C(id: b, name: "Y", parentId: a)])
        #expect(canonical.count == 2)
    }
}
