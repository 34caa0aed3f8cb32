import Foundation
import TallyCore

/// Where a command's output goes — standard output, standard error, or the file `--out` names
/// — without crashing on a write that fails (a full disk behind `>`), without replacing what
/// is not a regular file (`--out /dev/stdout`, a pipe, a device), and without sending a
/// terminal the control characters of what someone typed or a file held.
enum Output {
    /// Writes `data` to standard output; a write that fails is an error (exit 1), not a crash.
    static func standardOutput(_ data: Data) throws {
        do { try FileHandle.standardOutput.write(contentsOf: data) } catch {
            throw CLIError("cannot write to standard output: \(reason(error))")
        }
    }

    /// Writes `text` to standard error, for the person at the terminal: if it cannot be
    /// written, there is no one left to tell.
    static func standardError(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
    }

    /// Writes `data` to the file at `path`. A new file, or a regular one, gets `data` whole:
    /// written beside it and renamed over it, so no reader sees half of it. A terminal, a pipe
    /// or a device — such as `/dev/null`, or `/dev/stdout` when it is one — is written to where
    /// it is, never replaced (renaming over `/dev/null` would replace the device with a file)
    /// nor truncated. A link to a file is refused: writing through it could empty what the
    /// shell appends to (`--out /dev/stdout >> log`) or a file someone linked there.
    static func file(_ data: Data, at path: String) throws {
        var status = stat()
        if lstat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            var target = status
            if status.st_mode & S_IFMT == S_IFLNK, stat(path, &target) != 0 || target.st_mode & S_IFMT == S_IFREG || target.st_mode & S_IFMT == S_IFDIR {
                throw CLIError("cannot write \(path): it is a link; name the file itself, or leave --out out to write to standard output")
            }
            guard target.st_mode & S_IFMT != S_IFDIR else { throw CLIError("cannot write \(path): it is a folder") }
            let descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY)
            guard descriptor >= 0 else { throw CLIError("cannot write \(path): \(String(cString: strerror(errno)))") }
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            do { try handle.write(contentsOf: data) } catch { throw CLIError("cannot write \(path): \(reason(error))") }
            return
        }
        do { try data.write(to: URL(fileURLWithPath: path), options: .atomic) } catch {
            throw CLIError("cannot write \(path): \(reason(error))")
        }
    }

    /// What went wrong, in the system's words ("No space left on device"), not Foundation's
    /// "The operation could not be completed".
    static func reason(_ error: any Error) -> String {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(error.code))) }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? any Error { return reason(underlying) }
        return error.localizedDescription
    }

    /// `text` with its control characters (but line feeds and tabs) shown as escapes, `\u{1B}`:
    /// a message quoting an id, a peer's name or a file's cell cannot move the cursor, clear
    /// the screen or retitle the terminal it is printed on.
    static func printable(_ text: String) -> String {
        guard ControlCharacters.occur(in: text, allowingTabAndNewline: true) else { return text }
        var shown = ""
        for scalar in text.unicodeScalars {
            if ControlCharacters.isControl(scalar), scalar != "\n", scalar != "\t" {
                shown += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }
}
