import TallyCore
import TallyImport

/// The OpenAPI 3.1 document served at `/openapi.yaml`, kept beside the routes it describes.
enum OpenAPIDocument {
    /// What `DateTime(iso8601:)` accepts: a real calendar date (leap years included), optionally
    /// a time with seconds, milliseconds and an offset (a bare date means local midnight).
    static let datePattern =
        "^((1[0-9]{3}|[2-8][0-9]{3}|9[0-8][0-9]{2})-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))|((1[0-9]|[2-8][0-9]|9[0-8])(0[48]|[2468][048]|[13579][26])|(1[26]|[2468][048]|[3579][26])00)-02-29)([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9]([.][0-9]{1,3})?)?(Z|z|[+-](0[0-9]|1[0-7]):?[0-5][0-9]|[+-]18:?00))?$"

    /// The currencies `Currency.isValid` accepts.
    static let currencies = Currency.minorUnitDigits.keys.sorted().joined(separator: ", ")

    static let expenseFields = writableFields(.expense)
    static let categoryFields = writableFields(.category)
    static let todoFields = writableFields(.todo)
    static let budgetFields = writableFields(.budget)
    static let ruleFields = writableFields(.rule)
    static let rateFields = writableFields(.rate)
    static let accountFields = writableFields(.account)
    static let transferFields = writableFields(.transfer)
    static let settlementFields = writableFields(.settlement)
    static let lineFields = writableFields(.line)
    static let recurringFields = writableFields(.recurring)
    static let todoAdded = [
        ("percentage", #"{type: number, description: "derived: checks done / checks × 100"}"#),
        (
            "streaks",
            #"{type: [object, "null"], properties: {current: {type: integer}, longest: {type: integer}, completionRate: {type: number}}, description: "a challenge's streaks as of the service's day; null for other to-dos"}"#
        ),
    ]

    static let yaml = """
        openapi: 3.1.0
        info:
          title: Tally
          version: "1"
          description: An event-sourced household ledger. Every write is a durable event; views are projections of the log.
        servers:
          - url: http://127.0.0.1:8080
        security:
          - bearer: []
        components:
          securitySchemes:
            bearer: {type: http, scheme: bearer}
          parameters:
            id: {name: id, in: path, required: true, schema: {type: string, format: uuid}}
            asOf: {name: asOf, in: query, description: "Answer as the views stood then on this replica: a log index, or a moment (local time of the service unless it ends in Z or an offset; a bare day is its end). The response's Tally-As-Of-Index header names the log index answered for; one past the views' is answered as now.", schema: {type: string, pattern: "^([0-9]{1,19}|([0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?(Z|[+-](0[0-9]|1[0-7]):[0-5][0-9])?)?)$"}}
            key: {name: key, in: path, required: true, schema: {type: string, maxLength: \(Limits.maxSettingKeyBytes), pattern: "^[A-Za-z][A-Za-z0-9._]*$"}}
          responses:
            Error:
              description: A client or server error.
              content:
                application/json:
                  schema: {$ref: "#/components/schemas/Error"}
          schemas:
            Error:
              type: object
              required: [error]
              properties:
                error:
                  type: object
                  required: [code, message]
                  properties: {code: {type: string}, message: {type: string}, field: {type: string, description: "The request field at fault, when there is one"}, origin: {type: string, format: uuid, description: "forked_chain: the origin whose chain the request forks"}}
            Expense:
              type: object
              properties:
        \(shownFields(.expense, added: categoryNames + missingAttachments))
            ExpenseCreate:
              type: object
              additionalProperties: false
              required: [\(createRequired(.expense))]
              properties:
                id: {type: string, format: uuid}
        \(expenseFields)
            ExpensePatch:
              type: object
              additionalProperties: false
              minProperties: 1
              properties:
        \(expenseFields)
            Category:
              type: object
              properties:
                id: {type: string, format: uuid}
                name: {type: string}
                parentId: {type: [string, "null"]}
                icon: {type: [string, "null"]}
                kind: {type: string, enum: [income, expense]}
                depth: {type: integer}
            CategoryCreate:
              type: object
              additionalProperties: false
              required: [\(createRequired(.category))]
              properties:
                id: {type: string, format: uuid}
        \(categoryFields)
            CategoryPatch:
              type: object
              additionalProperties: false
              minProperties: 1
              properties:
        \(categoryFields)
            Todo:
              type: object
              properties:
        \(shownFields(.todo, added: missingAttachments + todoAdded))
            Budget:
              type: object
              properties:
        \(shownFields(.budget, added: [("writtenForCategoryId", #"{type: string, format: uuid, description: "the category it was written for, when a merge made categoryId stand for it"}"#)]))
            TodoCreate:
              type: object
              additionalProperties: false
              required: [\(createRequired(.todo))]
              properties:
                id: {type: string, format: uuid}
        \(todoFields)
            TodoPatch:
              type: object
              additionalProperties: false
              minProperties: 1
              properties:
        \(todoFields)
            BudgetCreate:
              type: object
              additionalProperties: false
              required: [\(createRequired(.budget))]
              properties:
                id: {type: string, format: uuid}
        \(budgetFields)
            BudgetPatch:
              type: object
              additionalProperties: false
              minProperties: 1
              properties:
        \(budgetFields)
            Account:
              type: object
              properties:
        \(shownFields(.account, added: []))
            AccountCreate:
              type: object
              additionalProperties: false
              required: [\(createRequired(.account))]
              properties:
                id: {type: string, format: uuid}
        \(accountFields)
            AccountPatch:
              type: object
              additionalProperties: false
              minProperties: 1
              properties:
        \(accountFields)
            Transfer:
              type: object
              properties:
        \(shownFields(.transfer, added: []))
            TransferCreate:
              type: object
              additionalProperties: false
              required: [\(createRequired(.transfer))]
              properties:
                id: {type: string, format: uuid}
        \(transferFields)
            TransferPatch:
              type: object
              additionalProperties: false
              minProperties: 1
              properties:
        \(transferFields)
            Settlement:
              type: object
              properties:
        \(shownFields(.settlement, added: []))
            SettlementCreate:
              type: object
              additionalProperties: false
              required: [\(createRequired(.settlement))]
              properties:
                id: {type: string, format: uuid}
        \(settlementFields)
            SettlementPatch:
              type: object
              additionalProperties: false
              minProperties: 1
              properties:
        \(settlementFields)
            Line:
              type: object
              properties:
        \(shownFields(.line, added: []))
            LineCreate:
              type: object
              additionalProperties: false
              required: [\(createRequired(.line))]
              properties:
                id: {type: string, format: uuid}
        \(lineFields)
            LinePatch:
              type: object
              additionalProperties: false
              minProperties: 1
              properties:
        \(lineFields)
            SplitLines:
              type: object
              additionalProperties: false
              required: [lines]
              properties:
                lines:
                  type: array
                  maxItems: \(Limits.maxLinesPerExpense)
                  items:
                    type: object
                    additionalProperties: false
                    required: [amount]
                    properties:
                      id: {type: string, format: uuid, description: "an existing line of this expense, kept (changed where it differs); none: a new line"}
                      categoryId: {type: [string, "null"], format: uuid}
                      amount: {type: integer, minimum: 1, maximum: \(Limits.maxAmount)}
                      memo: {type: [string, "null"], maxLength: \(Limits.maxMemoLength)}
            SplitReceipt:
              type: object
              properties:
                expenseId: {type: string, format: uuid}
                kind: {type: string}
                amount: {type: integer}
                currency: {type: string}
                date: {type: string}
                payee: {type: [string, "null"]}
                categoryId: {type: [string, "null"]}
                assigned: {type: [integer, "null"], description: "what the lines add up to"}
                unassigned: {type: [integer, "null"], description: "amount less assigned: counted in the expense's own category"}
                needsAttention: {type: boolean, description: "the expense has lines and they do not add up to it (after merged edits)"}
                lines: {type: array, items: {$ref: "#/components/schemas/Line"}}
            RateCreate:
              type: object
              additionalProperties: false
              required: [\(createRequired(.rate))]
              properties:
                id: {type: string, format: uuid}
        \(rateFields)
            RatePatch:
              type: object
              additionalProperties: false
              minProperties: 1
              properties:
        \(rateFields)
            RuleCreate:
              type: object
              additionalProperties: false
              required: [\(createRequired(.rule))]
              properties:
                id: {type: string, format: uuid}
        \(ruleFields)
            RulePatch:
              type: object
              additionalProperties: false
              minProperties: 1
              properties:
        \(ruleFields)
            RecurringCreate:
              type: object
              additionalProperties: false
              required: [\(createRequired(.recurring))]
              properties:
                id: {type: string, format: uuid}
        \(recurringFields)
            RecurringPatch:
              type: object
              additionalProperties: false
              minProperties: 1
              properties:
        \(recurringFields)
            Setting:
              type: object
              properties: {key: {type: string}, value: {}, scope: {type: string, enum: [replicated, local]}}
        paths:
          /health:
            get:
              security: []
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The service is up.}}
          /metrics:
            get: {responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: Prometheus metrics., content: {text/plain: {}}}, "401": {$ref: "#/components/responses/Error"}}}
          /openapi.yaml:
            get: {responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: This document., content: {application/yaml: {}}}}}
          /v1/replication/vector:
            get: {responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "This replica's version vector (replicate scope)."}, "403": {$ref: "#/components/responses/Error"}}}
          /v1/replication/pull:
            post:
              requestBody: {required: true, content: {application/json: {schema: {type: object, required: [origins], properties: {origins: {type: object, propertyNames: {format: uuid}, additionalProperties: {type: integer, minimum: 0, maximum: 18446744073709551615}}}}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "The events the caller lacks: length-prefixed encoded events.", content: {application/octet-stream: {}}}}
          /v1/replication/push:
            post:
              description: "Events the service lacks, verified before anything is appended. With a token of scope replicate: any replica's, as they were signed. With a member's session (owner or member role, X-CSRF-Token): only that member's own events (actor member:NAME, or the ledger's recurrences); any other refuses its batch (422)."
              requestBody: {required: true, content: {application/octet-stream: {}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "{applied, alreadyHeld}"}, "409": {description: "forked_chain: the events hold another chain of an origin than this replica holds; the error's 'origin' names it (the sender may be a restored copy of that replica: docs/TALLYKIT.md)", content: {application/json: {schema: {$ref: "#/components/schemas/Error"}}}}, "422": {$ref: "#/components/responses/Error"}}
          /v1/replication/sync:
            post:
              requestBody: {required: true, content: {application/json: {schema: {type: object, required: [peer], additionalProperties: false, properties: {peer: {type: string, description: "a peer configured with 'tally peers add'; the service never syncs with a URL a client names"}}}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "{pulled, pushed, alreadyHeld, newConflicts, newMerges}"}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}, "502": {$ref: "#/components/responses/Error"}}
          /v1/expenses:
            get:
              parameters:
                - {$ref: "#/components/parameters/asOf"}
                - {name: month, in: query, schema: {type: string, pattern: "^([0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])$"}}
                - {name: from, in: query, schema: {type: string, pattern: "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])$"}}
                - {name: to, in: query, schema: {type: string, pattern: "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])$"}}
                - {name: category, in: query, schema: {type: string, format: uuid}}
                - {name: tag, in: query, schema: {type: string}}
                - {name: payee, in: query, schema: {type: string}}
                - {name: text, in: query, description: "Text the payee, memo or payment method contains (matched literally)", schema: {type: string, minLength: 1, maxLength: \(Limits.maxShortTextLength), pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]+$'}}
                - {name: kind, in: query, schema: {type: string, enum: [income, expense]}}
                - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: \(Limits.maxPageSize)}}
                - {name: cursor, in: query, schema: {type: string, pattern: "^-?[0-9]{1,18}_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"}}
              responses:
                default: {$ref: "#/components/responses/Error"}
                "200": {description: "Expenses, newest first: {items, nextCursor}."}
                "400": {$ref: "#/components/responses/Error"}
            post:
              parameters: [{name: Idempotency-Key, in: header, schema: {type: string}, description: "A retry with the same key returns the entity created the first time (200); while a request with the key is being answered, another gets 409 idempotency_key_in_use."}]
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/ExpenseCreate"}}}}
              responses:
                default: {$ref: "#/components/responses/Error"}
                "200": {description: Replayed (Idempotency-Key seen before), content: {application/json: {schema: {$ref: "#/components/schemas/Expense"}}}}
                "201": {description: Created (durable), content: {application/json: {schema: {$ref: "#/components/schemas/Expense"}}}}
                "400": {$ref: "#/components/responses/Error"}
                "409": {$ref: "#/components/responses/Error"}
                "413": {$ref: "#/components/responses/Error"}
                "415": {$ref: "#/components/responses/Error"}
          /v1/expenses/{id}:
            parameters: [{$ref: "#/components/parameters/id"}]
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The expense., content: {application/json: {schema: {$ref: "#/components/schemas/Expense"}}}}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}}
            patch:
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/ExpensePatch"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: Updated.}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}}
            delete: {responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: Deleted.}, "404": {$ref: "#/components/responses/Error"}}}
          /v1/categories:
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "Categories as a tree (duplicates merged): {items, merged: [{id, mergedInto, reason}]}."}, "400": {$ref: "#/components/responses/Error"}}}
            post:
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/CategoryCreate"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "201": {description: Created.}, "400": {$ref: "#/components/responses/Error"}}
          /v1/categories/{id}:
            parameters: [{$ref: "#/components/parameters/id"}]
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The category (or the one a duplicate merged into).}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}}
            patch:
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/CategoryPatch"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: Updated.}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}}
            delete: {responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: Deleted.}, "404": {$ref: "#/components/responses/Error"}}}
          /v1/todos:
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "To-dos: {items}; a challenge's with streaks {current, longest, completionRate} as of the service's day (null for other to-dos)."}, "400": {$ref: "#/components/responses/Error"}}}
            post:
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/TodoCreate"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "201": {description: Created.}, "400": {$ref: "#/components/responses/Error"}}
          /v1/todos/{id}:
            parameters: [{$ref: "#/components/parameters/id"}]
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The to-do., content: {application/json: {schema: {$ref: "#/components/schemas/Todo"}}}}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}}
            patch:
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/TodoPatch"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: Updated.}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}}
            delete: {responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: Deleted.}, "404": {$ref: "#/components/responses/Error"}}}
          /v1/budgets:
            get:
              parameters: [{$ref: "#/components/parameters/asOf"}, {name: month, in: query, schema: {type: string, pattern: "^([0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])$"}}]
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "Every budget {items: [{id, categoryId, amount, currency, fromMonth, toMonth}]}; with month, the budgets that apply to it {month, items: [{budgetId, categoryId, categoryName, currency, budgeted, spent, remaining, over}]}."}, "400": {$ref: "#/components/responses/Error"}}
            post:
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/BudgetCreate"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "201": {description: Created.}, "400": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
          /v1/budgets/{id}:
            parameters: [{$ref: "#/components/parameters/id"}]
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The budget., content: {application/json: {schema: {$ref: "#/components/schemas/Budget"}}}}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}}
            patch:
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/BudgetPatch"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: Updated.}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
            delete: {responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: Deleted.}, "404": {$ref: "#/components/responses/Error"}}}
          /v1/accounts:
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "Every account {items: [Account]}, by name."}, "400": {$ref: "#/components/responses/Error"}}}
            post:
              description: "An account: a bank account, a card, cash, savings or a loan, with its opening balance (negative: owed) from its opening day."
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/AccountCreate"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "201": {description: Created., content: {application/json: {schema: {$ref: "#/components/schemas/Account"}}}}, "400": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
          /v1/accounts/{id}:
            parameters: [{$ref: "#/components/parameters/id"}]
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The account., content: {application/json: {schema: {$ref: "#/components/schemas/Account"}}}}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}}
            patch:
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/AccountPatch"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: Updated.}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
            delete: {responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: Deleted.}, "404": {$ref: "#/components/responses/Error"}}}
          /v1/accounts/{id}/bills:
            parameters: [{$ref: "#/components/parameters/id"}]
            get:
              description: "A card's bills: the statements closing in the months from…to (default the six months through next month), each with its cycle (after the previous closing day through this one; a closing day past a month's end is its last day), due day (the first payment day after the close), what was charged and cancelled in it, the amount, what was paid into the card before the next close, and status paid, due or overdue."
              parameters: [{$ref: "#/components/parameters/asOf"}, {name: from, in: query, schema: {type: string, pattern: "^[0-9]{4}-(0[1-9]|1[0-2])$"}}, {name: to, in: query, schema: {type: string, pattern: "^[0-9]{4}-(0[1-9]|1[0-2])$"}}]
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "{items: [{month, from, to, due, charged, cancelled, amount, paid, status}]}"}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}}
          /v1/accounts/{id}/reconciliation:
            parameters: [{$ref: "#/components/parameters/id"}]
            get:
              description: "The account reconciled against a statement (set its reconciledThrough and statementBalance with PATCH /v1/accounts/{id}): the balance the views compute at reconciledThrough, the statement's less it (difference), how many lines are cleared (dated up to reconciledThrough), and the cleared lines changed or added after the reconciliation was written (changedSince), latest first."
              parameters: [{$ref: "#/components/parameters/asOf"}]
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "{accountId, currency, reconciledThrough, statementBalance, balance, difference, reconciledAt, clearedCount, changedSince: [{type, id, date, amount, changedAt}]}"}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}}
          /v1/transfers:
            get: {parameters: [{$ref: "#/components/parameters/asOf"}, {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: \(Limits.maxPageSize)}}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "The latest transfers {items: [Transfer]}, newest first."}, "400": {$ref: "#/components/responses/Error"}}}
            post:
              description: "Money moved between two different accounts: not spending (summaries and budgets leave it out). toAmount is what arrives when the accounts' currencies differ."
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/TransferCreate"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "201": {description: Created., content: {application/json: {schema: {$ref: "#/components/schemas/Transfer"}}}}, "400": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
          /v1/transfers/{id}:
            parameters: [{$ref: "#/components/parameters/id"}]
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The transfer., content: {application/json: {schema: {$ref: "#/components/schemas/Transfer"}}}}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}}
            patch:
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/TransferPatch"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: Updated.}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
            delete: {responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: Deleted.}, "404": {$ref: "#/components/responses/Error"}}}
          /v1/people:
            get:
              description: "Who paid and who owes: each person's balance per currency from the expenses that name who paid (paidBy) and how they are shared (split, shares), and the settlements; the fewest transfers that settle each currency (at most one fewer than the people); expenses whose parts do not add up, left out to be looked at."
              parameters: [{$ref: "#/components/parameters/asOf"}]
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "{items: [{name, currency, balance}], settle: [{from, to, amount, currency}], needsAttention: [id], overflowed: [name]}"}, "400": {$ref: "#/components/responses/Error"}}
          /v1/settlements:
            post:
              description: "Money one person paid another back: settles what they owed."
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/SettlementCreate"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "201": {description: Created., content: {application/json: {schema: {$ref: "#/components/schemas/Settlement"}}}}, "400": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
          /v1/settlements/{id}:
            parameters: [{$ref: "#/components/parameters/id"}]
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The settlement., content: {application/json: {schema: {$ref: "#/components/schemas/Settlement"}}}}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}}
            patch:
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/SettlementPatch"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: Updated.}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
            delete: {responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: Deleted.}, "404": {$ref: "#/components/responses/Error"}}}
          /v1/splits:
            get:
              description: "Split receipts: every expense with lines, those whose lines no longer add up to it (needsAttention, after merged edits) first; unattached: lines whose expense this replica does not hold (a peer's line for an expense not received, or deleted), counted nowhere."
              parameters: [{$ref: "#/components/parameters/asOf"}]
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "{receipts: [SplitReceipt], unattached: [Line]}"}, "400": {$ref: "#/components/responses/Error"}}
          /v1/expenses/{id}/lines:
            parameters: [{$ref: "#/components/parameters/id"}]
            get:
              parameters: [{$ref: "#/components/parameters/asOf"}]
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "The expense as a split receipt (no lines: not split).", content: {application/json: {schema: {$ref: "#/components/schemas/SplitReceipt"}}}}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}
            put:
              description: "Splits the expense into these lines as one write: lines named by id are kept (changed where they differ), the others added, lines not named deleted. They must add up to the expense's amount; no lines: not split."
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/SplitLines"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The receipt., content: {application/json: {schema: {$ref: "#/components/schemas/SplitReceipt"}}}}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
          /v1/lines:
            post:
              description: "One line of a split receipt, on a live expense. A split is better written whole (PUT /v1/expenses/{id}/lines), which checks that it adds up."
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/LineCreate"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "201": {description: Created., content: {application/json: {schema: {$ref: "#/components/schemas/Line"}}}}, "400": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
          /v1/lines/{id}:
            parameters: [{$ref: "#/components/parameters/id"}]
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The line., content: {application/json: {schema: {$ref: "#/components/schemas/Line"}}}}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}}
            patch:
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/LinePatch"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: Updated.}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
            delete: {responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: Deleted.}, "404": {$ref: "#/components/responses/Error"}}}
          /v1/balances:
            get:
              description: "Every account's balance at a moment: its opening balance (from its opening day), plus the incomes and less the expenses that name it in its currency, plus the transfers in and less those out; the totals per currency; with in, the net worth in that currency at each day's rate (balances without a rate listed in unconverted)."
              parameters: [{$ref: "#/components/parameters/asOf"}, {name: at, in: query, description: "A day (its end) or a date-time; default now", schema: {type: string, maxLength: 40}}, {name: in, in: query, schema: {type: string, pattern: "^[A-Z]{3}$"}}]
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "{at, items: [{id, name, kind, currency, isArchived, balance, otherCurrencyExpenses}], totals: [{currency, balance}], netWorth?: {currency, amount, unconverted}}"}, "400": {$ref: "#/components/responses/Error"}}}
          /v1/reports/months:
            get:
              description: "The months ending with to (default this month): categories — spending per top-level category (sub-categories in their parent) and currency, one amount per month; trend — each month's income, expense and net per currency; netWorth — the accounts' balances at each month's end, per currency. Transfers are not spending and are in none of it."
              parameters: [{$ref: "#/components/parameters/asOf"}, {name: to, in: query, schema: {type: string, pattern: "^[0-9]{4}-(0[1-9]|1[0-2])$"}}, {name: months, in: query, schema: {type: integer, minimum: 1, maximum: 120}}]
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "{months, categories: [{categoryId, name, currency, expense: [per month]}], trend: [{currency, income, expense, net}], netWorth: [{month, totals: [{currency, balance}]}]}"}, "400": {$ref: "#/components/responses/Error"}}
          /v1/reports/year:
            get:
              description: "The year in review, per currency (never converted): income, spending, net and how many entries, against the year before; spending per month and the busiest month; the top-level categories it went to (with their share); the largest expenses; and the net worth at the start and end of the year. Transfers are not spending."
              parameters: [{$ref: "#/components/parameters/asOf"}, {name: year, in: query, schema: {type: string, pattern: "^[0-9]{4}$"}}]
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "{year, currencies: [{currency, income, expense, net, count, previous: {income, expense}, months, busiestMonth: {month, expense}, topCategories: [{categoryId, name, expense, share}], largest: [{id, date, payee, amount, categoryId}]}], netWorth: {start, end: [{currency, balance}]}}"}, "400": {$ref: "#/components/responses/Error"}}
          /v1/rates:
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "Every exchange rate {items: [{id, currency, toCurrency, rate, date}]}."}, "400": {$ref: "#/components/responses/Error"}}}
            post:
              description: "An exchange rate: one currency is rate toCurrency from date's day on (until a later day's rate of the pair; a pair written the other way round is used inverted). tally rates set keeps one rate per pair and day."
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/RateCreate"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "201": {description: Created.}, "400": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
          /v1/rates/{id}:
            parameters: [{$ref: "#/components/parameters/id"}]
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The rate.}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}}
            patch:
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/RatePatch"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: Updated.}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
            delete: {responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: Deleted.}, "404": {$ref: "#/components/responses/Error"}}}
          /v1/rules:
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "Every categorisation rule {items: [{id, pattern, match, categoryId, tags}]}."}, "400": {$ref: "#/components/responses/Error"}}}
            post:
              description: "A categorisation rule: an imported row whose payee or memo contains the pattern (or, match=matches, matches it with * and ?) gets its category and tags; the longest matching pattern wins."
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/RuleCreate"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "201": {description: Created.}, "400": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
          /v1/rules/{id}:
            parameters: [{$ref: "#/components/parameters/id"}]
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The rule.}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}}
            patch:
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/RulePatch"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: Updated.}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
            delete: {responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: Deleted.}, "404": {$ref: "#/components/responses/Error"}}}
          /v1/recurring:
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "Every recurring rule with its fields and `next` (the next three occurrence days): {items}."}, "400": {$ref: "#/components/responses/Error"}}}
            post:
              description: "Creates a rule; its occurrences up to today become expenses at once (ids derived from the rule and the day)."
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/RecurringCreate"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "201": {description: Created.}, "400": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
          /v1/recurring/{id}:
            parameters: [{$ref: "#/components/parameters/id"}]
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The rule.}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}}
            patch:
              description: "Changes the rule: occurrences still to come follow it; those already made stay as they are. Setting endDate ends it."
              requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/RecurringPatch"}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: Updated.}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
            delete: {responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: "Deleted (its occurrences stay)."}, "404": {$ref: "#/components/responses/Error"}}}
          /v1/recurring/{id}/skip:
            parameters: [{$ref: "#/components/parameters/id"}]
            post:
              description: "Skips one occurrence; one already made is deleted."
              requestBody:
                required: true
                content:
                  application/json:
                    schema: {type: object, additionalProperties: false, required: [date], properties: {date: {type: string, pattern: "\(dayPattern)"}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The rule.}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}}
          /v1/settings:
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "Settings: {items}."}, "400": {$ref: "#/components/responses/Error"}}}
          /v1/settings/{key}:
            parameters: [{$ref: "#/components/parameters/key"}]
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The setting.}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}}
            put:
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      additionalProperties: false
                      required: [value]
                      properties: {value: {description: "any JSON value; keys local.… are local-only, all others replicated (a 'scope' field, if sent, must agree)"}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: Set.}, "400": {$ref: "#/components/responses/Error"}}
            delete: {responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: Deleted.}, "404": {$ref: "#/components/responses/Error"}}}
          /v1/summary:
            get:
              parameters:
                - {$ref: "#/components/parameters/asOf"}
                - {name: month, in: query, required: true, schema: {type: string, pattern: "^([0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])$"}}
                - {name: category, in: query, description: "Spending by this category's children instead of by top-level category", schema: {type: string, format: uuid}}
                - {name: by, in: query, description: "purchase (default): every expense in the month it was made; bill: a purchase on a card with a closing day in the month its statement is due (the top payees and budgets stay by purchase date; not with in)", schema: {type: string, enum: [purchase, bill]}}
                - {name: in, in: query, description: "Also the month's totals in this currency ('in': income, expense, net, converted, unconvertedCount, unconverted — the expenses without a rate on or before their day)", schema: {type: string, enum: [\(currencies)]}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "A month's totals by currency, category and payment, top payees, and the challenges running that month with their streaks."}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}}
          /v1/summary/months:
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "Every month's income and expense per currency."}, "400": {$ref: "#/components/responses/Error"}}}
          /v1/audit/{id}:
            parameters: [{name: id, in: path, required: true, schema: {type: string, pattern: "^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[A-Za-z][A-Za-z0-9._]{0,63})$"}}]
            get: {parameters: [{$ref: "#/components/parameters/asOf"}], responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "Every event of the entity, oldest first."}, "404": {$ref: "#/components/responses/Error"}, "400": {$ref: "#/components/responses/Error"}}}
          /v1/session:
            get:
              description: "Who the caller is (a token's name, or a signed-in member's name and role), its scopes, and the log's head (where a client starts following /v1/changes)."
              responses:
                default: {$ref: "#/components/responses/Error"}
                "200":
                  description: The session.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [actor, scopes, replicaId, appendedIndex, projectedIndex]
                        properties: {token: {type: string}, member: {type: string}, role: {type: string, enum: [owner, member, read-only]}, actor: {type: string}, scopes: {type: array, items: {type: string, enum: [read, write, replicate]}}, replicaId: {type: string}, ledger: {type: string}, appendedIndex: {type: integer}, projectedIndex: {type: integer}}
            post:
              description: "Sign in as a member with a name and password: sets the session cookie (HttpOnly, SameSite=Strict) and answers the CSRF token every write with the cookie must send as X-CSRF-Token. After five failures an account (and an address) waits, doubling: 429 with Retry-After."
              security: []
              requestBody: {required: true, content: {application/json: {schema: {type: object, additionalProperties: false, required: [name, password], properties: {name: {type: string, maxLength: 64}, password: {type: string, maxLength: 200}}}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "Signed in: {member, role, csrf, expiresAt}"}, "400": {$ref: "#/components/responses/Error"}, "401": {$ref: "#/components/responses/Error"}, "429": {$ref: "#/components/responses/Error"}}
            delete:
              description: Sign out (the session ends everywhere it was copied) and clear the cookie.
              responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: Signed out.}}
          /v1/members:
            get:
              description: "The household's members: {items: [{name, role, createdAt}]}."
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: The members.}}
            delete:
              description: "Remove a member (an owner only; never the last owner): their sessions end at once, and the invitations they made are withdrawn."
              parameters: [{name: name, in: query, required: true, schema: {type: string, maxLength: 64}}]
              responses: {default: {$ref: "#/components/responses/Error"}, "204": {description: Removed.}, "403": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}}
          /v1/members/invites:
            post:
              description: "An owner's one-time invitation (7 days): {code, role, expiresAt}. Only a signed-in owner."
              requestBody: {required: true, content: {application/json: {schema: {type: object, additionalProperties: false, properties: {role: {type: string, enum: [owner, member, read-only]}}}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "201": {description: The invitation.}, "400": {$ref: "#/components/responses/Error"}, "403": {$ref: "#/components/responses/Error"}}
          /v1/invites/accept:
            post:
              description: "Join the household with an invitation's code, as a new member who is then signed in (the cookie, as POST /v1/session). A code works once, within its time."
              security: []
              requestBody: {required: true, content: {application/json: {schema: {type: object, additionalProperties: false, required: [code, name, password], properties: {code: {type: string, maxLength: 64}, name: {type: string, maxLength: 64}, password: {type: string, minLength: 10, maxLength: 200}}}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "201": {description: "Joined and signed in: {member, role, csrf, expiresAt}"}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}, "409": {$ref: "#/components/responses/Error"}, "429": {$ref: "#/components/responses/Error"}}
          /v1/sync/status:
            get:
              description: "This replica (log head, how far the views are behind, events per origin) and each configured peer: URL without credentials, last attempt, last success, last error, and the events written here since the last success (never a peer's token)."
              responses:
                default: {$ref: "#/components/responses/Error"}
                "200":
                  description: The sync status.
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [replicaId, name, appendedIndex, projectedIndex, viewsBehind, origins, peers, missingAttachments]
                        properties:
                          replicaId: {type: string}
                          name: {type: string}
                          appendedIndex: {type: integer}
                          projectedIndex: {type: integer}
                          viewsBehind: {type: integer}
                          missingAttachments: {type: integer}
                          origins: {type: array, items: {type: object, properties: {origin: {type: string}, events: {type: integer}}}}
                          peers:
                            type: array
                            items:
                              type: object
                              required: [name, url, unsent]
                              properties: {name: {type: string}, url: {type: string}, lastAttemptAt: {type: [string, "null"]}, lastSuccessAt: {type: [string, "null"]}, lastError: {type: [string, "null"]}, pulled: {type: integer}, pushed: {type: integer}, unsent: {type: integer}}
          /v1/conflicts:
            get:
              parameters: [{$ref: "#/components/parameters/asOf"}, {name: entity, in: query, schema: {type: string}}]
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "Concurrent writes that lost: {items}."}, "400": {$ref: "#/components/responses/Error"}}
          /v1/export:
            get:
              description: "The data out: format=csv gives every expense dated in [from, to), oldest first, in UTF-8 with a BOM (date, kind, amount, currency, category path, payee, payment, memo, tags, attachments, id) — importable again; format=jsonl gives every live entity, one JSON object a line (from and to, if given, choose which expenses)."
              parameters:
                - {name: format, in: query, schema: {type: string, enum: [csv, jsonl]}}
                - {name: from, in: query, description: "A day, YYYY-MM-DD (the CLI also takes a date-time)", schema: {type: string, pattern: "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])$"}}
                - {name: to, in: query, description: "A day, YYYY-MM-DD, exclusive", schema: {type: string, pattern: "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])$"}}
              responses:
                default: {$ref: "#/components/responses/Error"}
                "200": {description: The export, content: {text/csv: {schema: {type: string}}, application/jsonl: {schema: {type: string}}}}
                "400": {$ref: "#/components/responses/Error"}
          /v1/imports:
            get: {responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "Every statement import: {items: [{id, fileName, digest, format, count}]}."}}}
            post:
              description: "Imports a bank or card statement (docs/IMPORT.md): the body is the file itself, a CSV (UTF-8, UTF-16 with BOM, or CP949), an .xlsx workbook or an OFX/QFX file, told by its bytes unless format says. Each row becomes an expense once: importing the same or an overlapping statement again creates only rows the ledger never had. A row that cannot be read refuses the whole file (422 bad_rows, listing them) unless skipBadRows."
              parameters:
                - {name: format, in: query, schema: {type: string, enum: [csv, xlsx, ofx]}}
                - {name: name, in: query, description: "The file's name, kept in the import's record", schema: {type: string, maxLength: 100}}
                - {name: dryRun, in: query, description: "Report what would be created; write nothing", schema: {type: string, enum: ["true", "false"]}}
                - {name: skipBadRows, in: query, schema: {type: string, enum: ["true", "false"]}}
                - {name: mapping, in: query, description: "A built-in layout, or one saved with tally import mappings save (its name, letters, digits, - and _)", schema: {type: string, enum: [\(StatementLayout.builtIn.map(\.name).joined(separator: ", "))]}}
                - {name: account, in: query, description: "Which account or card: part of each row's import key", schema: {type: string, maxLength: \(Limits.maxShortTextLength)}}
                - {name: accountId, in: query, description: "The ledger's account the statement is of (a card statement: that card's account): every imported row names it (a live account, else 409), and without account its id scopes the import keys", schema: {type: string, format: uuid}}
                - {name: currency, in: query, schema: {type: string, enum: [\(currencies)]}}
                - {name: encoding, in: query, schema: {type: string, enum: [utf-8, utf-16le, utf-16be, cp949, euc-kr]}}
                - {name: delimiter, in: query, schema: {type: string, enum: [",", ";", tab]}}
                - {name: headerRow, in: query, schema: {type: integer, minimum: 0, maximum: 1000000}}
                - {name: positiveIs, in: query, schema: {type: string, enum: [expense, income]}}
              requestBody:
                required: true
                content:
                  text/csv: {schema: {type: string, format: binary, minLength: 1}}
                  application/octet-stream: {schema: {type: string, format: binary, minLength: 1}}
                  application/vnd.openxmlformats-officedocument.spreadsheetml.sheet: {schema: {type: string, format: binary, minLength: 1}}
              responses:
                default: {$ref: "#/components/responses/Error"}
                "200": {description: "A dry run, or nothing new: {dryRun, importId: null, layouts, encoding, created, duplicates, skipped, bad}"}
                "201": {description: "Imported, durably, as one batch: the same report with importId"}
                "400": {$ref: "#/components/responses/Error"}
                "408": {$ref: "#/components/responses/Error"}
                "409": {$ref: "#/components/responses/Error"}
                "413": {$ref: "#/components/responses/Error"}
                "422": {$ref: "#/components/responses/Error"}
          /v1/attachments:
            post:
              description: "Stores a receipt photo or file (JPEG, PNG, HEIC/HEIF, WebP, GIF or PDF, told by its bytes; at most 25 MiB by default, refused with 413 as it arrives). The body is the file itself, or a multipart/form-data form whose file part (a filename, or the name 'file') is taken."
              requestBody:
                required: true
                content:
                  application/octet-stream: {schema: {type: string, format: binary}}
                  image/jpeg: {schema: {type: string, format: binary}}
                  multipart/form-data: {schema: {type: object, properties: {file: {type: string, format: binary}}}}
              responses:
                default: {$ref: "#/components/responses/Error"}
                "201": {description: "Stored (or held already)", content: {application/json: {schema: {type: object, required: [digest, size, contentType], properties: {digest: {type: string, pattern: "^[0-9a-f]{64}$"}, size: {type: integer}, contentType: {type: string}}}}}}
                "400": {$ref: "#/components/responses/Error"}
                "408": {$ref: "#/components/responses/Error"}
                "413": {$ref: "#/components/responses/Error"}
                "415": {$ref: "#/components/responses/Error"}
                "507": {$ref: "#/components/responses/Error"}
          /v1/attachments/{digest}:
            parameters: [{name: digest, in: path, required: true, schema: {type: string, pattern: "^[0-9a-f]{64}$"}}]
            get:
              parameters: [{name: Range, in: header, schema: {type: string}}, {name: If-None-Match, in: header, schema: {type: string}}]
              responses:
                default: {$ref: "#/components/responses/Error"}
                "200": {description: "The file, streamed, with ETag (its digest) and long-lived caching; Content-Type from its bytes.", content: {image/jpeg: {}, image/png: {}, image/heic: {}, image/heif: {}, image/webp: {}, image/gif: {}, application/pdf: {}, application/octet-stream: {}}}
                "206": {description: "The requested byte range."}
                "304": {description: "Not modified (If-None-Match)."}
                "400": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
                "416": {description: "Range not satisfiable."}
            head:
              responses: {default: {description: "As GET, without the body."}}
          /v1/attachments/{digest}/thumbnail:
            parameters: [{name: digest, in: path, required: true, schema: {type: string, pattern: "^[0-9a-f]{64}$"}}]
            get:
              parameters: [{name: size, in: query, schema: {type: integer, enum: [\(AttachmentType.thumbnailSizes.map(String.init).joined(separator: ", "))]}}]
              responses:
                default: {$ref: "#/components/responses/Error"}
                "200": {description: "A JPEG that fits in size×size, upright, without metadata.", content: {image/jpeg: {schema: {type: string, format: binary}}}}
                "400": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
                "415": {$ref: "#/components/responses/Error"}
                "422": {$ref: "#/components/responses/Error"}
          /v1/replication/blobs/missing:
            post:
              requestBody: {required: true, content: {application/json: {schema: {type: object, required: [digests], additionalProperties: false, properties: {digests: {type: array, maxItems: 100000, items: {type: string, pattern: "^[0-9a-f]{64}$"}}}}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "{missing: [digest]}: the ones this replica lacks"}, "400": {$ref: "#/components/responses/Error"}}
          /v1/replication/blobs/{digest}:
            parameters: [{name: digest, in: path, required: true, schema: {type: string, pattern: "^[0-9a-f]{64}$"}}]
            get:
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "The blob", content: {application/octet-stream: {schema: {type: string, format: binary}}}}, "400": {$ref: "#/components/responses/Error"}, "404": {$ref: "#/components/responses/Error"}}
            put:
              requestBody: {required: true, content: {application/octet-stream: {schema: {type: string, format: binary}}}}
              responses: {default: {$ref: "#/components/responses/Error"}, "201": {description: "Kept: it hashed to its name"}, "400": {$ref: "#/components/responses/Error"}, "413": {$ref: "#/components/responses/Error"}, "422": {$ref: "#/components/responses/Error"}}
          /v1/changes:
            get:
              parameters: [{name: after, in: query, schema: {type: integer, minimum: 0}}]
              responses: {default: {$ref: "#/components/responses/Error"}, "200": {description: "Server-sent events, one per log event after the cursor.", content: {text/event-stream: {}}}}
        """
}
