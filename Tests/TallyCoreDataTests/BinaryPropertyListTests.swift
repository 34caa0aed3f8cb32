import Foundation
import XCTest
@testable import TallyCoreData

final class BinaryPropertyListTests: XCTestCase {
    /// A `bplist00` of `objects` (each encoded, marker byte first) with 1-byte offsets and
    /// references, as CFBinaryPList.c lays one out.
    private func bplist(_ objects: [[UInt8]], top: Int = 0) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(bytes.count))
            bytes += object
        }
        let table = bytes.count
        bytes += offsets
        func bigEndian(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + bigEndian(objects.count) + bigEndian(top) + bigEndian(table)
        return Data(bytes)
    }

    func testReadsEachKindOfObject() throws {
        let data = bplist([
            [0xA6, 1, 2, 3, 4, 5, 6],
            [0x53] + Array("abc".utf8),
            [0x11, 0x01, 0x00],  // 256
            [0x23] + withUnsafeBytes(of: (1.5).bitPattern.bigEndian) { Array($0) },
            [0x09],
            [0x62, 0x00, 0x41, 0x20, 0xAC],  // UTF-16BE "A€"
            [0x42, 0xDE, 0xAD],
        ])
        XCTAssertEqual(
            try BinaryPropertyList.parse(data),
            .array([.string("abc"), .integer(256), .real(1.5), .bool(true), .string("A€"), .data(Data([0xDE, 0xAD]))]))
    }

    func testCraftedListsAreRefusedNotTrapped() {
        let crafted: [(String, Data)] = [
            ("an array containing itself", bplist([[0xA1, 0x00]])),
            ("a reference past the objects", bplist([[0xA1, 0x05]])),
            ("an integer key", bplist([[0xD1, 1, 2], [0x10, 0x01], [0x10, 0x02]])),
            ("a string longer than the data", bplist([[0x5F, 0x10, 0xFF, 0x41]])),
            ("a truncated file", bplist([[0x53] + Array("abc".utf8)]).dropLast(5)),
            ("no header", Data("not a plist at all, not even close to one".utf8)),
            ("an unknown marker", bplist([[0x70]])),
            ("a 16-byte integer past 64 bits", bplist([[0x14] + [UInt8](repeating: 0x7F, count: 16)])),
            // 40 arrays, each holding the next one twice: 2^40 visits if walked naively.
            ("a shared graph", bplist((0..<40).map { [0xA2, UInt8($0 + 1), UInt8($0 + 1)] } + [[0x10, 0x07]])),
        ]
        for (what, data) in crafted {
            XCTAssertThrowsError(try BinaryPropertyList.parse(data), what) { error in
                XCTAssertTrue(error is PropertyListError, "\(what): \(error)")
            }
        }
    }

    func testKeyedArchivesOfStringsAreDecoded() throws {
        let archive = try CoreDataStoreBuilder.archivedStrings(["b", "a", "b"])
        XCTAssertEqual(try ArchivedStrings.strings(from: archive), ["b", "a", "b"])
        XCTAssertEqual(try ArchivedStrings.strings(from: CoreDataStoreBuilder.archivedStrings([])), [])
        XCTAssertEqual(try ArchivedStrings.strings(from: Data(#"["x","y"]"#.utf8)), ["x", "y"])
        XCTAssertThrowsError(try ArchivedStrings.strings(from: Data([0xFF, 0x00])))
    }

    func testExternalStorageMarkers() throws {
        let name = UUID().uuidString
        XCTAssertEqual(try ExternalBinary.parse(Data([0x01, 0xAA])), .inline(Data([0xAA])))
        XCTAssertEqual(try ExternalBinary.parse(Data([0x02]) + Data(name.utf8) + Data([0x00])), .external(name: name))
        XCTAssertEqual(try ExternalBinary.parse(Data([0x02]) + Data(name.utf8)), .external(name: name))
        XCTAssertEqual(try ExternalBinary.parse(Data([0xFF, 0xD8])), .inline(Data([0xFF, 0xD8])))
        XCTAssertThrowsError(try ExternalBinary.parse(Data([0x02]) + Data("../../../../etc/passwd".utf8) + Data([0x00])))
    }
}
