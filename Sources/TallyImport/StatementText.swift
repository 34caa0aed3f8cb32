import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// The character encodings statement files come in, and how a file's bytes become text.
///
/// Korean banks and card companies export CSV in CP949 (EUC-KR's superset) as often as in
/// UTF-8; spreadsheet programs save "Unicode text" as UTF-16. A byte-order mark says which
/// UTF it is; without one, bytes that are valid UTF-8 are UTF-8, and anything else is read
/// as CP949 (through the C library's iconv, which knows it) — or refused, naming the byte.
public enum StatementEncoding: String, Sendable, CaseIterable {
    case utf8 = "utf-8"
    case utf16le = "utf-16le"
    case utf16be = "utf-16be"
    case cp949 = "cp949"

    /// Reads `--encoding` names: utf-8, utf8, utf-16 (byte-order mark decides), utf-16le,
    /// utf-16be, cp949, euc-kr (read as CP949, its superset).
    public init?(name: String) {
        switch name.lowercased() {
        case "utf-8", "utf8": self = .utf8
        case "utf-16le", "utf16le": self = .utf16le
        case "utf-16be", "utf16be", "utf-16", "utf16": self = .utf16be  // a BOM, if present, still decides
        case "cp949", "euc-kr", "euckr", "ms949", "uhc": self = .cp949
        default: return nil
        }
    }

    /// The text of `bytes`, in `encoding` if given (a byte-order mark still wins for the
    /// UTF-16 pair), else detected; the encoding used.
    public static func decode(_ bytes: [UInt8], as chosen: StatementEncoding? = nil) throws(StatementError) -> (text: String, encoding: StatementEncoding) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return (try utf8(bytes.dropFirst(3)), .utf8) }
        if bytes.starts(with: [0xFF, 0xFE]) { return (try utf16(bytes.dropFirst(2), littleEndian: true), .utf16le) }
        if bytes.starts(with: [0xFE, 0xFF]) { return (try utf16(bytes.dropFirst(2), littleEndian: false), .utf16be) }
        switch chosen {
        case .utf8?: return (try utf8(bytes[...]), .utf8)
        case .utf16le?: return (try utf16(bytes[...], littleEndian: true), .utf16le)
        case .utf16be?: return (try utf16(bytes[...], littleEndian: false), .utf16be)
        case .cp949?: return (try cp949(bytes), .cp949)
        case nil:
            if firstInvalidUTF8(bytes[...]) == nil { return (String(decoding: bytes, as: UTF8.self), .utf8) }
            return (try cp949(bytes), .cp949)
        }
    }

    private static func utf8(_ bytes: ArraySlice<UInt8>) throws(StatementError) -> String {
        if let offset = firstInvalidUTF8(bytes) {
            throw StatementError("the file is not valid UTF-8 (byte \(offset)); give --encoding cp949 or utf-16le if it is one of those")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The offset of the first byte that is not valid UTF-8, or nil; one pass.
    static func firstInvalidUTF8(_ bytes: ArraySlice<UInt8>) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    private static func utf16(_ bytes: ArraySlice<UInt8>, littleEndian: Bool) throws(StatementError) -> String {
        guard bytes.count % 2 == 0 else { throw StatementError("the file is not UTF-16: an odd number of bytes") }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let (first, second) = (UInt16(bytes[index]), UInt16(bytes[index + 1]))
            units.append(littleEndian ? first | second << 8 : first << 8 | second)
            index += 2
        }
        guard let text = String(validating: units, as: UTF16.self) else { throw StatementError("the file is not valid UTF-16 (an unpaired surrogate)") }
        return text
    }

    /// CP949 through iconv (glibc ships the conversion). Nothing is guessed: a byte sequence
    /// CP949 does not define is refused with its offset.
    private static func cp949(_ bytes: [UInt8]) throws(StatementError) -> String {
        try convert(bytes, from: "CP949", problem: { "the file is neither UTF-8 nor CP949 (byte \($0) is not a CP949 character); give --encoding" })
    }

    /// Windows-1252 (what an OFX file with CHARSET:1252 is in).
    static func windows1252(_ bytes: [UInt8]) throws(StatementError) -> String {
        try convert(bytes, from: "WINDOWS-1252", problem: { "byte \($0) is not Windows-1252" })
    }

    /// `bytes` in `encoding` (an iconv name) as text, or `problem(offset)`.
    private static func convert(_ bytes: [UInt8], from encoding: String, problem: (Int) -> String) throws(StatementError) -> String {
        let converter = iconv_open("UTF-8", encoding)
        guard converter != iconv_t(bitPattern: -1) else { throw StatementError("this system cannot convert \(encoding) (iconv lacks it)") }
        defer { iconv_close(converter) }
        guard !bytes.isEmpty else { return "" }
        var output = [UInt8](repeating: 0, count: bytes.count * 3 + 16)  // a character of 1–2 bytes is at most 3 bytes of UTF-8
        var input = bytes
        let (failed, consumed, produced): (Bool, Int, Int) = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(inputBuffer.baseAddress!).assumingMemoryBound(to: CChar.self)
                var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(outputBuffer.baseAddress!).assumingMemoryBound(to: CChar.self)
                var inLeft = inputBuffer.count, outLeft = outputBuffer.count
                let result = iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft)
                return (result == -1, inputBuffer.count - inLeft, outputBuffer.count - outLeft)
            }
        }
        guard !failed, let text = String(validating: output[..<produced], as: UTF8.self) else { throw StatementError(problem(consumed)) }
        return text
    }

    /// `text` as CP949 bytes (tests write statement files the way Korean banks do).
    public static func encodeCP949(_ text: String) throws(StatementError) -> [UInt8] {
        let converter = iconv_open("CP949", "UTF-8")
        guard converter != iconv_t(bitPattern: -1) else { throw StatementError("this system cannot convert to CP949") }
        defer { iconv_close(converter) }
        var input = Array(text.utf8)
        var output = [UInt8](repeating: 0, count: input.count * 2 + 16)
        let (failed, produced): (Bool, Int) = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                guard let inBase = inputBuffer.baseAddress else { return (false, 0) }
                var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(inBase).assumingMemoryBound(to: CChar.self)
                var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(outputBuffer.baseAddress!).assumingMemoryBound(to: CChar.self)
                var inLeft = inputBuffer.count, outLeft = outputBuffer.count
                let result = iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft)
                return (result == -1, outputBuffer.count - outLeft)
            }
        }
        guard !failed else { throw StatementError("the text has characters CP949 cannot hold") }
        return Array(output[..<produced])
    }
}

/// Why a statement file could not be read (the whole file, before any row).
public struct StatementError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
