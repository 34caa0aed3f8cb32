import ArgumentParser
import Foundation
import TallyCore

/// `tally`: the command-line face of a Tally replica.
@main
struct Tally: AsyncParsableCommand {
    /// Every file Tally creates — segments, views, locks — is its owner's only, whatever the
    /// shell's umask (the data directory is 0700 too; this keeps a copied file private).
    ///
    /// Runs the command as ArgumentParser's `main` would, but prints its messages through
    /// `Output.printable`: an error quoting what was typed (an id, a peer's name, an option's
    /// value) cannot send the terminal its control characters.
    static func main() async {
        umask(0o077)
        do {
            var command = try await asyncParseAsRoot(nil)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let message = Output.printable(fullMessage(for: error))
            let code = exitCode(for: error)
            if !message.isEmpty {
                if code == .success { print(message) } else { Output.standardError(message + "\n") }
            }
            Glibc.exit(code.rawValue)
        }
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
