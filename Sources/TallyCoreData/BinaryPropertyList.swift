import Foundation

/// A reader of binary property lists (`bplist00`), written here rather than taken from
/// Foundation because of what the stores hold: NSKeyedArchiver archives are made of `UID`
/// references, which `PropertyListSerialization` hands back as an opaque private class on
/// Linux; and swift-corelibs-foundation stops the process (`fatalError`) on a dictionary key
/// that is not a string, which a crafted binary plist can hold. Here every offset, count and
/// reference is checked against the data, nesting is at most 64 deep (so a reference cycle
/// ends), and at most 200,000 objects are visited (so a graph sharing one array at every level
/// cannot blow up 2^64-fold). Anything off is a thrown `PropertyListError`, never a trap.
///
/// Format: a `bplist00` header, the objects, a table of object offsets, and a 32-byte trailer
/// (offset width, reference width, object count, top object, table offset), all big-endian;
/// each object opens with a marker byte whose high nibble is its type and low nibble its size
/// (15: the size follows as an integer object). As written by CoreFoundation's CFBinaryPList.c.
struct BinaryPropertyList {
    /// Nesting bound: arrays and dictionaries at most this deep.
    static let maxDepth = 64
    /// Objects visited in one parse, counting shared ones each time they are reached.
    static let maxVisits = 200_000
    /// The 8 bytes every binary plist starts with.
    static let magic = Array("bplist00".utf8)

    /// Whether `bytes` starts like a binary plist.
    static func isBinaryPropertyList(_ bytes: Data) -> Bool { bytes.starts(with: magic) }

    /// The top object of the binary plist `bytes`.
    static func parse(_ bytes: Data) throws -> PropertyListValue {
        var reader = try BinaryPropertyList(Array(bytes))
        let top = reader.topObject
        return try reader.object(top, depth: 0)
    }

    private let bytes: [UInt8]
    private let offsetWidth: Int
    private let referenceWidth: Int
    private let objectCount: Int
    private let topObject: Int
    /// Where the offset table starts: objects lie between the header and here.
    private let tableStart: Int
    private var visits = 0

