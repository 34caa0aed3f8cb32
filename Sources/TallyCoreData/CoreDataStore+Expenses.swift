import Foundation
import GRDB

extension CoreDataStore {
    /// The expense rows; a row without a readable amount or date is skipped, with the reason in
    /// `problems`, and a field that cannot be read is left empty, noted there too.
    func readExpenses(_ db: Database, problems: inout [String]) throws -> [CoreDataExpense] {
        let rows = try expenseEntity.fetch(db, maxRows: limits.maxRowsPerEntity)
        var keys = SourceKeys(storeUUID: storeUUID)
        var expenses: [CoreDataExpense] = []
        expenses.reserveCapacity(rows.count)
        for (ordinal, row) in rows.enumerated() {
            var problem: String?
            guard var reader = RowReader(row, entity: mapping.expense.entity, ordinal: ordinal, problem: &problem) else {
                if let problem { problems.append(problem) }
                continue
            }
            do {
                let expense = try readExpense(&reader, keys: &keys)
                expenses.append(expense)
                problems += reader.problems
            } catch {
                // Only the reason for the skip: notes about the row's other fields are moot.
                problems.append("\(error)")
            }
        }
        return expenses
    }

    private func readExpense(_ reader: inout RowReader, keys: inout SourceKeys) throws -> CoreDataExpense {
        let fields = mapping.expense
        func name(_ field: ExpenseField) -> String { field.attribute(in: fields) ?? "\(field)" }
        let maxAmount = limits.maxAmountMagnitude
        let amount = try reader.required(name(.amount), ExpenseField.amount.rawValue) { try $0.amount(limit: maxAmount) }
        let date = try reader.required(name(.date), ExpenseField.date.rawValue) { try $0.date() }
        let id = reader.optional(name(.id), ExpenseField.id.rawValue) { try $0.uuid() }
        func text(_ field: ExpenseField) -> String? {
            reader.optional(name(field), field.rawValue) { try $0.text() }
        }
        let title = text(.title)
        let category = text(.category)
        let subCategory = text(.subCategory)
        let subCategoryIcon = text(.subCategoryIcon)
        let payment = text(.payment)
        let memo = text(.memo)
        let repeatCycle = text(.repeatCycle)
        let isRepeated = reader.optional(name(.isRepeated), ExpenseField.isRepeated.rawValue) { try $0.bool() }
        let tags = reader.optional(name(.tags), ExpenseField.tags.rawValue) { try readTags($0) } ?? []
        let image = readImage(&reader, imageData: name(.imageData), imagePath: name(.imagePath))
        var keyProblems: [String] = []
        let key = keys.key(
            id: id, entity: entityName(of: reader.row, in: expenseEntity, mapped: fields.entity),
            primaryKey: reader.primaryKey, label: reader.label, problems: &keyProblems)
        for line in keyProblems { reader.add(line) }
        return CoreDataExpense(
            sourceKey: key, primaryKey: reader.primaryKey, id: id, title: title, amount: amount, date: date,
            category: category, subCategory: subCategory, subCategoryIcon: subCategoryIcon, payment: payment,
            tags: tags, memo: memo, isRepeated: isRepeated, repeatCycle: repeatCycle, image: image)
    }

    /// Tags: a Transformable BLOB (a keyed archive of strings, possibly behind an external-storage
    /// marker), or a String attribute holding them comma-separated (or as a JSON array).
    func readTags(_ stored: StoredValue) throws -> [String]? {
        try stored.checkSize()
        let strings: [String]
        switch stored.value.storage {
        case .null:
            return nil
        case .string(let text):
            if text.hasPrefix("["), let array = try? ArchivedStrings.strings(from: Data(text.utf8)) {
                strings = array
            } else {
                strings = text.split(separator: ",").map { String($0) }
            }
        case .blob(let blob):
            let bytes: Data
            switch try ExternalBinary.parse(blob) {
            case .inline(let inline): bytes = inline
            case .external(let name): bytes = try external.read(named: name, limit: limits.maxBlobBytes)
            }
            do {
                strings = try ArchivedStrings.strings(from: bytes)
            } catch {
                throw FieldProblem("is \(stored.describe()) that is not an array of strings (\(error))")
            }
        default:
            throw FieldProblem("is \(stored.describe()), not tags")
        }
        return strings.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }

    /// The image: the image-data attribute's bytes or external file, else the file the
    /// image-path attribute names in the files folder. What cannot be found is noted.
    func readImage(_ reader: inout RowReader, imageData: String, imagePath: String) -> CoreDataImage? {
        if let blob = reader.optional(imageData, ExpenseField.imageData.rawValue, { try $0.blob() }) {
            do {
                switch try ExternalBinary.parse(blob) {
                case .inline(let bytes):
                    if !bytes.isEmpty { return .bytes(bytes) }
                case .external(let name):
                    let path = try external.file(named: name, limit: limits.maxBlobBytes)
                    return .file(path: path)
                }
            } catch {
                reader.note(imageData, error)
            }
        }
        if let stored = reader.optional(imagePath, ExpenseField.imagePath.rawValue, { try $0.text() }), !stored.isEmpty {
            do {
                let path = try ImagePath.resolve(stored, in: filesFolder, limit: limits.maxBlobBytes)
                return .file(path: path)
            } catch {
                reader.note(imagePath, error)
            }
        }
        return nil
    }

    /// The name of the entity a row belongs to (a sub-entity's own name), from its `Z_ENT`.
    func entityName(of row: MappedEntity.FetchedRow, in entity: MappedEntity, mapped: String) -> String {
        guard case .int64(let number) = row.entityNumber.storage, let name = entity.names[number] else { return mapped }
        return name
    }
}
