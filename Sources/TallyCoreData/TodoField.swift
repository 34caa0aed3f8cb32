import Foundation

/// The todo fields, in the order they are fetched (a row's `fields` index is `rawValue`).
enum TodoField: Int, CaseIterable {
    case id, title, memo, startDate, endDate, completed, isChallenge, percentage

    /// The attribute `mapping` gives this field, if any.
    func attribute(in mapping: CoreDataMapping.Todo) -> String? {
        switch self {
        case .id: mapping.id
        case .title: mapping.title
        case .memo: mapping.memo
        case .startDate: mapping.startDate
        case .endDate: mapping.endDate
        case .completed: mapping.completed
        case .isChallenge: mapping.isChallenge
        case .percentage: mapping.percentage
        }
    }

    /// The largest value fetched: every todo field is text-sized.
    func limit(_ limits: CoreDataLimits) -> Int64 { limits.maxTextLength }
}
