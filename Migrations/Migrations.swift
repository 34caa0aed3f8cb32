import Foundation

/// The numbered SQL files of this folder, in the order they are applied. SwiftPM embeds
/// each file's bytes in the binary (`.embedInCode` in Package.swift), so an installed `tally`
/// carries its schema with it.
///
/// To change the schema: add `000N_name.sql` here and in Package.swift; never edit a file
/// that has shipped.
public enum TallyMigrations {
    /// (identifier, SQL text) pairs, oldest first. (SwiftPM names `0001_views.sql`
    /// `_001_views_sql`: a leading digit becomes an underscore.)
    public static let all: [(identifier: String, sql: String)] = [
        ("0001_views", String(decoding: PackageResources._001_views_sql, as: UTF8.self)),
        ("0002_merges_and_conflicts", String(decoding: PackageResources._002_merges_and_conflicts_sql, as: UTF8.self)),
        ("0003_fewer_expense_indexes", String(decoding: PackageResources._003_fewer_expense_indexes_sql, as: UTF8.self)),
        ("0004_smaller_entity_state", String(decoding: PackageResources._004_smaller_entity_state_sql, as: UTF8.self)),
        ("0005_expense_payee", String(decoding: PackageResources._005_expense_payee_sql, as: UTF8.self)),
        ("0006_budgets", String(decoding: PackageResources._006_budgets_sql, as: UTF8.self)),
        ("0007_projection_history", String(decoding: PackageResources._007_projection_history_sql, as: UTF8.self)),
        ("0008_accounts_and_transfers", String(decoding: PackageResources._008_accounts_and_transfers_sql, as: UTF8.self)),
        ("0009_account_days", String(decoding: PackageResources._009_account_days_sql, as: UTF8.self)),
        ("0010_month_totals", String(decoding: PackageResources._010_month_totals_sql, as: UTF8.self)),
        ("0011_card_days", String(decoding: PackageResources._011_card_days_sql, as: UTF8.self)),
        ("0012_who_paid", String(decoding: PackageResources._012_who_paid_sql, as: UTF8.self)),
        ("0013_lines_and_reconciliation", String(decoding: PackageResources._013_lines_and_reconciliation_sql, as: UTF8.self)),
    ]
}
