import Foundation
import GRDB
import TallyTestSupport
import XCTest
@testable import TallyCoreData

final class CoreDataStoreTests: XCTestCase {
    private let lunchID = UUID()
    private let rentID = UUID()
    private let todoID = UUID()
    /// 2023-03-07T08:26:40Z, as seconds since 2001.
    private let spentAt = Date(timeIntervalSinceReferenceDate: 700_000_000)

    /// A household store of three expenses (inline image, external image, image path) and a todo.
    private func householdStore(externalImage: Data, inlineImage: Data) throws -> CoreDataStoreBuilder {
        let store = try CoreDataStoreBuilder()
        let tags = try CoreDataStoreBuilder.archivedStrings(["lunch", "work"])
        let spent = CoreDataStoreBuilder.seconds(spentAt)
        let busFare: Double = 0.1 + 0.2
        try store.insert(
            "ExpenseEntity", pk: 1,
            [
                "ZID": CoreDataStoreBuilder.uuidBlob(lunchID), "ZTRANSACTION": "Lunch", "ZAMOUNT": 12.5,
                "ZDATE": spent, "ZCATEGORY": "Food", "ZSUBCATEGORY": "Restaurant",
                "ZSUBCATEGORYICON": "fork.knife", "ZPAYMENT": "Card", "ZTAGS": tags,
                "ZMEMO": "team", "ZISREPEATED": 0, "ZIMAGEFROMCLOUD": CoreDataStoreBuilder.inline(inlineImage),
            ])
        let name = try store.writeExternalFile(externalImage)
        try store.insert(
            "ExpenseEntity", pk: 2,
            [
                "ZID": CoreDataStoreBuilder.uuidBlob(rentID), "ZTRANSACTION": "Rent", "ZAMOUNT": 15000.0,
                "ZDATE": spent + 60, "ZTAGS": "home, monthly", "ZISREPEATED": 1,
                "ZREPEATCYCLE": "monthly", "ZIMAGEFROMCLOUD": CoreDataStoreBuilder.externalReference(name),
            ])
        try store.insert(
            "ExpenseEntity", pk: 3,
            [
                "ZTRANSACTION": "Bus", "ZAMOUNT": busFare, "ZDATE": spent + 120,
                "ZIMAGEPATH": "/var/mobile/Containers/Data/Application/0B8F/Documents/receipt.jpg",
            ])
        try store.insert(
            "TodoModel", pk: 1,
            [
                "ZID": CoreDataStoreBuilder.uuidBlob(todoID), "ZTITLE": "Save 100k", "ZMEMO": "by June",
                "ZSTARTDATE": spent, "ZENDDATE": spent + 86_400,
                "ZCOMPLETED": 1, "ZISCHALLENGE": 0, "ZPERCENTAGE": 0.4,
            ])
        return store
    }

