// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Tally",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "tally", targets: ["tally"]),
        .executable(name: "tally-bench", targets: ["TallyBench"]),
        // The library an app embeds as its own offline replica (docs/TALLYKIT.md). Nothing
        // server-only in its dependency graph: `scripts/check-tallykit` proves it in CI.
        .library(name: "TallyKit", type: .static, targets: ["TallyKit"]),
        // A household app and its widget in a few lines of TallyKit: the getting-started example.
        .executable(name: "tally-household", targets: ["HouseholdApp"]),
        // libFuzzer targets: build one at a time with scripts/fuzz (never all together).
        .executable(name: "FuzzSegments", targets: ["FuzzSegments"]),
        .executable(name: "FuzzEvents", targets: ["FuzzEvents"]),
        .executable(name: "FuzzRequestBodies", targets: ["FuzzRequestBodies"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // Members' passwords (issue 31): bcrypt.
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/vapor/multipart-kit", from: "4.7.1"),
        // Statement import (issue 19): .xlsx is a zip of XML parts; CSV by a maintained reader.
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        .package(url: "https://github.com/CoreOffice/XMLCoder", from: "0.18.2"),
        .package(url: "https://github.com/yaslab/CSV.swift", from: "2.5.2"),
        // Hosted ledgers on PostgreSQL (issue 32).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // liblz4 from Debian's liblz4-dev, wrapped like GRDB wraps SQLite.
        .systemLibrary(
            name: "CTallyLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"])]
        ),
        // libvips from Debian's libvips-dev, for attachment thumbnails (HEIC through libheif).
        .systemLibrary(
            name: "CTallyVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]
        ),
        // SQLite's C API for what GRDB does not reach (`sqlite3_db_config`'s variadic options).
        .systemLibrary(
            name: "CTallySQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Entities, events, ids, clock and validation. Pure Swift, no I/O.
        .target(
            name: "TallyCore",
            dependencies: []
        ),
        // Segment files, frames, LZ4, group-commit writer, reader, recovery, verify.
        .target(
            name: "TallyLog",
            dependencies: ["TallyCore", "CTallyLZ4", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // The schema: numbered SQL files, compiled into the binary so an installed `tally`
        // needs no resource folder beside it. Append-only: add 0002_….sql, never edit.
        .target(
            name: "TallyMigrations",
            path: "Migrations",
            resources: [.embedInCode("0001_views.sql"), .embedInCode("0002_merges_and_conflicts.sql"),
                        .embedInCode("0003_fewer_expense_indexes.sql"), .embedInCode("0004_smaller_entity_state.sql"),
                        .embedInCode("0005_expense_payee.sql"), .embedInCode("0006_budgets.sql"),
                        .embedInCode("0007_projection_history.sql"),
                        .embedInCode("0008_accounts_and_transfers.sql"), .embedInCode("0009_account_days.sql"),
                        .embedInCode("0010_month_totals.sql"), .embedInCode("0011_card_days.sql"),
                        .embedInCode("0012_who_paid.sql"),
                        .embedInCode("0013_lines_and_reconciliation.sql")]
        ),
        // The web app (issue 17): HTML, CSS, JavaScript modules and an icon, written here (no
        // Node build step) and compiled into the binary; TallyServer serves them at `/`.
        .target(
            name: "TallyWebApp",
            path: "WebApp",
            resources: [.embedInCode("index.html"), .embedInCode("app.css"), .embedInCode("app.js"), .embedInCode("api.js"), .embedInCode("dom.js"), .embedInCode("i18n.js"), .embedInCode("charts.js"), .embedInCode("month.js"), .embedInCode("expenses.js"), .embedInCode("categories.js"), .embedInCode("todos.js"), .embedInCode("recurring.js"), .embedInCode("import.js"), .embedInCode("history.js"), .embedInCode("sync.js"), .embedInCode("members.js"), .embedInCode("accounts.js"), .embedInCode("reports.js"), .embedInCode("people.js"), .embedInCode("split.js"),
                        .embedInCode("icon.svg")]
        ),
        // SQLite projections via GRDB: migrator, projector, rebuilder, queries.
        .target(
            name: "TallyStore",
            dependencies: [
                "TallyCore", "TallyLog", "TallyMigrations",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The SQLite C API, for binding view rows without GRDB's argument copies (DirectStatement).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                "CTallySQLite",
            ]
        ),
        // Hosted ledgers that survive the loss of a server (issue 32): each ledger's durable
        // batches archived in PostgreSQL under a lease whose epoch fences a former owner.
        .target(
            name: "TallyCluster",
            dependencies: ["TallyCore", "TallyLog", .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log")]
        ),
        // Replication: version vectors, verification of incoming events, and the transports
        // (segment bundles in a folder, the HTTP client of another replica's service).
        .target(
            name: "TallySync",
            dependencies: ["TallyCore", "TallyLog", .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio")]
        ),
        // The application layer: opens a data directory and is the one gate for every write,
        // query and replication; the CLI and the service only translate into calls on it.
        .target(
            name: "TallyLedger",
            dependencies: ["TallyCore", "TallyLog", "TallyStore", "TallySync", .product(name: "Crypto", package: "swift-crypto"),
                           // Its background work is a Service; blocking work runs on NIO's thread pool.
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"), .product(name: "Logging", package: "swift-log"),
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")]
        ),
        // An app's own replica (issue 33): typed writes and queries, observation, sync with
        // retries and a status to show, writes that take turns between an app and its widget.
        .target(
            name: "TallyKit",
            dependencies: [
                "TallyCore", "TallyLog", "TallyStore", "TallySync", "TallyLedger", "TallyCoreData", .product(name: "Crypto", package: "swift-crypto"),
                // scrypt, for the password a member's kept session is checked against.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "HouseholdApp",
            dependencies: ["TallyKit"],
            path: "Examples/HouseholdApp"
        ),
        // The household app's Core Data SQLite store (issue 33, docs/IMPORT.md "Core Data"): read
        // read-only into rows, then imported through the ledger's statement import.
        .target(
            name: "TallyCoreData",
            dependencies: ["TallyCore", "TallyLog", "TallyLedger", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Crypto", package: "swift-crypto")]
        ),
        // Bank and card statements read into rows (issue 19): text encodings, CSV, .xlsx,
        // header and column recognition, Korean amounts and dates. No writes, no views.
        .target(
            name: "TallyImport",
            dependencies: ["TallyCore", .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                           .product(name: "XMLCoder", package: "XMLCoder"), .product(name: "CSV", package: "CSV.swift")]
        ),
        // Thumbnails of image attachments, through libvips.
        .target(
            name: "TallyImages",
            dependencies: ["TallyCore", "TallyLog", "CTallyVips"]
        ),
        // The HTTP service: routes, auth, error mapping, change feed.
        .target(
            name: "TallyServer",
            dependencies: [
                "TallyCore", "TallyLog", "TallyStore", "TallySync", "TallyLedger", "TallyImages", "TallyWebApp", "TallyImport", "TallyCluster",
                .product(name: "Hummingbird", package: "hummingbird"),
                // Requests for a ledger another node of the cluster serves, forwarded to it.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // A request the HTTP parser refuses still gets a JSON error (UnreadableRequestAnswer).
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                // Whether an HTTP/1.0 request keeps its connection, read before HTTPTypes drops the version (ClosingAfterAnswer).
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                // Streaming multipart/form-data parsing for attachment uploads from a phone's camera input.
                .product(name: "MultipartKit", package: "multipart-kit"),
                // /metrics in the Prometheus text format.
                .product(name: "Prometheus", package: "swift-prometheus"),
                // Members' passwords, hashed with bcrypt.
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            ]
        ),
        // The one executable.
        .executableTarget(
            name: "tally",
            dependencies: [
                "TallyCore", "TallyLog", "TallyStore", "TallySync", "TallyLedger", "TallyServer", "TallyImport", "TallyImages", "TallyCluster", "TallyCoreData",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // Load generators for the crash tests and benchmarks, and the benchmarks' bare route:
        // a test tool beside `tally` (they write the log directly), not part of it.
        .executableTarget(
            name: "tally-debug",
            dependencies: [
                "TallyCore", "TallyLog", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        // Fuzzing (scripts/fuzz): what each target does with an input, the libFuzzer entry
        // point (with a replay-only fallback for plain builds), and one thin executable per target.
        .target(name: "CFuzzDriver"),
        .target(name: "TallyFuzzing", dependencies: ["CFuzzDriver", "TallyCore", "TallyLog", "TallySync", "TallyServer", "TallyTestSupport"]),
        .executableTarget(name: "FuzzSegments", dependencies: ["TallyFuzzing"], swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(name: "FuzzEvents", dependencies: ["TallyFuzzing"], swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(name: "FuzzRequestBodies", dependencies: ["TallyFuzzing"], swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        // Benchmarks (release build, scripts/bench). Never run by tests.
        .executableTarget(
            name: "TallyBench",
            dependencies: ["TallyCore", "TallyLog", "TallyStore", "TallySync", "TallyLedger", "TallyImages", "TallyImport", "TallyServer", "TallyCluster", "TallyKit", "TallyTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "PostgresNIO", package: "postgres-nio"),
                           .product(name: "CSV", package: "CSV.swift"),
                           .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "Logging", package: "swift-log")]
        ),
        // Helpers shared by the test targets, the fuzzers and the benchmarks: temporary
        // directories, sample and random events, subprocesses, test photos. A library under
        // Sources/ (nothing under Sources/ depends on Tests/).
        .target(
            name: "TallyTestSupport",
            dependencies: ["TallyCore", "TallyLog"]
        ),
        .testTarget(
            name: "TallyCoreTests",
            dependencies: ["TallyCore", "TallyTestSupport", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(
            name: "TallyLogTests",
            dependencies: ["TallyCore", "TallyLog", "TallyTestSupport", .product(name: "Crypto", package: "swift-crypto"), .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(
            name: "TallyStoreTests",
            dependencies: ["TallyCore", "TallyLog", "TallyStore", "TallyTestSupport", .product(name: "PropertyBased", package: "swift-property-based"), .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "TallySyncTests",
            dependencies: [
                "TallyCore", "TallyLog", "TallyStore", "TallySync", "TallyTestSupport", .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .testTarget(
            name: "TallyLedgerTests",
            dependencies: ["TallyCore", "TallyLog", "TallyStore", "TallySync", "TallyLedger", "TallyTestSupport"]
        ),
        .testTarget(
            name: "TallyCoreDataTests",
            dependencies: ["TallyCoreData", "TallyCore", "TallyLog", "TallyLedger", "TallyKit", "TallyTestSupport", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "TallyKitTests",
            dependencies: ["TallyCore", "TallyLog", "TallySync", "TallyLedger", "TallyKit", "TallyTestSupport"]
        ),
        .testTarget(
            name: "TallyClusterTests",
            dependencies: [
                "TallyCluster", "TallyLog", "TallyCore", "TallyTestSupport", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "TallyImportTests",
            dependencies: ["TallyCore", "TallyImport"]
        ),
        .testTarget(
            name: "TallyImagesTests",
            dependencies: ["TallyCore", "TallyLog", "TallyImages", "TallyTestSupport"]
        ),
        .testTarget(
            name: "TallyServerTests",
            dependencies: ["TallyCore", "TallyLog", "TallyStore", "TallySync", "TallyLedger", "TallyServer", "TallyTestSupport", "TallyFuzzing", "TallyImages", "TallyImport", "TallyKit",
                           .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                           .product(name: "HummingbirdTesting", package: "hummingbird"),
                           .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "MultipartKit", package: "multipart-kit")]
        ),
        .testTarget(
            name: "TallyCLITests",
            dependencies: ["TallyCore", "TallyLog", "TallyStore", "TallyImages", "TallyTestSupport", "tally", "HouseholdApp", "TallyKit",
                           .product(name: "AsyncHTTPClient", package: "async-http-client")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
