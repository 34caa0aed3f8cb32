import Foundation
import Testing
import TallyCore
import TallyCoreData
import TallyKit
import TallyLedger
import TallyLog
import TallyTestSupport

/// `CoreDataImport`: a household store built as Core Data lays it out, imported through
/// TallyKit — the category tree with icons, tags, repeats, images, to-dos with their checks,
/// settings — once however often it runs, and one copy when two devices import it.
@Suite struct CoreDataImportTests {
    static let lunchID = UUID(), rentID = UUID(), todoID = UUID()
    static let spentAt = Date(timeIntervalSinceReferenceDate: 800_000_000)  // 2026-05-07
    static let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46] + Array(repeating: 0x11, count: 200))
    static let png = PNGFixture.zeros(width: 2, height: 2, interlaced: false)

    /// The store, a files folder with the receipt an `imagePath` names, and a settings export.
    struct Fixture {
        let store: CoreDataStoreBuilder
        let files = TemporaryDirectory("coredata-files")
        var settings: String { files.file("settings.plist") }

        init() throws {
            store = try CoreDataStoreBuilder()
            let spent = CoreDataStoreBuilder.seconds(spentAt)
            try store.insert(
                "ExpenseEntity", pk: 1,
                [
                    "ZID": CoreDataStoreBuilder.uuidBlob(lunchID), "ZTRANSACTION": "Lunch", "ZAMOUNT": 12.5, "ZDATE": spent, "ZCATEGORY": "Food",
                    "ZSUBCATEGORY": "Restaurant", "ZSUBCATEGORYICON": "fork.knife", "ZPAYMENT": "Card",
                    "ZTAGS": try CoreDataStoreBuilder.archivedStrings(["lunch", "work"]), "ZMEMO": "team", "ZISREPEATED": 0,
                    "ZIMAGEFROMCLOUD": CoreDataStoreBuilder.inline(png),
                ])
            let name = try store.writeExternalFile(jpeg)
            try store.insert(
                "ExpenseEntity", pk: 2,
                [
                    "ZID": CoreDataStoreBuilder.uuidBlob(rentID), "ZTRANSACTION": "Rent", "ZAMOUNT": 1500.0, "ZDATE": spent + 60, "ZCATEGORY": "Home",
                    "ZTAGS": "home, monthly", "ZISREPEATED": 1, "ZREPEATCYCLE": "monthly",
                    "ZIMAGEFROMCLOUD": CoreDataStoreBuilder.externalReference(name),
                ])
            try store.insert(
                "ExpenseEntity", pk: 3,
                ["ZTRANSACTION": "Bus", "ZAMOUNT": 0.1 + 0.2, "ZDATE": spent + 120, "ZCATEGORY": "Food", "ZIMAGEPATH": "/var/mobile/Documents/bus.jpg"])
            try store.insert(
                "TodoModel", pk: 1,
                [
                    "ZID": CoreDataStoreBuilder.uuidBlob(todoID), "ZTITLE": "No coffee week", "ZSTARTDATE": spent, "ZENDDATE": spent + 4 * 86_400,
                    "ZCOMPLETED": 0, "ZISCHALLENGE": 1, "ZPERCENTAGE": 0.6,
                ])
            try store.close()
            try Self.jpegFile.write(to: URL(fileURLWithPath: files.file("bus.jpg")))
            let plist = try PropertyListSerialization.data(fromPropertyList: ["theme": "dark", "monthlyBudget": 300_000], format: .xml, options: 0)
            try plist.write(to: URL(fileURLWithPath: settings))
        }

        static let jpegFile = jpeg + Data([0x22])
    }

    static func run(_ fixture: Fixture, into replica: Replica) async throws -> CoreDataImport.Report {
        try await replica.importCoreData(store: fixture.store.storePath, files: fixture.files.path, settings: fixture.settings, currency: "USD")
    }

    @Test func theHouseholdStoreBecomesExpensesCategoriesTodosAndSettings() async throws {
        let fixture = try Fixture()
        let folder = TemporaryDirectory("kit")
        let replica = try await Replica.open(at: folder.file("ledger"), actor: "minji")
        let report = try await Self.run(fixture, into: replica)
        #expect(report.expenses.created.count == 3 && report.problems.isEmpty, "\(report.problems)")

        let expenses = try replica.query.expenses()
        let lunch = try #require(expenses.first { $0.payee == "Lunch" })
        #expect(lunch.amount == 1_250 && lunch.currency == "USD" && lunch.memo == "team" && lunch.payment == "Card")
        #expect(lunch.tags == ["lunch", "work"] && lunch.categoryName == "Restaurant" && lunch.parentCategoryName == "Food")
        #expect(lunch.dateMillis == Int64(Self.spentAt.timeIntervalSince1970 * 1000))
        #expect(try lunch.attachments.map { try replica.attachment($0) } == [Self.png])
        let rent = try #require(expenses.first { $0.payee == "Rent" })
        #expect(rent.amount == 150_000 && rent.repeat == "monthly" && rent.tags == ["home", "monthly"] && rent.categoryName == "Home")
        #expect(try rent.attachments.map { try replica.attachment($0) } == [Self.jpeg])
        let bus = try #require(expenses.first { $0.payee == "Bus" })
        #expect(bus.amount == 30, "0.1 + 0.2 as a Double is 30 cents")
        #expect(try bus.attachments.map { try replica.attachment($0) } == [Fixture.jpegFile])

        let categories = try replica.query.categories().map(\.category)
        let food = try #require(categories.first { $0.name == "Food" && $0.parentId == nil })
        #expect(categories.contains { $0.name == "Restaurant" && $0.parentId == food.id && $0.icon == "fork.knife" })
        #expect(categories.filter { $0.name == "Food" }.count == 1)

        let todo = try #require(try replica.query.todos().first)
        #expect(todo.title == "No coffee week" && todo.isChallenge && !todo.isCompleted)
        #expect(todo.checks == [true, true, true, false, false], "60% of five days")
        #expect(try replica.query.setting("app.theme") == "\"dark\"")
        #expect(try replica.query.setting("app.monthlyBudget") == "300000")
    }

    @Test func importingTheSameStoreAgainChangesNothing() async throws {
        let fixture = try Fixture()
        let folder = TemporaryDirectory("kit")
        let replica = try await Replica.open(at: folder.file("ledger"), actor: "minji")
        _ = try await Self.run(fixture, into: replica)
        let written = try replica.query.projectedIndex()
        let again = try await Self.run(fixture, into: replica)
        #expect(try replica.query.projectedIndex() == written, "no event the second time")
        #expect(again.expenses.created.isEmpty && again.expenses.duplicates.count == 3 && again.todosHeld == 1 && again.settingsSet == 0)
    }

    /// An app imports at every launch until it drops Core Data: what a person changed since
    /// stays changed, and nothing is written.
    @Test func aReimportUndoesNoChangeAPersonMade() async throws {
        let fixture = try Fixture()
        let folder = TemporaryDirectory("kit")
        let replica = try await Replica.open(at: folder.file("ledger"), actor: "minji")
        _ = try await Self.run(fixture, into: replica)
        let rent = try #require(try replica.query.expenses().first { $0.payee == "Rent" }.flatMap { UUID(uuidString: $0.id) })
        try await replica.update(rent, ExpenseFields(repeat: ExpenseFields.Repeat.none, attachments: []))
        try await replica.setSetting("app.theme", json: "\"light\"")
        let written = try replica.query.projectedIndex()
        let again = try await Self.run(fixture, into: replica)
        #expect(try replica.query.projectedIndex() == written, "no event: \(again.problems)")
        #expect(try replica.query.expense(id: rent)?.repeat == "none")
        #expect(try replica.query.setting("app.theme") == "\"light\"")
    }

    @Test func twoDevicesImportingTheStoreConvergeToOneCopy() async throws {
        let fixture = try Fixture()
        let folder = TemporaryDirectory("kit")
        for device in ["a", "b"] {
            let replica = try await Replica.open(at: folder.file(device), actor: "minji")
            _ = try await Self.run(fixture, into: replica)
            await replica.releaseWriter()
        }
        let a = try Ledger(directory: try DataDirectory(path: folder.file("a")))
        let b = try Ledger(directory: try DataDirectory(path: folder.file("b")))
        _ = try await a.sync(with: LedgerTransport(b))
        _ = try await b.sync(with: LedgerTransport(a))
        for ledger in [a, b] {
            #expect(try ledger.views.expenses(ExpenseQuery([])).rows.count == 3)
            #expect(try ledger.views.todos().count == 1)
            #expect(try ledger.views.categoryTree().map(\.category.name).sorted() == ["Food", "Home", "Restaurant"])
        }
        // One copy, property by property: the same rows, repeats, attachments and settings.
        #expect(try a.views.expenses(ExpenseQuery([])).rows == b.views.expenses(ExpenseQuery([])).rows)
        #expect(try a.views.todos() == b.views.todos())
        #expect(try a.views.settings().filter { $0.key.hasPrefix("app.") } == b.views.settings().filter { $0.key.hasPrefix("app.") })
        #expect(try a.views.settings().filter { $0.key.hasPrefix("app.") }.count == 2)
        a.close()
        b.close()
    }

    @Test func whatIsNotACoreDataStoreIsRefusedAndWritesNothing() async throws {
        let folder = TemporaryDirectory("kit")
        let replica = try await Replica.open(at: folder.file("ledger"), actor: "minji")
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: folder.file("junk.sqlite")))
        await #expect(throws: CoreDataStoreError.self) { try await replica.importCoreData(store: folder.file("junk.sqlite")) }
        await #expect(throws: CoreDataStoreError.self) { try await replica.importCoreData(store: folder.file("missing.sqlite")) }
        let plain = try CoreDataStoreBuilder(entities: [])
        try plain.execute("DROP TABLE Z_METADATA")
        try plain.close()
        await #expect(throws: CoreDataStoreError.self) { try await replica.importCoreData(store: plain.storePath) }
        #expect(try replica.query.projectedIndex() == 0)
    }
}

