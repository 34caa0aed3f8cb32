import Foundation

/// Which Core Data entity holds the expenses and which the todos, and which attribute feeds
/// each field. Values are attribute names as the app's model spells them (`subCategory`); the
/// reader finds the column (`ZSUBCATEGORY`). A value that starts with an uppercase `Z` is taken
/// as a column name as it is (`ZTITLE2`): Core Data attribute names start with a lowercase
/// letter, so the two cannot be confused. `nil` means "not in this model".
///
/// The JSON form (`init(jsonFile:)`, and what `JSONEncoder` writes) uses these property names as
/// keys. See docs/IMPORT-COREDATA-DRAFT.md.
public struct CoreDataMapping: Codable, Sendable, Equatable {
    /// Where the expenses are.
    public var expense: Expense
    /// Where the todos are; `nil` when the app has none (no todos are read).
    public var todo: Todo?

    /// A mapping of both entities.
    public init(expense: Expense, todo: Todo?) {
        self.expense = expense
        self.todo = todo
    }

    /// The expense entity and the attribute behind each field. `entity`, `amount` and `date`
    /// are required; a row without an amount or a date is skipped as a problem.
    public struct Expense: Codable, Sendable, Equatable {
        /// The entity name as in the model (and `Z_PRIMARYKEY.Z_NAME`), e.g. `ExpenseEntity`.
        public var entity: String
        /// A UUID attribute (16-byte BLOB, or text) that names the row across devices. May be
        /// absent from the store: rows are then named by store, entity and `Z_PK`.
        public var id: String?
        /// The title or payee (String).
        public var title: String?
        /// The amount (Double, Float, Decimal or an integer type).
        public var amount: String
        /// When it was spent (Date).
        public var date: String
        /// Category (String).
        public var category: String?
        /// Sub-category (String).
        public var subCategory: String?
        /// The sub-category's icon name (String).
        public var subCategoryIcon: String?
        /// Payment method (String).
        public var payment: String?
        /// Tags: a Transformable array of strings, or a comma-separated String.
        public var tags: String?
        /// Memo (String).
        public var memo: String?
        /// Whether the expense repeats (Boolean).
        public var isRepeated: String?
        /// How it repeats, as the app wrote it (String).
        public var repeatCycle: String?
        /// A file name or path the app saved an image under (String), found in the caller's
        /// files folder by its last path component.
        public var imagePath: String?
        /// Image bytes (Binary Data, external storage allowed).
        public var imageData: String?

        /// A mapping of each field; see the properties.
        public init(
            entity: String, id: String? = nil, title: String? = nil, amount: String, date: String,
            category: String? = nil, subCategory: String? = nil, subCategoryIcon: String? = nil,
            payment: String? = nil, tags: String? = nil, memo: String? = nil, isRepeated: String? = nil,
            repeatCycle: String? = nil, imagePath: String? = nil, imageData: String? = nil
        ) {
            self.entity = entity
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
            self.imagePath = imagePath
            self.imageData = imageData
        }
    }

    /// The todo entity and the attribute behind each field. `entity` and `title` are required;
    /// a row without a title is skipped as a problem.
    public struct Todo: Codable, Sendable, Equatable {
        /// The entity name, e.g. `TodoModel`.
        public var entity: String
        /// A UUID attribute; may be absent from the store (see `Expense.id`).
        public var id: String?
        /// The title (String).
        public var title: String
        /// Memo (String).
        public var memo: String?
        /// Start (Date).
        public var startDate: String?
        /// End (Date).
        public var endDate: String?
        /// Done (Boolean).
        public var completed: String?
        /// Whether it is a challenge (Boolean).
        public var isChallenge: String?
        /// Progress (Double), kept as stored: 0…1 or 0…100 depending on the app.
        public var percentage: String?

        /// A mapping of each field; see the properties.
        public init(
            entity: String, id: String? = nil, title: String, memo: String? = nil, startDate: String? = nil,
            endDate: String? = nil, completed: String? = nil, isChallenge: String? = nil, percentage: String? = nil
        ) {
            self.entity = entity
            self.id = id
            self.title = title
            self.memo = memo
            self.startDate = startDate
            self.endDate = endDate
            self.completed = completed
            self.isChallenge = isChallenge
            self.percentage = percentage
        }
    }

    /// The household app's model: `ExpenseEntity` and `TodoModel`.
    public static let household = CoreDataMapping(
        expense: Expense(
            entity: "ExpenseEntity", id: "id", title: "transaction", amount: "amount", date: "date",
            category: "category", subCategory: "subCategory", subCategoryIcon: "subCategoryIcon",
            payment: "payment", tags: "tags", memo: "memo", isRepeated: "isRepeated",
            repeatCycle: "repeatCycle", imagePath: "imagePath", imageData: "imageFromCloud"),
        todo: Todo(
            entity: "TodoModel", id: "id", title: "title", memo: "memo", startDate: "startDate",
            endDate: "endDate", completed: "completed", isChallenge: "isChallenge", percentage: "percentage"))
}