    func testReadsTheHouseholdModel() throws {
        let inlineImage = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A])
        let externalImage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let store = try householdStore(externalImage: externalImage, inlineImage: inlineImage)
        try store.close()
        let files = TemporaryDirectory("coredata-files")
        let receipt = Data([0xFF, 0xD8, 0xFF, 0xE0])
        try receipt.write(to: URL(fileURLWithPath: files.file("receipt.jpg")))

        let contents = try CoreDataStore(path: store.storePath, filesFolder: files.path).read()

        XCTAssertEqual(contents.problems, [])
        XCTAssertEqual(contents.storeUUID, store.storeUUID.uppercased())
        XCTAssertEqual(contents.expenses.count, 3)
        let lunch = contents.expenses[0]
        XCTAssertEqual(lunch.sourceKey, lunchID.uuidString)
        XCTAssertEqual(lunch.id, lunchID)
        XCTAssertEqual(lunch.title, "Lunch")
        XCTAssertEqual(lunch.amount, "12.5")
        XCTAssertEqual(lunch.date, spentAt)
        XCTAssertEqual(lunch.category, "Food")
        XCTAssertEqual(lunch.subCategory, "Restaurant")
        XCTAssertEqual(lunch.subCategoryIcon, "fork.knife")
        XCTAssertEqual(lunch.payment, "Card")
        XCTAssertEqual(lunch.tags, ["lunch", "work"])
        XCTAssertEqual(lunch.memo, "team")
        XCTAssertEqual(lunch.isRepeated, false)
        XCTAssertNil(lunch.repeatCycle)
        XCTAssertEqual(lunch.image, .bytes(inlineImage))

        let rent = contents.expenses[1]
        XCTAssertEqual(rent.sourceKey, rentID.uuidString)
        XCTAssertEqual(rent.amount, "15000")
        XCTAssertEqual(rent.tags, ["home", "monthly"])
        XCTAssertEqual(rent.isRepeated, true)
        XCTAssertEqual(rent.repeatCycle, "monthly")
        guard case .file(let externalPath)? = rent.image else { return XCTFail("no external image: \(String(describing: rent.image))") }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: externalPath)), externalImage)

        let bus = contents.expenses[2]
        XCTAssertNil(bus.id)
        XCTAssertEqual(bus.sourceKey, "\(store.storeUUID.uppercased())/ExpenseEntity/3")
        XCTAssertEqual(bus.amount, "0.30000000000000004")  // the REAL as stored, not rounded
        XCTAssertEqual(bus.tags, [])
        guard case .file(let receiptPath)? = bus.image else { return XCTFail("no receipt: \(String(describing: bus.image))") }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: receiptPath)), receipt)

        XCTAssertEqual(
            contents.todos,
            [
                CoreDataTodo(
                    sourceKey: todoID.uuidString, primaryKey: 1, id: todoID, title: "Save 100k", memo: "by June",
                    startDate: spentAt, endDate: spentAt.addingTimeInterval(86_400), completed: true, isChallenge: false,
                    percentage: 0.4)
            ])
    }

    func testDatesAreSecondsSince2001() throws {
        let store = try CoreDataStoreBuilder()
        // TIMESTAMP has numeric affinity: 0.0 and 700000000.0 are kept as INTEGERs, 0.5 as a REAL.
        let seconds: [(any DatabaseValueConvertible)?] = [0.0, 700_000_000, -86_400.0, 0.5]
        for (index, value) in seconds.enumerated() {
            try store.insert("ExpenseEntity", pk: Int64(index + 1), ["ZAMOUNT": 1.0, "ZDATE": value])
        }
        try store.close()

        let dates = try CoreDataStore(path: store.storePath).read().expenses.map(\.date)

        XCTAssertEqual(
            dates,
            [
                Date(timeIntervalSince1970: 978_307_200),  // 2001-01-01T00:00:00Z
                Date(timeIntervalSince1970: 978_307_200 + 700_000_000),
                Date(timeIntervalSince1970: 978_307_200 - 86_400),  // 2000-12-31
                Date(timeIntervalSince1970: 978_307_200.5),
            ])
    }

    func testAMissingExternalFileIsAProblem() throws {
        let store = try CoreDataStoreBuilder()
        let missing = UUID().uuidString
        try store.insert(
            "ExpenseEntity", pk: 1,
            [
                "ZAMOUNT": 9.0, "ZDATE": 1.0, "ZIMAGEFROMCLOUD": CoreDataStoreBuilder.externalReference(missing),
            ])
        try store.close()

        let contents = try CoreDataStore(path: store.storePath).read()

        XCTAssertEqual(contents.expenses.count, 1)
        XCTAssertNil(contents.expenses.first?.image)
        XCTAssertEqual(contents.problems.count, 1)
        XCTAssertTrue(contents.problems.first?.contains(missing) == true, "\(contents.problems)")
        XCTAssertTrue(contents.problems.first?.contains("ExpenseEntity Z_PK 1: imageFromCloud") == true, "\(contents.problems)")
    }

    func testWrongTypesAreProblemsNotTraps() throws {
        let store = try CoreDataStoreBuilder()
        let good: [String: (any DatabaseValueConvertible)?] = ["ZAMOUNT": 5.0, "ZDATE": 10.0]
        try store.insert("ExpenseEntity", pk: 1, ["ZAMOUNT": "abc", "ZDATE": 10.0])
        try store.insert("ExpenseEntity", pk: 2, ["ZAMOUNT": Double.infinity, "ZDATE": 10.0])
        try store.insert("ExpenseEntity", pk: 3, ["ZAMOUNT": 5.0, "ZDATE": "2024-01-01"])
        try store.insert("ExpenseEntity", pk: 4, ["ZAMOUNT": 5.0, "ZDATE": 1e20])
        try store.insert("ExpenseEntity", pk: 5, ["ZAMOUNT": 5.0])
        try store.insert("ExpenseEntity", pk: 6, ["ZAMOUNT": 1e16, "ZDATE": 10.0])
        try store.insert("ExpenseEntity", pk: 7, ["ZAMOUNT": Data([1, 2]), "ZDATE": 10.0])
        try store.insert(
            "ExpenseEntity", pk: 8,
            good.merging([
                "ZISREPEATED": 7, "ZMEMO": Data([0xFF]), "ZID": Data([1, 2, 3]), "ZTAGS": Data([0xFF, 0x00]),
                "ZCATEGORY": Data([0x00]), "ZIMAGEPATH": "../../etc/passwd",
            ]) { _, new in new })
        // Over the (test) bound of 1 KiB: not fetched, reported with its size.
        try store.execute("UPDATE ZEXPENSEENTITY SET ZIMAGEFROMCLOUD = zeroblob(4096) WHERE Z_PK = 8")
        try store.insert("TodoModel", pk: 1, ["ZTITLE": Data([0x41]), "ZPERCENTAGE": "lots"])
        try store.insert("TodoModel", pk: 2, ["ZTITLE": "ok", "ZPERCENTAGE": "lots", "ZSTARTDATE": -1e15, "ZCOMPLETED": 2])
        try store.close()
        var limits = CoreDataLimits.standard
        limits.maxBlobBytes = 1024

        let contents = try CoreDataStore(path: store.storePath, mapping: .household, filesFolder: nil, limits: limits).read()

        XCTAssertEqual(contents.expenses.map(\.primaryKey), [8])
        let survivor = try XCTUnwrap(contents.expenses.first)
        XCTAssertNil(survivor.isRepeated)
        XCTAssertNil(survivor.memo)
        XCTAssertNil(survivor.id)
        XCTAssertNil(survivor.category)
        XCTAssertEqual(survivor.tags, [])
        XCTAssertNil(survivor.image)
        XCTAssertEqual(survivor.sourceKey, "\(store.storeUUID.uppercased())/ExpenseEntity/8")
        XCTAssertEqual(contents.todos.map(\.title), ["ok"])
        XCTAssertNil(contents.todos.first?.percentage)
        XCTAssertNil(contents.todos.first?.startDate)
        XCTAssertNil(contents.todos.first?.completed)

        let expected = [
            "ExpenseEntity Z_PK 1: skipped: amount", "ExpenseEntity Z_PK 2: skipped: amount",
            "ExpenseEntity Z_PK 3: skipped: date", "ExpenseEntity Z_PK 4: skipped: date",
            "ExpenseEntity Z_PK 5: skipped: date is empty", "ExpenseEntity Z_PK 6: skipped: amount",
            "ExpenseEntity Z_PK 7: skipped: amount", "ExpenseEntity Z_PK 8: isRepeated", "ExpenseEntity Z_PK 8: memo",
            "ExpenseEntity Z_PK 8: id", "ExpenseEntity Z_PK 8: tags", "ExpenseEntity Z_PK 8: category",
            "ExpenseEntity Z_PK 8: imageFromCloud has 4096", "ExpenseEntity Z_PK 8: imagePath",
            "TodoModel Z_PK 1: skipped: title", "TodoModel Z_PK 2: percentage", "TodoModel Z_PK 2: startDate",
            "TodoModel Z_PK 2: completed",
        ]
        for start in expected {
            XCTAssertTrue(contents.problems.contains { $0.hasPrefix(start) }, "no problem starting \(start) in \(contents.problems)")
        }
        XCTAssertEqual(contents.problems.count, expected.count, "\(contents.problems)")
    }

    func testAMappingFileNamesAnotherModel() throws {
        // A sub-entity's attribute numbered by Core Data (ZNOTE1), a Decimal amount.
        let spending = CoreDataStoreBuilder.Entity(
            name: "Spending",
            columns: [
                ("ZVALUE", "DECIMAL"), ("ZWHEN", "TIMESTAMP"), ("ZNOTE1", "VARCHAR"), ("ZPAYEE", "VARCHAR"),
            ])
        let store = try CoreDataStoreBuilder(name: "Ledger", entities: [spending])
        try store.insert("Spending", pk: 1, ["ZVALUE": "1234.50", "ZWHEN": 100.0, "ZPAYEE": "Bakery", "ZNOTE1": "bread"])
        try store.insert("Spending", pk: 2, ["ZVALUE": 5000, "ZWHEN": 200.0])
        try store.close()
        let folder = TemporaryDirectory("coredata-mapping")
        let mappingFile = folder.file("mapping.json")
        try Data(
            """
            {"expense": {"entity": "Spending", "title": "payee", "amount": "value", "date": "when", "memo": "note",
                         "id": "uuid"},
             "todo": null}
            """.utf8
        ).write(to: URL(fileURLWithPath: mappingFile))

        let mapping = try CoreDataMapping(jsonFile: mappingFile)
        let contents = try CoreDataStore(path: store.storePath, mapping: mapping).read()

        XCTAssertNil(mapping.todo)
        XCTAssertEqual(contents.problems, [])
        XCTAssertEqual(contents.expenses.map(\.title), ["Bakery", nil])
        XCTAssertEqual(contents.expenses.map(\.amount), ["1234.5", "5000"])  // DECIMAL keeps numbers as numbers
        XCTAssertEqual(contents.expenses.map(\.memo), ["bread", nil])
        XCTAssertEqual(contents.expenses.map(\.sourceKey), ["\(store.storeUUID.uppercased())/Spending/1", "\(store.storeUUID.uppercased())/Spending/2"])
        XCTAssertEqual(contents.todos, [])
    }

    func testMappingFilesAreCheckedKeyByKey() throws {
        let folder = TemporaryDirectory("coredata-mapping")
        func refusal(_ json: String) -> CoreDataStoreError? {
            let file = folder.file("mapping-\(UUID().uuidString).json")
            do {
                try Data(json.utf8).write(to: URL(fileURLWithPath: file))
                _ = try CoreDataMapping(jsonFile: file)
                return nil
            } catch {
                return error as? CoreDataStoreError
            }
        }
        let typo = refusal(#"{"expense": {"entity": "E", "amout": "amount", "amount": "amount", "date": "date"}}"#)
        XCTAssertEqual(typo?.code, .invalidMapping)
        XCTAssertTrue(typo?.message.contains("\"amout\"") == true, "\(String(describing: typo))")
        XCTAssertEqual(refusal(#"{"expense": {"entity": "E", "date": "date"}}"#)?.code, .invalidMapping)
        XCTAssertEqual(refusal(#"{"expense": {"entity": "E", "amount": "a", "date": "d"}, "todos": null}"#)?.code, .invalidMapping)
        XCTAssertEqual(refusal(#"{"expense": {"entity": "E", "amount": "a; DROP", "date": "d"}}"#)?.code, .invalidMapping)
        XCTAssertEqual(refusal(#"{"expense": {"entity": "E", "amount": 3, "date": "d"}}"#)?.code, .invalidMapping)
        XCTAssertEqual(refusal(#"{"expense": {"entity": "E", "entity": "F", "amount": "a", "date": "d"}}"#)?.code, .invalidMapping)

        // The built-in mapping, encoded, reads back as itself.
        let file = folder.file("household.json")
        try JSONEncoder().encode(CoreDataMapping.household).write(to: URL(fileURLWithPath: file))
        XCTAssertEqual(try CoreDataMapping(jsonFile: file), .household)
    }

    func testAMissingColumnOrEntityIsNamed() throws {
        let store = try CoreDataStoreBuilder()
        try store.close()
        var mapping = CoreDataMapping.household
        mapping.expense.memo = "remark"
        XCTAssertThrowsError(try CoreDataStore(path: store.storePath, mapping: mapping)) { error in
            XCTAssertEqual((error as? CoreDataStoreError)?.code, .missingColumn)
            XCTAssertTrue("\(error)".contains("ZREMARK"), "\(error)")
        }
        mapping = .household
        mapping.todo?.entity = "Chore"
        XCTAssertThrowsError(try CoreDataStore(path: store.storePath, mapping: mapping)) { error in
            XCTAssertEqual((error as? CoreDataStoreError)?.code, .missingEntity)
            XCTAssertTrue("\(error)".contains("Chore"), "\(error)")
        }
    }

    func testAStoreNotMadeByCoreDataIsRefused() throws {
        let folder = TemporaryDirectory("coredata-not")
        let plain = folder.file("plain.sqlite")
        try DatabaseQueue(path: plain).write { db in
            try db.execute(sql: "CREATE TABLE expenses (id INTEGER PRIMARY KEY, amount REAL)")
        }
        XCTAssertThrowsError(try CoreDataStore(path: plain)) { error in
            XCTAssertEqual((error as? CoreDataStoreError)?.code, .notCoreData, "\(error)")
            XCTAssertTrue("\(error)".contains("Z_METADATA"), "\(error)")
        }
        let garbage = folder.file("garbage.sqlite")
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: garbage))
        XCTAssertThrowsError(try CoreDataStore(path: garbage)) { error in
            XCTAssertEqual((error as? CoreDataStoreError)?.code, .cannotOpen, "\(error)")
        }
        XCTAssertThrowsError(try CoreDataStore(path: folder.file("missing.sqlite"))) { error in
            XCTAssertEqual((error as? CoreDataStoreError)?.code, .cannotOpen, "\(error)")
        }
    }

    func testReadingLeavesTheStoreUnchanged() throws {
        let store = try householdStore(externalImage: Data([1, 2, 3]), inlineImage: Data([4, 5, 6]))
        try store.close()
        let before = try snapshot(store.directory.path)

        let contents = try CoreDataStore(path: store.storePath).read()

        XCTAssertEqual(contents.expenses.count, 3)
        XCTAssertEqual(try snapshot(store.directory.path), before)
    }

    func testAStoreWithItsWALBesideItIsReadWhole() throws {
        let store = try CoreDataStoreBuilder(walMode: true)
        for pk in Int64(1)...20 {
            try store.insert("ExpenseEntity", pk: pk, ["ZAMOUNT": Double(pk), "ZDATE": Double(pk)])
        }
        // The app still open: the rows are in Household.sqlite-wal, indexed by -shm.
        XCTAssertNotNil(BoundedFile.regularFileSize(store.storePath + "-wal"))
        XCTAssertNotNil(BoundedFile.regularFileSize(store.storePath + "-shm"))
        let before = try snapshot(store.directory.path, skipping: "-shm")

        let contents = try CoreDataStore(path: store.storePath).read()

        XCTAssertEqual(contents.expenses.map(\.amount), (1...20).map { String($0) })
        XCTAssertEqual(try snapshot(store.directory.path, skipping: "-shm"), before)

        // The app closed: the WAL is checkpointed and removed, the file still in WAL mode.
        try store.close()
        XCTAssertNil(BoundedFile.regularFileSize(store.storePath + "-wal"))
        let closed = try snapshot(store.directory.path)
        XCTAssertEqual(try CoreDataStore(path: store.storePath).read().expenses.count, 20)
        XCTAssertEqual(try snapshot(store.directory.path), closed)  // no -wal or -shm made beside it
    }

    /// Every file under `folder` (hidden ones too) with its bytes; the open writer's `-shm`
    /// (its shared memory, which it may touch itself) can be left out.
    private func snapshot(_ folder: String, skipping suffix: String? = nil) throws -> [String: Data] {
        var files: [String: Data] = [:]
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return files }
        while let relative = enumerator.nextObject() as? String {
            let path = folder + "/" + relative
            guard BoundedFile.regularFileSize(path) != nil else {
                files[relative] = Data()  // a folder: its name is enough
                continue
            }
            if let suffix, relative.hasSuffix(suffix) {
                files[relative] = Data()
                continue
            }
            files[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return files
    }
}
