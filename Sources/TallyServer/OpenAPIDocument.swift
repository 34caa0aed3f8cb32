import TallyCore
import TallyImport

/// The OpenAPI 3.1 document served at `/openapi.yaml`: its paths written from the routes as they
/// are added (`APIRoutes`), its entity schemas from their `EntitySpec`s.
enum OpenAPIDocument {
    /// What `DateTime(iso8601:)` accepts: a real calendar date (leap years included), optionally
    /// a time with seconds, milliseconds and an offset (a bare date means local midnight).
    static let datePattern =
        "^((1[0-9]{3}|[2-8][0-9]{3}|9[0-8][0-9]{2})-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))|((1[0-9]|[2-8][0-9]|9[0-8])(0[48]|[2468][048]|[13579][26])|(1[26]|[2468][048]|[3579][26])00)-02-29)([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9]([.][0-9]{1,3})?)?(Z|z|[+-](0[0-9]|1[0-7]):?[0-5][0-9]|[+-]18:?00))?$"

    /// The currencies `Currency.isValid` accepts.
    static let currencies = Currency.minorUnitDigits.keys.sorted().joined(separator: ", ")

    static let todoAdded = [
        ("percentage", #"{type: number, description: "derived: checks done / checks × 100"}"#),
        (
            "streaks",
            #"{type: [object, "null"], properties: {current: {type: integer}, longest: {type: integer}, completionRate: {type: number}}, description: "a challenge's streaks as of the service's day; null for other to-dos"}"#
        ),
    ]

    /// The document of one ledger served by `tally serve --data-dir`: its components here
    /// (entity schemas from their `EntitySpec`s), its paths from the operations one ledger's
    /// routes are added with (`ledgerOperations`).
    static let yaml = components(servers: "  - url: http://127.0.0.1:8080") + "\n" + paths(ledgerOperations(hosted: false).all, hosted: false) + "\n"

    /// The document of a ledger on a hosting server (`tally serve --ledgers`): the same
    /// operations, at paths under the ledger's own base URL (`/v1/ledgers/{ledger}`), where its
    /// health needs a token too.
    static let hostedYAML =
        components(servers: #"  - {url: "http://127.0.0.1:8080/v1/ledgers/{ledger}", variables: {ledger: {default: home, description: "The ledger's name"}}}"#)
        + "\n" + paths(ledgerOperations(hosted: true).all, hosted: true) + "\n"

    /// The entities whose view a component schema describes (GET by id answers it).
    static let viewSchemas: Set<EntityType> = [.expense, .category, .todo, .budget, .account, .transfer, .settlement, .line]

    static func components(servers: String) -> String {
        """
        openapi: 3.1.0
        info:
          title: Tally
          version: "1"
          description: An event-sourced household ledger. Every write is a durable event; views are projections of the log.
        servers:
        \(servers)
        security:
          - bearer: []
        components:
          securitySchemes:
            bearer: {type: http, scheme: bearer}
          parameters:
            id: {name: id, in: path, required: true, schema: {type: string, format: uuid}}
            asOf: {name: asOf, in: query, description: "Answer as the views stood then on this replica: a log index, or a moment (local time of the service unless it ends in Z or an offset; a bare day is its end). The response's Tally-As-Of-Index header names the log index answered for; one past the views' is answered as now.", schema: {type: string, pattern: "^([0-9]{1,19}|([0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?(Z|[+-](0[0-9]|1[0-7]):[0-5][0-9])?)?)$"}}
            key: {name: key, in: path, required: true, schema: {type: string, maxLength: \(Limits.maxSettingKeyBytes), pattern: "^[A-Za-z][A-Za-z0-9._]*$"}}
            digest: {name: digest, in: path, required: true, schema: {type: string, pattern: "^[0-9a-f]{64}$"}}
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
            Category:
              type: object
              properties:
                id: {type: string, format: uuid}
                name: {type: string}
                parentId: {type: [string, "null"]}
                icon: {type: [string, "null"]}
                kind: {type: string, enum: [income, expense]}
                depth: {type: integer}
            Todo:
              type: object
              properties:
        \(shownFields(.todo, added: missingAttachments + todoAdded))
            Budget:
              type: object
              properties:
        \(shownFields(.budget, added: [("writtenForCategoryId", #"{type: string, format: uuid, description: "the category it was written for, when a merge made categoryId stand for it"}"#)]))
            Account:
              type: object
              properties:
        \(shownFields(.account, added: []))
            Transfer:
              type: object
              properties:
        \(shownFields(.transfer, added: []))
            Settlement:
              type: object
              properties:
        \(shownFields(.settlement, added: []))
            Line:
              type: object
              properties:
        \(shownFields(.line, added: []))
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
        \(writableSchemas)
            Setting:
              type: object
              properties: {key: {type: string}, value: {}, scope: {type: string, enum: [replicated, local]}}
        """
    }
}
