import Foundation
import XMLCoder
import ZIPFoundation

/// One sheet of a statement: its name and its rows as text, each with its row number as the
/// file counts it (1-based: a spreadsheet's row, a CSV file's record).
public struct StatementSheet: Sendable {
    public var name: String
    public var rows: [(number: Int, cells: [String])]

    public init(name: String, rows: [(number: Int, cells: [String])]) { (self.name, self.rows) = (name, rows) }
}

/// Reads an Office Open XML workbook (`.xlsx`): a zip archive (ZIPFoundation) of XML parts
/// (XMLCoder) — the workbook's sheet list, its relationships, the shared strings and each
/// worksheet's cells. Every sheet is read, in workbook order, each cell as the text it holds:
/// a shared or inline string, or the number as written (a date cell is a serial day number,
/// which the date reader knows). Formulas give their cached value.
///
/// A workbook is hostile until read: at most `maxPartBytes` are inflated per part and
/// `maxTotalBytes` in all (a zip bomb stops there), and at most `Limits`-sized rows.
public enum WorkbookReader {
    public static let maxPartBytes = 64 << 20
    public static let maxTotalBytes = 256 << 20
    public static let maxCellsPerRow = 1_000
    public static let maxRows = 1_000_000

    public static func sheets(of data: Data) throws(StatementError) -> [StatementSheet] {
        let archive: Archive
        do { archive = try Archive(data: data, accessMode: .read) } catch { throw StatementError("not an .xlsx workbook (not a zip archive)") }
        var inflated = 0
        func part(_ path: String) throws(StatementError) -> Data? {
            guard let entry = archive[path] else { return nil }
            var bytes = Data()
            do {
                _ = try archive.extract(entry, skipCRC32: false) { chunk in
                    guard bytes.count + chunk.count <= maxPartBytes, inflated + chunk.count <= maxTotalBytes else { throw StatementError("the workbook's part \(path) inflates past \(maxPartBytes >> 20) MiB") }
                    bytes.append(chunk)
                    inflated += chunk.count
                }
            } catch let error as StatementError { throw error } catch { throw StatementError("the workbook's part \(path) cannot be read: \(error)") }
            return bytes
        }
        func decode<T: Decodable>(_ type: T.Type, _ path: String) throws(StatementError) -> T? {
            guard let bytes = try part(path) else { return nil }
            let decoder = XMLDecoder(trimValueWhitespaces: false)
            do { return try decoder.decode(T.self, from: bytes) } catch { throw StatementError("the workbook's part \(path) is not the XML it should be: \(error)") }
        }

        guard let workbook = try decode(Workbook.self, "xl/workbook.xml") else { throw StatementError("not an .xlsx workbook (no xl/workbook.xml)") }
        let relationships = try decode(Relationships.self, "xl/_rels/workbook.xml.rels")?.relationship ?? []
        let shared = (try decode(SharedStrings.self, "xl/sharedStrings.xml")?.si ?? []).map(\.text)
        var sheets: [StatementSheet] = []
        for sheet in workbook.sheets.sheet {
            guard let target = relationships.first(where: { $0.id == sheet.relationship })?.target else {
                throw StatementError("the workbook names a sheet '\(sheet.name)' it does not hold")
            }
            let path = target.hasPrefix("/") ? String(target.dropFirst()) : "xl/" + target
            guard let worksheet = try decode(Worksheet.self, path) else { throw StatementError("the sheet '\(sheet.name)' is missing (\(path))") }
            var rows: [(Int, [String])] = []
            var lastNumber = 0
            for row in worksheet.sheetData.row ?? [] {
                let number = row.r ?? lastNumber + 1
                guard number > lastNumber, number <= maxRows else { throw StatementError("the sheet '\(sheet.name)' has rows out of order or past row \(maxRows)") }
                lastNumber = number
                var cells: [String] = []
                for cell in row.c ?? [] {
                    let column = try cell.r.map { reference throws(StatementError) in try columnIndex(reference, sheet: sheet.name) } ?? cells.count
                    guard column >= cells.count, column < maxCellsPerRow else { throw StatementError("the sheet '\(sheet.name)' row \(number) has cells out of order or past column \(maxCellsPerRow)") }
                    cells.append(contentsOf: repeatElement("", count: column - cells.count))
                    cells.append(try text(of: cell, shared: shared, sheet: sheet.name))
                }
                rows.append((number, cells))
            }
            sheets.append(StatementSheet(name: sheet.name, rows: rows))
        }
        return sheets
    }

    /// A cell's text: a shared string by number, an inline string, or the value as written.
    static func text(of cell: Cell, shared: [String], sheet: String) throws(StatementError) -> String {
        switch cell.t {
        case "s":
            guard let value = cell.v, let index = Int(value), shared.indices.contains(index) else {
                throw StatementError("the sheet '\(sheet)' cell \(cell.r ?? "?") names a shared string the workbook does not have")
            }
            return shared[index]
        case "inlineStr": return cell.is?.text ?? ""
        default: return cell.v ?? ""  // n (number), str (a formula's text), b (0/1), d (ISO date), e (an error such as #N/A)
        }
    }

    /// "AB12" → 27 (0-based column).
    static func columnIndex(_ reference: String, sheet: String) throws(StatementError) -> Int {
        var column = 0
        var letters = 0
        for scalar in reference.unicodeScalars {
            guard ("A"..."Z").contains(scalar) else { break }
            column = column * 26 + Int(scalar.value - 64)
            letters += 1
            guard letters <= 3 else { break }
        }
        guard letters > 0, letters <= 3 else { throw StatementError("the sheet '\(sheet)' has a cell named '\(reference.prefix(16))'") }
        return column - 1
    }

    // The parts' XML, as much of it as a statement needs.

    struct Workbook: Decodable {
        struct Sheets: Decodable { var sheet: [Sheet] }
        struct Sheet: Decodable {
            var name: String
            var relationship: String
            enum CodingKeys: String, CodingKey { case name, relationship = "r:id" }
        }
        var sheets: Sheets
    }

    struct Relationships: Decodable {
        struct Relationship: Decodable {
            var id: String
            var target: String
            enum CodingKeys: String, CodingKey { case id = "Id", target = "Target" }
        }
        var relationship: [Relationship]?
        enum CodingKeys: String, CodingKey { case relationship = "Relationship" }
    }

    /// `<t>` text, with or without `xml:space="preserve"`.
    struct Text: Decodable {
        var value: String
        enum CodingKeys: String, CodingKey { case value = "" }
        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            value = (try? container.decode(String.self, forKey: .value)) ?? ""
        }
    }

    /// A string item: plain `<t>`, or rich-text runs `<r><t>…</t></r>` joined.
    struct StringItem: Decodable {
        struct Run: Decodable { var t: Text? }
        var t: Text?
        var r: [Run]?
        var text: String { t?.value ?? (r ?? []).map { $0.t?.value ?? "" }.joined() }
    }

    struct SharedStrings: Decodable { var si: [StringItem]? }

    struct Cell: Decodable {
        var r: String?
        var t: String?
        var v: String?
        var `is`: StringItem?
    }

    struct Worksheet: Decodable {
        struct SheetData: Decodable {
            struct Row: Decodable {
                var r: Int?
                var c: [Cell]?
            }
            var row: [Row]?
        }
        var sheetData: SheetData
    }
}
