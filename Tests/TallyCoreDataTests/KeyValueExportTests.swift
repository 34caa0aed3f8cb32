import Foundation
import TallyTestSupport
import XCTest
@testable import TallyCoreData

final class KeyValueExportTests: XCTestCase {
    private let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
            <key>currency</key><string>KRW</string>
            <key>budget</key><integer>500000</integer>
            <key>ratio</key><real>0.25</real>
            <key>darkMode</key><true/>
            <key>since</key><date>2024-05-01T09:30:00Z</date>
            <key>blob</key><data>AQID</data>
            <key>categories</key><array><string>Food</string><string>Rent</string></array>
            <key>limits</key><dict><key>food</key><integer>300000</integer><key>alerts</key><false/></dict>
        </dict>
        </plist>
        """

    private let expected = [
        #"blob="AQID""#, "budget=500000", #"categories=["Food","Rent"]"#, #"currency="KRW""#, "darkMode=true",
        #"limits={"alerts":false,"food":300000}"#, "ratio=0.25", #"since="2024-05-01T09:30:00Z""#,
    ]

    func testXMLSettingsBecomeCanonicalJSON() throws {
        let folder = TemporaryDirectory("coredata-settings")
        let file = folder.file("settings.plist")
        try Data(xml.utf8).write(to: URL(fileURLWithPath: file))

        let settings = try KeyValueExport.readSettings(plistFile: file)

        XCTAssertEqual(settings.map { "\($0.key)=\($0.value)" }, expected)
    }

    func testBinarySettingsReadTheSame() throws {
        let folder = TemporaryDirectory("coredata-settings")
        let file = folder.file("settings.plist")
        let object = try PropertyListSerialization.propertyList(from: Data(xml.utf8), options: [], format: nil)
        try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0).write(to: URL(fileURLWithPath: file))

        let settings = try KeyValueExport.readSettings(plistFile: file)

        XCTAssertEqual(settings.map { "\($0.key)=\($0.value)" }, expected)
    }

    func testWhatIsNotASettingsDictionaryIsRefused() throws {
        let folder = TemporaryDirectory("coredata-settings")
        let array = folder.file("array.plist")
        try Data(#"<?xml version="1.0"?><plist version="1.0"><array><string>a</string></array></plist>"#.utf8)
            .write(to: URL(fileURLWithPath: array))
        XCTAssertThrowsError(try KeyValueExport.readSettings(plistFile: array)) { error in
            XCTAssertEqual((error as? CoreDataStoreError)?.code, .invalidSettings, "\(error)")
        }
        let deep = folder.file("deep.plist")
        let nested = String(repeating: "<array>", count: 500) + String(repeating: "</array>", count: 500)
        try Data(#"<?xml version="1.0"?><plist version="1.0">\#(nested)</plist>"#.utf8).write(to: URL(fileURLWithPath: deep))
        XCTAssertThrowsError(try KeyValueExport.readSettings(plistFile: deep)) { error in
            XCTAssertEqual((error as? CoreDataStoreError)?.code, .invalidSettings, "\(error)")
        }
        XCTAssertThrowsError(try KeyValueExport.readSettings(plistFile: folder.file("missing.plist"))) { error in
            XCTAssertEqual((error as? CoreDataStoreError)?.code, .cannotOpen, "\(error)")
        }
    }
}
