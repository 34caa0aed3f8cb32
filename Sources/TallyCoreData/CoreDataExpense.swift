import Foundation

/// One expense row of a Core Data store, with the values as the store held them.
public struct CoreDataExpense: Sendable, Equatable {
    /// Names the row across imports and devices: the `id` attribute's UUID (uppercase text) when
    /// it is there, valid, and not already taken by an earlier row; otherwise
    /// `<store UUID>/<entity>/<Z_PK>`.
    public var sourceKey: String
    /// The row's `Z_PK`.
    public var primaryKey: Int64
    /// The `id` attribute, when present and valid.
    public var id: UUID?
    /// The title or payee.
    public var title: String?
    /// The amount as decimal text, as stored (see `DecimalText`): "12.5", "-3", "15000".
    public var amount: String
    /// When it was spent.
    public var date: Date
    /// Category.
    public var category: String?
    /// Sub-category.
    public var subCategory: String?
    /// The sub-category's icon name.
    public var subCategoryIcon: String?
    /// Payment method.
    public var payment: String?
    /// Tags, in stored order; empty when there are none.
    public var tags: [String]
    /// Memo.
    public var memo: String?
    /// Whether it repeats.
    public var isRepeated: Bool?
    /// How it repeats, as the app wrote it.
    public var repeatCycle: String?
    /// The image, from the row's image data, else from the image path.
    public var image: CoreDataImage?

    /// An expense; see the properties.
    public init(
        sourceKey: String, primaryKey: Int64, id: UUID?, title: String?, amount: String, date: Date,
        category: String?, subCategory: String?, subCategoryIcon: String?, payment: String?, tags: [String],
        memo: String?, isRepeated: Bool?, repeatCycle: String?, image: CoreDataImage?
    ) {
        self.sourceKey = sourceKey
        self.primaryKey = primaryKey
        self.id = id
        self.title = title
        self.amount = amount
        self.date = date
        self.category = category
        self.subCategory = subCategory
        self.subCategoryIcon = subCategoryIcon
        self.payment = payment
        self.tags = tags
        self.memo = memo
        self.isRepeated = isRepeated
        self.repeatCycle = repeatCycle
        self.image = image
    }
}
