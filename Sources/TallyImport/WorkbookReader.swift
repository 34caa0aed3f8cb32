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
    public static let maxPartBytes = 16 << 20
    public static let maxTotalBytes = 48 << 20
    /// XML nested deeper than this is refused before the parser sees it (a sheet is 4 deep).
    static let maxDepth = 32
    /// A row's cells are padded to their column: bounded by `StatementBounds.maxColumns`.
    public static let maxCellsPerRow = StatementBounds.maxColumns
    public static let maxRows = 1_000_000
    /// The most sheets a workbook may have (each looked up among the archive's entries).
    public static let maxSheets = 256
    /// The most XML elements in all the parts read. XMLCoder builds ~1 KB of tree per element
    /// (measured: 206 MB for a sheet of 100,000 one-cell rows), so this bounds its memory to
    /// ~250 MB — a statement of ~12,000 rows of ten cells.
    public static let maxElements = 250_000
    /// The most cells all rows may hold once padded to their columns (a row of one cell in
    /// column 200 holds 200): 2,000,000, ~32 MB.
    public static let maxCells = 2_000_000

    public static func sheets(of data: Data) throws(StatementError) -> [StatementSheet] {
        // ZIPFoundation traps (instead of throwing) on offsets past the end of the data: the
        // archive's directory is checked to lie within the file first.
        try checkZipDirectory(data)
        let archive: Archive
        do { archive = try Archive(data: data, accessMode: .read) } catch { throw StatementError("not an .xlsx workbook (not a zip archive)") }
        // Each entry by its path, the first of a name as `archive[path]` gives it: looked up
        // once, not by a walk of the whole archive for each part (`maxSheets` of them).
        var entries: [String: Entry] = [:]
        for entry in archive where entries[entry.path] == nil { entries[entry.path] = entry }
        var inflated = 0
        var elements = 0
        func part(_ path: String) throws(StatementError) -> Data? {
            guard let entry = entries[path] else { return nil }
            var bytes = Data()
            do {
                let crc = try archive.extract(entry, skipCRC32: false) { chunk in
                    guard bytes.count + chunk.count <= maxPartBytes, inflated + chunk.count <= maxTotalBytes else {
                        throw StatementError("the workbook's part \(path) inflates past \(maxPartBytes >> 20) MiB")
                    }
                    bytes.append(chunk)
                    inflated += chunk.count
                }
                guard crc == entry.checksum else { throw StatementError("the workbook's part \(path) is damaged (its checksum does not match)") }
            } catch let error as StatementError { throw error } catch { throw StatementError("the workbook's part \(path) cannot be read: \(error)") }
            // Foundation's XML parser traps on invalid UTF-8 in names, XMLCoder's tree on deep
            // nesting: both are refused here first.
            guard StatementEncoding.firstInvalidUTF8(Array(bytes)[...]) == nil else { throw StatementError("the workbook's part \(path) is not UTF-8") }
            let shape = xmlShape(bytes)
            guard !shape.declares else { throw StatementError("the workbook's part \(path) declares a document type or entities") }
            guard shape.depth <= maxDepth else { throw StatementError("the workbook's part \(path) nests deeper than \(maxDepth)") }
            elements += shape.elements
            guard elements <= maxElements else {
                throw StatementError("the workbook holds more than \(maxElements) XML elements (rows, cells and values); split it, or save it as CSV")
            }
            return bytes
        }
        func decode<T: Decodable>(_ type: T.Type, _ path: String) throws(StatementError) -> T? {
            guard let bytes = try part(path) else { return nil }
            let decoder = XMLDecoder(trimValueWhitespaces: false)
            do { return try decoder.decode(T.self, from: bytes) } catch {
                throw StatementError("the workbook's part \(path) is not the XML it should be: \(error)")
            }
        }

        guard let workbook = try decode(Workbook.self, "xl/workbook.xml") else { throw StatementError("not an .xlsx workbook (no xl/workbook.xml)") }
        guard workbook.sheets.sheet.count <= maxSheets else { throw StatementError("the workbook has more than \(maxSheets) sheets") }
        let relationships = try decode(Relationships.self, "xl/_rels/workbook.xml.rels")?.relationship ?? []
        let targets = Dictionary(relationships.map { ($0.id, $0.target) }, uniquingKeysWith: { first, _ in first })
        let shared = (try decode(SharedStrings.self, "xl/sharedStrings.xml")?.si ?? []).map(\.text)
        var sheets: [StatementSheet] = []
        var read: Set<String> = []
        var paddedCells = 0
        for sheet in workbook.sheets.sheet {
            guard let target = targets[sheet.relationship] else {
                throw StatementError("the workbook names a sheet '\(sheet.name)' it does not hold")
            }
            let path = target.hasPrefix("/") ? String(target.dropFirst()) : "xl/" + target
            guard read.insert(path).inserted else { throw StatementError("two sheets of the workbook are the same part (\(path))") }
            guard let worksheet = try decode(Worksheet.self, path) else { throw StatementError("the sheet '\(sheet.name)' is missing (\(path))") }
            var rows: [(Int, [String])] = []
            var lastNumber = 0
            for row in worksheet.sheetData.row ?? [] {
                let number = row.r ?? lastNumber + 1
                guard number > lastNumber, number <= maxRows else {
                    throw StatementError("the sheet '\(sheet.name)' has rows out of order or past row \(maxRows)")
                }
                lastNumber = number
                var cells: [String] = []
                for cell in row.c ?? [] {
                    let column = try cell.r.map { reference throws(StatementError) in try columnIndex(reference, sheet: sheet.name) } ?? cells.count
                    guard column >= cells.count, column < maxCellsPerRow else {
                        throw StatementError("the sheet '\(sheet.name)' row \(number) has cells out of order or past column \(maxCellsPerRow)")
                    }
                    paddedCells += column - cells.count + 1
                    guard paddedCells <= maxCells else {
                        throw StatementError("the workbook's rows hold more than \(maxCells) cells; split it, or save it as CSV")
                    }
                    cells.append(contentsOf: repeatElement("", count: column - cells.count))
                    cells.append(try text(of: cell, shared: shared, sheet: sheet.name))
                }
                rows.append((number, cells))
            }
            sheets.append(StatementSheet(name: sheet.name, rows: rows))
        }
        return sheets
    }

    /// How deep `xml` nests its elements, how many it opens, and whether it declares anything
    /// (`<!DOCTYPE`, `<!ENTITY`: no workbook part does, and entities can expand). One pass:
    /// each tag read to its `>` (quoted attribute values skipped, so they cannot hide a level),
    /// comments, processing instructions and CDATA skipped whole (a quote inside one once
    /// hid every element after it from this count).
    static func xmlShape(_ xml: Data) -> (depth: Int, elements: Int, declares: Bool) {
        xml.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var (depth, deepest, elements) = (0, 0, 0)
            func opens(_ text: StaticString, at index: Int) -> Bool {
                let count = text.utf8CodeUnitCount
                guard index + count <= bytes.count else { return false }
                return (0..<count).allSatisfy { bytes[index + $0] == text.utf8Start[$0] }
            }
            /// The index just past the first `end` at or after `index` (the end when there is none).
            func past(_ end: StaticString, from index: Int) -> Int {
                var at = index
                while at < bytes.count, !opens(end, at: at) { at += 1 }
                return min(bytes.count, at + end.utf8CodeUnitCount)
            }
            var at = 0
            while at < bytes.count {
                guard bytes[at] == UInt8(ascii: "<") else {
                    at += 1
                    continue
                }
                if opens("<!--", at: at) {
                    at = past("-->", from: at + 4)
                } else if opens("<![CDATA[", at: at) {
                    at = past("]]>", from: at + 9)
                } else if opens("<?", at: at) {
                    at = past("?>", from: at + 2)
                } else if opens("<!", at: at) {
                    return (deepest, elements, true)
                } else {
                    let closing = at + 1 < bytes.count && bytes[at + 1] == UInt8(ascii: "/")
                    var end = at + 1
                    var quote: UInt8?
                    while end < bytes.count {
                        let byte = bytes[end]
                        if let open = quote {
                            if byte == open { quote = nil }
                        } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                            quote = byte
                        } else if byte == UInt8(ascii: ">") {
                            break
                        }
                        end += 1
                    }
                    if closing {
                        depth -= 1
                    } else {
                        (depth, elements) = (depth + 1, elements + 1)
                        deepest = max(deepest, depth)
                        if end < bytes.count, bytes[end - 1] == UInt8(ascii: "/") { depth -= 1 }
                    }
                    at = end + 1
                }
            }
            return (deepest, elements, false)
        }
    }

    /// Checks that a zip archive's end record and central directory, and every entry's local
    /// header and data, lie within `data` (ZIP64 sizes are refused: no statement needs them).
    static func checkZipDirectory(_ data: Data) throws(StatementError) {
        let bytes = [UInt8](data)
        let problem = StatementError("not an .xlsx workbook (not a zip archive, or a damaged one)")
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        /// Eight bytes at `at`, nil past the end.
        func u64(_ at: Int) -> UInt64? { at >= 0 && at + 8 <= bytes.count ? UInt64(u32(at)) | UInt64(u32(at + 4)) << 32 : nil }
        guard bytes.count >= 22 else { throw problem }
        var end = bytes.count - 22
        let lowest = max(0, bytes.count - 22 - 65_535)
        while end >= lowest, !(bytes[end] == 0x50 && bytes[end + 1] == 0x4B && bytes[end + 2] == 0x05 && bytes[end + 3] == 0x06) { end -= 1 }
        guard end >= lowest else { throw problem }
        let (count, size, offset) = (u16(end + 10), u32(end + 12), u32(end + 16))
        guard count != 0xFFFF, size != 0xFFFF_FFFF, offset != 0xFFFF_FFFF, offset + size <= end else { throw problem }
        // A ZIP64 end record (Apache Commons Compress, under POI, may write one): ZIPFoundation
        // would take the directory's place and size from it instead, so they must be the ones
        // just checked. An entry's ZIP64 extra field is read only for a size or offset of
        // 0xFFFFFFFF, which is refused below.
        if end >= 20, u32(end - 20) == 0x0706_4B50 {
            guard end >= 76, let record = u64(end - 12).flatMap({ $0 <= UInt64(end - 76) ? Int($0) : nil }), u32(record) == 0x0606_4B50,
                u64(record + 32) == UInt64(count), u64(record + 40) == UInt64(size), u64(record + 48) == UInt64(offset)
            else { throw problem }
        }
        var at = offset
        for _ in 0..<count {
            guard at + 46 <= offset + size, u32(at) == 0x0201_4B50 else { throw problem }
            let (flags, method, compressed, uncompressed) = (u16(at + 8), u16(at + 10), u32(at + 20), u32(at + 24))
            let (nameLength, extraLength, commentLength, local) = (u16(at + 28), u16(at + 30), u16(at + 32), u32(at + 42))
            guard compressed != 0xFFFF_FFFF, uncompressed != 0xFFFF_FFFF, local != 0xFFFF_FFFF, local + 30 <= offset, u32(local) == 0x0403_4B50
            else { throw problem }
            let dataStart = local + 30 + u16(local + 26) + u16(local + 28)
            guard dataStart + compressed <= offset else { throw problem }
            // Stored (its sizes equal) or deflated: ZIPFoundation finds a stored entry's data
            // descriptor by its uncompressed size, and a size past the file's end trapped it.
            guard method == 8 || (method == 0 && compressed == uncompressed) else { throw problem }
            if flags & 0x0008 != 0 { guard dataStart + compressed + 12 <= offset else { throw problem } }  // 12 bytes, 16 with its signature
            at += 46 + nameLength + extraLength + commentLength
        }
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
