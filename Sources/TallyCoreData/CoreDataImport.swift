import Crypto
import Foundation
import TallyCore
import TallyLedger
import TallyLog

/// A Core Data store (`CoreDataStore`) imported into a ledger, as `tally import coredata` and
/// TallyKit's `importCoreData` do it (docs/IMPORT.md, "Core Data"). Every id is derived from the
/// store's own keys, so importing the same store again changes nothing, and two devices that
/// import it write the same entities, which merge into one copy.
///
/// - Expenses go through the statement import (`Ledger.importStatement`): one durable batch,
///   each row once, its category path (`category` → `subCategory`) made as a category tree
///   with the sub-category's icon. What a statement row cannot say — the repeat, the image —
///   is set after, only where the expense does not already say it.
/// - To-dos are created once each; the stored percentage becomes that share of checks.
/// - Settings (a key-value-store export) are set where they differ, under `app.<key>`.
public enum CoreDataImport {
    /// What an import did (or, in a dry run, would do).
    public struct Report: Sendable {
        public var expenses: ImportReport
        public var todosCreated = 0
        public var todosHeld = 0
        public var expensesCompleted = 0
        public var attachmentsStored = 0
        public var settingsSet = 0
        public var problems: [String]

        public var json: JSONText {
            .object([
                ("expenses", expenses.json), ("todosCreated", .int(Int64(todosCreated))), ("todosHeld", .int(Int64(todosHeld))),
                ("expensesCompleted", .int(Int64(expensesCompleted))), ("attachmentsStored", .int(Int64(attachmentsStored))),
                ("settingsSet", .int(Int64(settingsSet))), ("problems", .array(problems.prefix(1_000).map { .string($0) })),
            ])
        }
    }

    /// Imports what `store` holds (and, with `settingsFile`, a key-value-store export) into
    /// `ledger` as `actor`; amounts are in `currency` (default: the ledger's default currency)
    /// and dates in `timeZone`.
    public static func run(
        _ store: CoreDataStore, settingsFile: String? = nil, currency: String? = nil, timeZone: TimeZone = .current,
        into ledger: Ledger, actor: String, dryRun: Bool = false
    ) async throws -> Report {
        let contents = try store.read()
        let settings = try settingsFile.map { try KeyValueExport.readSettings(plistFile: $0) } ?? []
        let currency = try (currency ?? ledger.defaultCurrency()).uppercased()
        guard let digits = Currency.minorUnitDigits[currency] else { throw ValidationError(field: "currency", "\(currency) is not an ISO 4217 code") }
        var problems = contents.problems
        var rows: [StatementRow] = []
        var extras: [String: (repeat: String?, image: CoreDataImage?)] = [:]
        for (number, expense) in contents.expenses.enumerated() {
            guard let (amount, isIncome) = minorUnits(expense.amount, digits: digits) else {
                problems.append("expense \(expense.sourceKey): amount \(expense.amount.prefix(40)) is not an amount Tally can hold")
                continue
            }
            let key = "coredata\u{0}" + expense.sourceKey
            let path = [expense.category, expense.subCategory].compactMap { $0.flatMap(nonEmpty) }
            rows.append(
                StatementRow(
                    sheet: "", row: number + 1, date: DateTime(expense.date, in: timeZone), amount: amount, kind: isIncome ? "income" : "expense",
                    isRefund: false, currency: currency, payee: expense.title.flatMap(nonEmpty), memo: expense.memo.flatMap(nonEmpty),
                    reference: nil, categoryPath: path.isEmpty ? nil : path, payment: expense.payment.flatMap(nonEmpty),
                    tags: expense.tags.compactMap(nonEmpty), importKey: key))
            extras[key] = (repeatValue(expense, problems: &problems), expense.image)
        }
        let statement = StatementContents(rows: rows, skipped: [], bad: [], layouts: [("", "coredata")], encoding: nil)
        let digest = try storeDigest(store.path)
        var report = Report(
            expenses: try await ledger.importStatement(
                statement, fileName: (store.path as NSString).lastPathComponent, format: "coredata", digest: digest, dryRun: dryRun, skipBadRows: true,
                actor: actor),
            problems: problems)
        guard !dryRun else { return report }
        try await completeExpenses(report.expenses, extras: extras, in: ledger, actor: actor, report: &report)
        try await setIcons(contents.expenses, in: ledger, actor: actor)
        try await importTodos(contents.todos, timeZone: timeZone, into: ledger, actor: actor, report: &report)
        try await importSettings(settings, into: ledger, actor: actor, report: &report)
        return report
    }

