import ArgumentParser
import Foundation
import TallyCore
import TallyLog
import TallyServer

/// `tally members`: the people of the household who sign in to the web app with a name and a
/// password (docs/SECURITY.md). A password is read from standard input (one line), never
/// from the command line, where other users of the machine could see it.
struct MembersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "members", abstract: "Manage the household's members, who sign in with a name and password.",
        subcommands: [Add.self, List.self, Remove.self, Invite.self])

    /// One line of standard input: the password.
    static func readPassword() throws -> String {
        guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw CLIError("give the password on standard input (one line)") }
        return line
    }

    static func role(_ text: String) throws -> MemberRole {
        guard let role = MemberRole(rawValue: text) else { throw CLIError("invalid --role '\(text)': owner, member or read-only") }
        return role
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a member; the password is read from standard input.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var hosted: ClusterLedgerOptions
        @Argument(help: "The member's name (what they sign in with).") var name: String
        @Option(help: "owner, member or read-only.") var role = "member"

        func run() async throws {
            let role = try MembersCommand.role(role)
            do {
                if let target = try hosted.target() {
                    try await target.make(.addMember(try MemberStore.member(name, role: role, password: try MembersCommand.readPassword())))
                } else {
                    try MemberStore(directory: try global.open()).add(name, role: role, password: try MembersCommand.readPassword())
                }
            } catch let error as TallyCore.ValidationError {
                throw CLIError("\(error.message)")
            }
            print("Added \(role.rawValue) \(name).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the members and their roles.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var hosted: ClusterLedgerOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let members = try await hosted.onFolder(else: global) { try MemberStore(folder: $0).all() }
            if json {
                print(JSONText.array(members.map { .object([("name", .string($0.name)), ("role", .string($0.role.rawValue))]) }).serialized)
            } else {
                print(Table.render(header: ["NAME", "ROLE", "SINCE"], rows: members.map { [$0.name, $0.role.rawValue, $0.createdAt] }))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a member; their sessions end at once.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var hosted: ClusterLedgerOptions
        @Argument(help: "The member.") var name: String

        func run() async throws {
            if let target = try hosted.target() {
                try await target.make(.removeMember(name: name))
            } else {
                do {
                    guard try MemberStore(directory: try global.open()).remove(name) else { throw CLIError("no member named '\(name)'") }
                } catch let error as TallyCore.ValidationError {
                    throw CLIError("\(error.message)")
                }
            }
            print("Removed \(name).")
        }
    }

    struct Invite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a one-time invitation (7 days) and print its code.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var hosted: ClusterLedgerOptions
        @Option(help: "The role it gives: owner, member or read-only.") var role = "member"

        func run() async throws {
            let role = try MembersCommand.role(role)
            // The operator's, not a member's: stored as made (`invite(role:by:)` is a member's,
            // and stores one only for an owner).
            let (code, invitation) = MemberStore.invitation(role: role, by: "operator")
            if let target = try hosted.target() {
                try await target.make(.addInvitation(invitation))
            } else {
                try MemberStore(directory: try global.open()).add(invitation)
            }
            print(code)
        }
    }
}
