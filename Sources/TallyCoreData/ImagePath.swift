import Foundation
import TallyCore

/// Finds the file an image-path attribute names in the caller's files folder. Apps save an
/// absolute path of their sandbox (which changes with every install), a file URL, or a bare
/// name; only the last path component is used, so a stored `../../x` can never reach outside
/// the folder, and the file must be a regular file (not a link) within the size bound.
enum ImagePath {
    /// The path of the file `stored` names inside `folder`.
    static func resolve(_ stored: String, in folder: String?, limit: Int64) throws -> String {
        var name = stored.split(separator: "/").last.map { String($0) } ?? ""
        if stored.hasPrefix("file:") { name = name.removingPercentEncoding ?? name }
        guard !name.isEmpty, name != ".", name != "..", !name.contains("\0"), !name.contains("/") else {
            throw FieldProblem("is \(JSONText.quote(String(stored.prefix(80)))), which names no file")
        }
        guard let folder else {
            throw FieldProblem("names the file \(JSONText.quote(name)), but no files folder was given")
        }
        let path = folder + "/" + name
        guard let size = BoundedFile.regularFileSize(path) else {
            throw FieldProblem("names the file \(JSONText.quote(name)), which is not in \(folder)")
        }
        guard size <= limit else { throw FieldProblem("names the file \(JSONText.quote(name)) of \(size) bytes, over the limit of \(limit)") }
        return path
    }
}
