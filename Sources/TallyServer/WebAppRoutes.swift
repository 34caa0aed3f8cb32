import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import TallyCore
import TallyWebApp

/// The web app (WebApp/, docs/WEBAPP.md): `/` answers its page, `/assets/VERSION/NAME` its
/// files. VERSION is a hash of every file, so an asset's URL changes whenever any file does
/// and assets can be cached for a year; the page itself is revalidated on every load. Both are
/// public (the app signs in with a token it sends to `/v1` itself) and carry a strict
/// Content-Security-Policy: scripts and styles from this origin only, none inline.
struct WebAppRoutes {
    /// The policy of every web app response. `img-src blob:` is for receipt thumbnails, which
    /// the app fetches with its token and shows as blob URLs.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
        + "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'"

    /// The assets by name and their version: WebApp/'s files, and `currencies.js`, made here
    /// from the table the service itself uses, so the app and the API never disagree about how
    /// many minor-unit digits a currency has (browsers' tables differ for 17 currencies).
    static let catalog = WebAssetCatalog(WebAssets.files + [currencyModule])

    static var currencyModule: (name: String, contentType: String, bytes: [UInt8]) {
        let table = Currency.minorUnitDigits.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
        let text = """
            // Made by the service (WebAppRoutes.currencyModule) from TallyCore's Currency table:
            // ISO 4217 code → digits of its minor unit, as the API counts amounts.
            export const minorUnitDigits = {\(table)};

            """
        return ("currencies.js", "text/javascript; charset=utf-8", Array(text.utf8))
    }

    /// Paths served without a token: the page, and exactly `/assets/<16 hex digits>/<name>`.
    /// Checked on every request, so by bytes (a regex literal was parsed anew on each call: a
    /// quarter of a small GET's time).
    static func isPublic(_ path: String) -> Bool {
        if path == "/" { return true }
        let bytes = Array(path.utf8)
        let prefix = Array("/assets/".utf8)
        guard bytes.count > prefix.count + 17, bytes.starts(with: prefix) else { return false }
        let version = bytes[prefix.count..<prefix.count + 16], name = bytes[(prefix.count + 17)...]
        guard bytes[prefix.count + 16] == UInt8(ascii: "/"), version.allSatisfy(isLowercaseHex) else { return false }
        // NAME.EXT: a name of letters, digits, _ and -, then one dot and a lowercase extension.
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > name.startIndex, dot < name.endIndex - 1 else { return false }
        return name[..<dot].allSatisfy(isNameByte) && name[(dot + 1)...].allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
    }

    private static func isLowercaseHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    func add(to router: Router<TallyRequestContext>) {
        let catalog = Self.catalog
        router.get("/") { _, _ in Self.response(catalog.page, contentType: "text/html; charset=utf-8", cache: "no-cache") }
        router.head("/") { _, _ in Self.response(catalog.page, contentType: "text/html; charset=utf-8", cache: "no-cache", bodyless: true) }
        for method in [HTTPRequest.Method.get, .head] {
            router.on("/assets/:version/:name", method: method) { _, context in
                guard context.parameters.get("version") == catalog.version, let name = context.parameters.get("name"),
                    let asset = catalog.assets[name], name != "index.html"
                else { throw APIError(.notFound, "not_found", "no such asset (the page may be from an older version: reload it)") }
                return Self.response(asset.bytes, contentType: asset.contentType, cache: "public, max-age=31536000, immutable", bodyless: method == .head)
            }
        }
    }

    static func response(_ bytes: [UInt8], contentType: String, cache: String, bodyless: Bool = false) -> Response {
        var headers: HTTPFields = [.contentType: contentType, .cacheControl: cache, .contentLength: String(bytes.count)]
        headers[HTTPField.Name("Content-Security-Policy")!] = contentSecurityPolicy
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        headers[HTTPField.Name("Permissions-Policy")!] = "geolocation=(), microphone=(), payment=(), usb=()"
        return Response(status: .ok, headers: headers, body: bodyless ? .init() : .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// The web app's files with their version: the page with `{{assets}}` replaced by
/// `/assets/VERSION`, and every other file by name.
struct WebAssetCatalog: Sendable {
    let version: String
    let page: [UInt8]
    let assets: [String: (contentType: String, bytes: [UInt8])]

    init(_ files: [(name: String, contentType: String, bytes: [UInt8])]) {
        var hash = SHA256()
        for file in files.sorted(by: { $0.name < $1.name }) {
            hash.update(data: Array(file.name.utf8) + [0])
            hash.update(data: file.bytes)
        }
        version = String(Hex.lowercase(hash.finalize()).prefix(16))
        var assets: [String: (contentType: String, bytes: [UInt8])] = [:]
        for file in files { assets[file.name] = (file.contentType, file.bytes) }
        self.assets = assets
        let template = String(decoding: assets["index.html"]?.bytes ?? [], as: UTF8.self)
        page = Array(template.replacingOccurrences(of: "{{assets}}", with: "/assets/\(version)").utf8)
    }
}
