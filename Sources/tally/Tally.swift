import ArgumentParser
import Foundation
import TallyCore

/// `tally`: the command-line face of a Tally replica.
@main
struct Tally: AsyncParsableCommand {
    /// Every file Tally creates — segments, views, locks — is its owner's only, whatever the
    /// shell's umask (the data directory is 0700 too; this keeps a copied file private).
    static func main() async {
        umask(0o077)
        await main(nil)
    }

    static let configuration = CommandConfiguration(
        commandName: "tally",
        abstract: "An event-sourced household ledger: every change is an event in an append-only, verifiable log.",
        subcommands: [
            InitCommand.self, StatusCommand.self, ServeCommand.self, TokenCommand.self,
            ExpenseCommand.self, CategoryCommand.self, TodoCommand.self, BudgetCommand.self, RecurringCommand.self, SettingCommand.self,
            AccountCommand.self, TransferCommand.self, AccountsCommand.self, TransfersCommand.self, ReportCommand.self, PeopleCommand.self,
            SettlementCommand.self, SplitCommand.self, SplitsCommand.self, YearCommand.self,
            ExpensesCommand.self, CategoriesCommand.self, TodosCommand.self, BudgetsCommand.self, SettingsCommand.self, SummaryCommand.self,
            RebuildCommand.self, VectorCommand.self, SegmentsCommand.self, SyncCommand.self, PeersCommand.self, KeysCommand.self, AttachmentCommand.self,
            AttachmentsCommand.self, ConflictsCommand.self, LogCommand.self, SnapshotsCommand.self, ImportCommand.self, ExportCommand.self, RuleCommand.self,
            RulesCommand.self, RatesCommand.self, AuditCommand.self, ThumbnailWorkerCommand.self, LedgersCommand.self, MembersCommand.self, ClusterCommand.self,
        ]
    )
}
