import Foundation
import TallyCore

extension CoreDataMapping {
    /// Reads a mapping from a JSON file shaped like the encoded `CoreDataMapping`:
    ///
    /// ```json
    /// {"expense": {"entity": "Spending", "title": "payee", "amount": "value", "date": "when"},
    ///  "todo": null}
    /// ```
    ///
    /// Keys left out, and keys set to `null`, are "not in this model". Refused, naming the key:
    /// an unknown key (a typo must not silently drop a field), a required key missing, a value
    /// that is not an attribute name, invalid JSON (duplicate keys included), a file over 1 MiB.
    public init(jsonFile path: String) throws {
        let bytes = try BoundedFile.read(path, limit: CoreDataLimits.standard.maxMappingBytes, what: "mapping file")
        let value: JSONValue
        do {
            value = try StrictJSON.parse(Array(bytes))
        } catch {
            throw CoreDataStoreError(.invalidMapping, "the mapping file \(path) is not valid JSON", cause: "\(error)")
        }
        let top = try MappingObject(value, place: path, allowed: ["expense", "todo"])
        guard let expenseValue = top.value("expense") else {
            throw CoreDataStoreError(.invalidMapping, "\(path) has no \"expense\" object; it is required")
        }
        let expense = try MappingObject(
            expenseValue, place: "\(path): expense",
            allowed: [
                "entity", "id", "title", "amount", "date", "category", "subCategory", "subCategoryIcon",
                "payment", "tags", "memo", "isRepeated", "repeatCycle", "imagePath", "imageData",
            ])
        let expenseMapping = Expense(
            entity: try expense.required("entity"), id: try expense.name("id"), title: try expense.name("title"),
            amount: try expense.required("amount"), date: try expense.required("date"),
            category: try expense.name("category"), subCategory: try expense.name("subCategory"),
            subCategoryIcon: try expense.name("subCategoryIcon"), payment: try expense.name("payment"),
            tags: try expense.name("tags"), memo: try expense.name("memo"), isRepeated: try expense.name("isRepeated"),
            repeatCycle: try expense.name("repeatCycle"), imagePath: try expense.name("imagePath"),
            imageData: try expense.name("imageData"))
        var todoMapping: Todo?
        if let todoValue = top.value("todo"), todoValue != .null {
            let todo = try MappingObject(
                todoValue, place: "\(path): todo",
                allowed: ["entity", "id", "title", "memo", "startDate", "endDate", "completed", "isChallenge", "percentage"])
            todoMapping = Todo(
                entity: try todo.required("entity"), id: try todo.name("id"), title: try todo.required("title"),
                memo: try todo.name("memo"), startDate: try todo.name("startDate"), endDate: try todo.name("endDate"),
                completed: try todo.name("completed"), isChallenge: try todo.name("isChallenge"),
                percentage: try todo.name("percentage"))
        }
        self.init(expense: expenseMapping, todo: todoMapping)
        try validate()
    }

    /// Checks every entity and attribute name is an identifier as Xcode's model editor allows
    /// (letters, digits, `_`, not starting with a digit; at most 128 characters).
    func validate() throws {
        var names: [(String, String)] = [("expense.entity", expense.entity), ("expense.amount", expense.amount), ("expense.date", expense.date)]
        let optional: [(String, String?)] = [
            ("expense.id", expense.id), ("expense.title", expense.title), ("expense.category", expense.category),
            ("expense.subCategory", expense.subCategory), ("expense.subCategoryIcon", expense.subCategoryIcon),
            ("expense.payment", expense.payment), ("expense.tags", expense.tags), ("expense.memo", expense.memo),
            ("expense.isRepeated", expense.isRepeated), ("expense.repeatCycle", expense.repeatCycle),
            ("expense.imagePath", expense.imagePath), ("expense.imageData", expense.imageData),
            ("todo.id", todo?.id), ("todo.memo", todo?.memo), ("todo.startDate", todo?.startDate),
            ("todo.endDate", todo?.endDate), ("todo.completed", todo?.completed), ("todo.isChallenge", todo?.isChallenge),
            ("todo.percentage", todo?.percentage),
        ]
        for (field, name) in optional { if let name { names.append((field, name)) } }
        if let todo { names += [("todo.entity", todo.entity), ("todo.title", todo.title)] }
        for (field, name) in names where !Self.isIdentifier(name) {
            throw CoreDataStoreError(
                .invalidMapping, "mapping \(field) is \(JSONText.quote(name)): not an entity or attribute name (letters, digits and _, at most 128)")
        }
    }

    /// Whether `name` is an identifier: ASCII letters, digits and `_`, not starting with a digit.
    static func isIdentifier(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 128, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
    }
}

/// One JSON object of a mapping file, checked for unknown keys when made.
private struct MappingObject {
    let fields: [(String, JSONValue)]
    let place: String

    init(_ value: JSONValue, place: String, allowed: [String]) throws {
        guard case .object(let fields) = value else {
            throw CoreDataStoreError(.invalidMapping, "\(place) must be a JSON object")
        }
        let unknown = fields.map(\.0).filter { !allowed.contains($0) }
        guard unknown.isEmpty else {
            throw CoreDataStoreError(
                .invalidMapping,
                "\(place) has unknown key(s) \(unknown.map(JSONText.quote).joined(separator: ", ")); the keys are \(allowed.joined(separator: ", "))")
        }
        self.fields = fields
        self.place = place
    }

    func value(_ key: String) -> JSONValue? { fields.first { $0.0 == key }?.1 }

    /// The attribute name under `key`; nil when absent or `null`.
    func name(_ key: String) throws -> String? {
        switch value(key) {
        case .none, .some(.null): return nil
        case .some(.string(let text)): return text
        default: throw CoreDataStoreError(.invalidMapping, "\(place): \"\(key)\" must be a name (a string) or null")
        }
    }

    /// The attribute name under `key`, which must be there.
    func required(_ key: String) throws -> String {
        guard let name = try name(key) else {
            throw CoreDataStoreError(.invalidMapping, "\(place): \"\(key)\" is required")
        }
        return name
    }
}