/// `tally import coredata`: the same import from the command line, and its refusals.
@Suite struct CoreDataImportCommandTests {
    @Test func theCommandImportsOnceAndRefusesWhatIsNotAStore() throws {
        let fixture = try CoreDataImportTests.Fixture()
        let folder = TemporaryDirectory("cli")
        let data = folder.file("data")
        #expect(try TallyBinary.run(["init", "--name", "laptop", "--data-dir", data]).status == 0)
        let arguments = [
            "import", "coredata", fixture.store.storePath, "--files", fixture.files.path, "--settings", fixture.settings, "--currency", "USD", "--data-dir",
            data,
        ]
        let first = try TallyBinary.run(arguments + ["--json"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains(#""todosCreated":1"#) && first.stdout.contains(#""settingsSet":2"#), "\(first.stdout)")
        let second = try TallyBinary.run(arguments)
        #expect(second.status == 0 && second.stdout.contains("To-dos: 0 created, 1 already here"), "\(second.stdout)")

        try Data("SQLite format 3\u{0}garbage".utf8).write(to: URL(fileURLWithPath: folder.file("junk.sqlite")))
        func logFiles() throws -> [String: Int] {
            try Dictionary(
                uniqueKeysWithValues: FileManager.default.contentsOfDirectory(atPath: data + "/log").map { name in
                    (name, try FileManager.default.attributesOfItem(atPath: data + "/log/" + name)[.size] as? Int ?? -1)
                })
        }
        let log = try logFiles()
        for bad in [folder.file("junk.sqlite"), folder.file("missing.sqlite")] {
            let refused = try TallyBinary.run(["import", "coredata", bad, "--data-dir", data])
            #expect(refused.status != 0 && refused.stderr.contains(bad), "\(refused.stderr)")
        }
        let badMapping = try TallyBinary.run(["import", "coredata", fixture.store.storePath, "--mapping", folder.file("junk.sqlite"), "--data-dir", data])
        #expect(badMapping.status != 0 && !badMapping.stderr.isEmpty)
        #expect(try logFiles() == log, "a refused import writes nothing")
    }
}
