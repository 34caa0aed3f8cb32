import Foundation
import GRDB

extension CoreDataStore {
    /// The todo rows (none when the mapping has no todo entity); a row without a readable title
    /// is skipped, with the reason in `problems`, and a field that cannot be read is left empty,
    /// noted there too.
    func readTodos(_ db: Database, problems: inout [String]) throws -> [CoreDataTodo] {
        guard let todoEntity, let fields = mapping.todo else { return [] }
        let rows = try todoEntity.fetch(db, maxRows: limits.maxRowsPerEntity)
        var keys = SourceKeys(storeUUID: storeUUID)
        var todos: [CoreDataTodo] = []
        todos.reserveCapacity(rows.count)
        for (ordinal, row) in rows.enumerated() {
            var problem: String?
            guard var reader = RowReader(row, entity: fields.entity, ordinal: ordinal, problem: &problem) else {
                if let problem { problems.append(problem) }
                continue
            }
            do {
                let todo = try readTodo(&reader, fields: fields, entity: todoEntity, keys: &keys)
                todos.append(todo)
                problems += reader.problems
            } catch {
                problems.append("\(error)")
            }
        }
        return todos
    }

    private func readTodo(
        _ reader: inout RowReader, fields: CoreDataMapping.Todo, entity: MappedEntity, keys: inout SourceKeys
    ) throws -> CoreDataTodo {
        func name(_ field: TodoField) -> String { field.attribute(in: fields) ?? "\(field)" }
        let title = try reader.required(name(.title), TodoField.title.rawValue) { try $0.text() }
        let id = reader.optional(name(.id), TodoField.id.rawValue) { try $0.uuid() }
        let memo = reader.optional(name(.memo), TodoField.memo.rawValue) { try $0.text() }
        let startDate = reader.optional(name(.startDate), TodoField.startDate.rawValue) { try $0.date() }
        let endDate = reader.optional(name(.endDate), TodoField.endDate.rawValue) { try $0.date() }
        let completed = reader.optional(name(.completed), TodoField.completed.rawValue) { try $0.bool() }
        let isChallenge = reader.optional(name(.isChallenge), TodoField.isChallenge.rawValue) { try $0.bool() }
        let percentage = reader.optional(name(.percentage), TodoField.percentage.rawValue) { try $0.real() }
        var keyProblems: [String] = []
        let key = keys.key(
            id: id, entity: entityName(of: reader.row, in: entity, mapped: fields.entity),
            primaryKey: reader.primaryKey, label: reader.label, problems: &keyProblems)
        for line in keyProblems { reader.add(line) }
        return CoreDataTodo(
            sourceKey: key, primaryKey: reader.primaryKey, id: id, title: title, memo: memo, startDate: startDate,
            endDate: endDate, completed: completed, isChallenge: isChallenge, percentage: percentage)
    }
}