    private init(_ bytes: [UInt8]) throws {
        guard bytes.count >= Self.magic.count + 1 + 32, bytes.starts(with: Self.magic) else {
            throw PropertyListError("not a binary property list (no bplist00 header, or too short)")
        }
        self.bytes = bytes
        let trailer = bytes.count - 32
        offsetWidth = Int(bytes[trailer + 6])
        referenceWidth = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetWidth), (1...8).contains(referenceWidth) else {
            throw PropertyListError("offset or reference width out of range")
        }
        let count = Self.unsigned(bytes, at: trailer + 8, width: 8)
        let top = Self.unsigned(bytes, at: trailer + 16, width: 8)
        let table = Self.unsigned(bytes, at: trailer + 24, width: 8)
        // The table lies between the header and the trailer and holds `count` offsets.
        guard table >= UInt64(Self.magic.count), table <= UInt64(trailer), count >= 1,
            count <= (UInt64(trailer) - table) / UInt64(offsetWidth), top < count
        else { throw PropertyListError("trailer does not describe the file (object count, top object or offset table)") }
        objectCount = Int(count)  // at most the file's size, checked above
        topObject = Int(top)
        tableStart = Int(table)
    }

    /// Big-endian unsigned integer of `width` (1…8) bytes at `offset`; the caller checked bounds.
    private static func unsigned(_ bytes: [UInt8], at offset: Int, width: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + width) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    /// `width` bytes at `offset`, which must lie within the objects (before the offset table).
    private func unsigned(at offset: Int, width: Int) throws -> UInt64 {
        guard offset >= Self.magic.count, width <= tableStart, offset <= tableStart - width else {
            throw PropertyListError("an object runs past the object area")
        }
        return Self.unsigned(bytes, at: offset, width: width)
    }

    /// Where object number `reference` starts.
    private func offset(of reference: Int) throws -> Int {
        guard reference >= 0, reference < objectCount else { throw PropertyListError("object reference \(reference) out of range") }
        let offset = Self.unsigned(bytes, at: tableStart + reference * offsetWidth, width: offsetWidth)
        guard offset >= UInt64(Self.magic.count), offset < UInt64(tableStart) else {
            throw PropertyListError("object \(reference) starts outside the object area")
        }
        return Int(offset)
    }

    /// A count from a marker's low nibble, or from the integer object after it (nibble 15);
    /// returns the count and where the content starts.
    private func sizeAndContent(info: UInt8, at start: Int) throws -> (size: Int, content: Int) {
        guard info == 0x0F else { return (Int(info), start + 1) }
        let marker = try unsigned(at: start + 1, width: 1)
        guard marker >> 4 == 0x1, marker & 0x0F <= 3 else { throw PropertyListError("a length that is not an integer") }
        let width = 1 << Int(marker & 0x0F)
        let value = try unsigned(at: start + 2, width: width)
        guard value <= UInt64(tableStart) else { throw PropertyListError("a length past the end of the data") }
        return (Int(value), start + 2 + width)
    }

    /// `length` bytes of content at `content`, checked to lie before the offset table.
    private func slice(_ content: Int, _ length: Int) throws -> ArraySlice<UInt8> {
        guard length >= 0, content <= tableStart, length <= tableStart - content else {
            throw PropertyListError("an object runs past the object area")
        }
        return bytes[content..<(content + length)]
    }

    /// `count` object references at `content`.
    private func references(_ content: Int, _ count: Int) throws -> [Int] {
        guard count <= (tableStart - min(content, tableStart)) / referenceWidth else {
            throw PropertyListError("a collection's references run past the object area")
        }
        return try (0..<count).map { index in
            let reference = try unsigned(at: content + index * referenceWidth, width: referenceWidth)
            guard reference < UInt64(objectCount) else { throw PropertyListError("object reference \(reference) out of range") }
            return Int(reference)
        }
    }

    private mutating func object(_ reference: Int, depth: Int) throws -> PropertyListValue {
        guard depth <= Self.maxDepth else { throw PropertyListError("nested deeper than \(Self.maxDepth) (or a reference cycle)") }
        visits += 1
        guard visits <= Self.maxVisits else { throw PropertyListError("more than \(Self.maxVisits) objects") }
        let start = try offset(of: reference)
        let marker = bytes[start]
        let info = marker & 0x0F
        switch marker >> 4 {
        case 0x0:
            switch info {
            case 0x0: return .null
            case 0x8: return .bool(false)
            case 0x9: return .bool(true)
            default: throw PropertyListError("unknown marker 0x\(String(marker, radix: 16))")
            }
        case 0x1:
            let value = try integer(info: info, at: start + 1)
            return .integer(value)
        case 0x2:
            switch info {
            case 2:
                let bits = try unsigned(at: start + 1, width: 4)
                return .real(Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits))))
            case 3:
                let bits = try unsigned(at: start + 1, width: 8)
                return .real(Double(bitPattern: bits))
            default: throw PropertyListError("a real of unsupported width")
            }
        case 0x3:
            guard info == 3 else { throw PropertyListError("a date of unsupported width") }
            let bits = try unsigned(at: start + 1, width: 8)
            return .date(Double(bitPattern: bits))
        case 0x4:
            let (length, content) = try sizeAndContent(info: info, at: start)
            let data = try slice(content, length)
            return .data(Data(data))
        case 0x5:
            let (length, content) = try sizeAndContent(info: info, at: start)
            let ascii = try slice(content, length)
            guard ascii.allSatisfy({ $0 < 0x80 }) else { throw PropertyListError("an ASCII string with non-ASCII bytes") }
            return .string(String(decoding: ascii, as: UTF8.self))
        case 0x6:
            let (units, content) = try sizeAndContent(info: info, at: start)
            guard units <= tableStart / 2 else { throw PropertyListError("a string runs past the object area") }
            let raw = try slice(content, units * 2)
            var utf16: [UInt16] = []
            utf16.reserveCapacity(units)
            var index = raw.startIndex
            while index < raw.endIndex {
                utf16.append(UInt16(raw[index]) << 8 | UInt16(raw[index + 1]))
                index += 2
            }
            return .string(String(decoding: utf16, as: UTF16.self))
        case 0x8:
            guard info <= 7 else { throw PropertyListError("a UID wider than 8 bytes") }
            let value = try unsigned(at: start + 1, width: Int(info) + 1)
            return .uid(value)
        case 0xA, 0xC:  // array; set (kept as an array)
            let (itemCount, content) = try sizeAndContent(info: info, at: start)
            var items: [PropertyListValue] = []
            for item in try references(content, itemCount) {
                let value = try object(item, depth: depth + 1)
                items.append(value)
            }
            return .array(items)
        case 0xD:
            let (entryCount, content) = try sizeAndContent(info: info, at: start)
            guard entryCount <= Int.max / 2 else { throw PropertyListError("a dictionary too large") }
            let refs = try references(content, entryCount * 2)
            var entries: [String: PropertyListValue] = [:]
            for index in 0..<entryCount {
                let keyValue = try object(refs[index], depth: depth + 1)
                guard case .string(let key) = keyValue else {
                    throw PropertyListError("a dictionary key that is not a string")
                }
                guard entries[key] == nil else { throw PropertyListError("a dictionary with the key \(key) twice") }
                let value = try object(refs[entryCount + index], depth: depth + 1)
                entries[key] = value
            }
            return .dictionary(entries)
        default:
            throw PropertyListError("unknown marker 0x\(String(marker, radix: 16))")
        }
    }

    /// An integer of 2^info bytes: 1, 2 and 4 bytes are unsigned, 8 signed, 16 a signed 128-bit
    /// value that must fit in 64 bits.
    private func integer(info: UInt8, at content: Int) throws -> Int64 {
        switch info {
        case 0, 1, 2:
            let value = try unsigned(at: content, width: 1 << Int(info))
            return Int64(value)  // at most 2^32 - 1
        case 3:
            let bits = try unsigned(at: content, width: 8)
            return Int64(bitPattern: bits)
        case 4:
            let high = try unsigned(at: content, width: 8)
            let lowBits = try unsigned(at: content + 8, width: 8)
            let low = Int64(bitPattern: lowBits)
            guard (high == 0 && low >= 0) || (high == UInt64.max && low < 0) else {
                throw PropertyListError("an integer that does not fit in 64 bits")
            }
            return low
        default: throw PropertyListError("an integer of unsupported width")
        }
    }
}

/// Why a property list could not be read.
struct PropertyListError: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