    /// Each setting under `app.<key>`, set only where the ledger has none of that key yet (a
    /// person's later change is theirs; an app that imports at every launch must not undo it).
    /// Two keys that come to one Tally key are reported, the first one kept.
    static func importSettings(_ settings: [(key: String, value: String)], into ledger: Ledger, actor: String, report: inout Report) async throws {
        var taken: [String: String] = [:]
        for (key, value) in settings {
            guard let tallyKey = settingKey(key) else {
                report.problems.append("setting \(key.prefix(80)): not a usable key")
                continue
            }
            if let first = taken[tallyKey] {
                report.problems.append("setting \(key.prefix(80)): becomes \(tallyKey), as \(first.prefix(80)) does; left out")
                continue
            }
            taken[tallyKey] = key
            guard try ledger.views.setting(tallyKey) == nil else { continue }
            _ = try await ledger.setSetting(tallyKey, json: value, isLocal: false, actor: actor)
            report.settingsSet += 1
        }
    }

    /// Sets what a statement row cannot carry — the repeat and the image — on each expense the
    /// import made, once: a second import finds nothing to do, and a person's later change (a
    /// repeat stopped, a photo removed) is not undone by the next import.
    static func completeExpenses(
        _ imported: ImportReport, extras: [String: (repeat: String?, image: CoreDataImage?)], in ledger: Ledger, actor: String, report: inout Report
    ) async throws {
        // The expenses this import created, and those an earlier one created and left as it
        // made them (one event: a crash came between its batch and this step). An expense
        // anyone changed since is theirs: a repeat stopped or a photo removed stays so.
        let untouched = try imported.duplicates.filter { try ledger.views.audit(.uuid($0.id)).events.count == 1 }
        for (row, id) in imported.created + untouched {
            guard let extra = extras[row.importKey], let expense = try ledger.views.expense(id: id) else { continue }
            var properties = PropertyMap()
            if let wanted = extra.repeat, wanted != expense.repeat { properties[.repeat] = .string(wanted) }
            if let image = extra.image, expense.attachments.isEmpty {
                do {
                    properties[.attachments] = .strings([try storeImage(image, in: ledger)])
                    report.attachmentsStored += 1
                } catch {
                    report.problems.append("expense \(row.importKey.dropFirst(9)): its image was not stored (\(error))")
                }
            }
            guard !properties.isEmpty else { continue }
            _ = try await ledger.update(.expense, id: id, properties, actor: actor)
            report.expensesCompleted += 1
        }
    }

    /// The sub-categories' icons, on categories that have none yet.
    static func setIcons(_ expenses: [CoreDataExpense], in ledger: Ledger, actor: String) async throws {
        var icons: [[String]: String] = [:]
        for expense in expenses {
            guard let parent = expense.category.flatMap(nonEmpty), let child = expense.subCategory.flatMap(nonEmpty),
                let icon = expense.subCategoryIcon.flatMap(nonEmpty)
            else { continue }
            icons[[parent, child]] = icons[[parent, child]] ?? icon
        }
        guard !icons.isEmpty else { return }
        let tree = try ledger.views.categoryTree().map(\.category)
        for (path, icon) in icons.sorted(by: { $0.key.joined() < $1.key.joined() }) {
            guard let parent = tree.first(where: { $0.name == path[0] && $0.parentId == nil }),
                let child = tree.first(where: { $0.name == path[1] && $0.parentId == parent.id }), child.icon == nil, let id = UUID(uuidString: child.id)
            else { continue }
            _ = try await ledger.update(.category, id: id, [.icon: .string(String(icon.prefix(Limits.maxShortTextLength)))], actor: actor)
        }
    }

    /// Each to-do once (its id derived from the store's key for it).
    static func importTodos(_ todos: [CoreDataTodo], timeZone: TimeZone, into ledger: Ledger, actor: String, report: inout Report) async throws {
        for todo in todos {
            let id = NameBasedUUID.of("tally-coredata-todo\u{0}" + todo.sourceKey)
            if try ledger.views.todo(id: id) != nil {
                report.todosHeld += 1
                continue
            }
            var properties: PropertyMap = [
                .title: .string(todo.title), .isChallenge: .bool(todo.isChallenge ?? false), .isCompleted: .bool(todo.completed ?? false),
                .checks: .bools(checks(todo, timeZone: timeZone)),
            ]
            if let memo = todo.memo.flatMap(nonEmpty) { properties[.memo] = .string(memo) }
            if let start = todo.startDate { properties[.startDate] = .dateTime(DateTime(start, in: timeZone)) }
            if let end = todo.endDate { properties[.endDate] = .dateTime(DateTime(end, in: timeZone)) }
            do {
                _ = try await ledger.create(.todo, id: id, properties, actor: actor)
                report.todosCreated += 1
            } catch let refused as ValidationError {
                report.problems.append("todo \(todo.sourceKey): \(refused)")
            }
        }
    }

