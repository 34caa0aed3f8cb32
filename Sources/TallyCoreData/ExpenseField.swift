import Foundation

/// The expense fields, in the order they are fetched (a row's `fields` index is `rawValue`).
enum ExpenseField: Int, CaseIterable {
    case id, title, amount, date, category, subCategory, subCategoryIcon, payment, tags, memo, isRepeated, repeatCycle,
        imagePath, imageData

    /// The attribute `mapping` gives this field, if any.
    func attribute(in mapping: CoreDataMapping.Expense) -> String? {
        switch self {
        case .id: mapping.id
        case .title: mapping.title
        case .amount: mapping.amount
        case .date: mapping.date
        case .category: mapping.category
        case .subCategory: mapping.subCategory
        case .subCategoryIcon: mapping.subCategoryIcon
        case .payment: mapping.payment
        case .tags: mapping.tags
        case .memo: mapping.memo
        case .isRepeated: mapping.isRepeated
        case .repeatCycle: mapping.repeatCycle
        case .imagePath: mapping.imagePath
        case .imageData: mapping.imageData
        }
    }

    /// The largest value fetched: binary fields up to the blob bound, the rest the text bound.
    func limit(_ limits: CoreDataLimits) -> Int64 {
        self == .tags || self == .imageData ? limits.maxBlobBytes : limits.maxTextLength
    }
}