    /// The checks a stored percentage stands for: one per day from start to end (one in all
    /// without both dates), the first `percentage` share of them checked. The store keeps the
    /// share, not which days: the days checked are the first ones.
    static func checks(_ todo: CoreDataTodo, timeZone: TimeZone) -> [Bool] {
        var days = 1
        if let start = todo.startDate, let end = todo.endDate, end >= start {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            let span = calendar.dateComponents([.day], from: calendar.startOfDay(for: start), to: calendar.startOfDay(for: end)).day ?? 0
            days = min(max(span + 1, 1), Limits.maxChecks)
        }
        let stored = todo.percentage ?? ((todo.completed ?? false) ? 1 : 0)
        guard stored.isFinite else { return Array(repeating: false, count: days) }
        let share = min(max(stored > 1 ? stored / 100 : stored, 0), 1)
        let checked = Int((share * Double(days)).rounded())
        return Array(repeating: true, count: checked) + Array(repeating: false, count: days - checked)
    }

    /// Stores an image as an attachment; its digest.
    static func storeImage(_ image: CoreDataImage, in ledger: Ledger) throws -> String {
        let data: Data
        switch image {
        case .bytes(let bytes): data = bytes
        case .file(let path):
            guard let bytes = FileManager.default.contents(atPath: path) else { throw ValidationError(field: "image", "\(path) cannot be read") }
            data = bytes
        }
        guard AttachmentType.sniff(data.prefix(32)) != nil else { throw ValidationError(field: "image", "not a JPEG, PNG, HEIC, WebP or PDF file") }
        return try BlobStore(directory: ledger.directory).store(data, limit: 25 << 20).digest
    }

    /// Decimal text ("12000", "-3.5", "0.30000000000000004") as whole minor units, rounded to
    /// the currency's (an app that kept amounts as a `Double` stored 0.1 + 0.2 as the last), and
    /// whether it was negative (an income); nil when it is not plain decimal text or does not fit.
    static func minorUnits(_ text: String, digits: Int) -> (amount: Int64, isIncome: Bool)? {
        var rest = Substring(text)
        let negative = rest.first == "-"
        if negative || rest.first == "+" { rest = rest.dropFirst() }
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].count <= 19, parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            var scaled = Decimal(string: String(rest), locale: Locale(identifier: "en_US_POSIX"))
        else { return nil }
        scaled *= Decimal(sign: .plus, exponent: digits, significand: 1)
        var rounded = Decimal()
        NSDecimalRound(&rounded, &scaled, 0, .plain)
        guard let amount = Int64(NSDecimalNumber(decimal: rounded).stringValue), amount <= Limits.maxAmount else { return nil }
        return (amount, negative && amount > 0)
    }

    /// The expense's repeat, from `isRepeated` and the app's words for the cycle.
    static func repeatValue(_ expense: CoreDataExpense, problems: inout [String]) -> String? {
        guard expense.isRepeated == true else { return expense.isRepeated == false ? "none" : nil }
        let cycle = (expense.repeatCycle ?? "").lowercased().trimmingCharacters(in: .whitespaces)
        let words: [String: String] = [
            "daily": "daily", "day": "daily", "매일": "daily", "weekly": "weekly", "week": "weekly", "매주": "weekly",
            "monthly": "monthly", "month": "monthly", "매월": "monthly", "매달": "monthly", "yearly": "yearly", "year": "yearly",
            "annually": "yearly", "매년": "yearly",
        ]
        if let value = words[cycle] { return value }
        problems.append("expense \(expense.sourceKey): repeat cycle '\(cycle.prefix(40))' is not daily, weekly, monthly or yearly; left as none")
        return "none"
    }

    /// `app.<key>` with what a setting key cannot hold replaced by `_`; nil if nothing usable is left.
    static func settingKey(_ key: String) -> String? {
        let cleaned = String(
            key.unicodeScalars.map { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "." || $0 == "_") ? Character($0) : "_" })
        let candidate = "app." + cleaned
        return (try? EntitySchema.validateSettingKey(candidate)).map { candidate }
    }

    /// The store file's SHA-256, naming the import's record.
    static func storeDigest(_ path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ValidationError(field: "store", "\(path) cannot be read") }
        defer { try? handle.close() }
        var hash = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hash.update(data: chunk) }
        return Hex.lowercase(Array(hash.finalize()))
    }

    static func nonEmpty(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }
}

extension DateTime {
    /// A `Date` of the store as the log stores it (`DateTime(date:timeZone:)`); the reader
    /// already refused dates that are no real moment, so the fallback is never taken.
    init(_ date: Date, in timeZone: TimeZone) {
        self = DateTime(date: date, timeZone: timeZone) ?? DateTime(epochMillis: 0, offsetMinutes: 0)
    }
}
