/// An event's JSON written straight to bytes: the same bytes as `json(index:hash:)` serialised,
/// without the `JSONText` tree and the dozen strings each event would make on the way (a change
/// feed catching up writes a million events; building the tree was most of its time).
/// `EventJSONTests` holds the two equal on random events.
extension Event {
    public func appendJSON(index: UInt64, hash: EventHash, to out: inout [UInt8]) {
        Self.append(#"{"index":"#, to: &out)
        JSONText.appendDecimal(Int64(clamping: index), to: &out)
        Self.append(#","origin":""#, to: &out)
        origin.uuid.appendLowercased(to: &out)
        Self.append(#"","sequence":"#, to: &out)
        JSONText.appendDecimal(Int64(clamping: sequence), to: &out)
        Self.append(#","hlc":""#, to: &out)
        JSONText.appendDecimal(timestamp.millis, to: &out)
        out.append(UInt8(ascii: "."))
        JSONText.appendDecimal(UInt64(timestamp.counter), to: &out)
        Self.append(#"","time":""#, to: &out)
        DateTime(epochMillis: Int64(clamping: timestamp.millis), offsetMinutes: 0).appendDescription(to: &out)
        Self.append(#"","actor":"#, to: &out)
        Self.appendQuoted(actor, to: &out)
        Self.append(#","localOnly":"#, to: &out)
        Self.append(isLocalOnly ? "true" : "false", to: &out)
        Self.append(#","entityType":""#, to: &out)
        out.append(contentsOf: entityType.description.utf8)
        Self.append(#"","entityId":"#, to: &out)
        switch entityID {
        case .uuid(let uuid):
            out.append(UInt8(ascii: "\""))
            uuid.appendLowercased(to: &out)
            out.append(UInt8(ascii: "\""))
        case .settingKey(let key): Self.appendQuoted(key, to: &out)
        }
        Self.append(#","operation":""#, to: &out)
        out.append(contentsOf: operation.description.utf8)
        Self.append(#"","properties":{"#, to: &out)
        var first = true
        for entry in properties {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: entry.name.jsonName.utf8)
            Self.append(#"":"#, to: &out)
            entry.value.appendJSON(to: &out)
        }
        Self.append(#"},"schemaVersion":"#, to: &out)
        JSONText.appendDecimal(Int64(schemaVersion), to: &out)
        Self.append(#","previousHash":""#, to: &out)
        previousHash.appendHex(to: &out)
        Self.append(#"","hash":""#, to: &out)
        hash.appendHex(to: &out)
        Self.append(#""}"#, to: &out)
    }

    /// A literal's bytes.
    fileprivate static func append(_ literal: StaticString, to out: inout [UInt8]) {
        literal.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    fileprivate static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { JSONText.appendQuoted($0, to: &out) }
    }
}

extension PropertyValue {
    /// `json`'s serialisation appended to `out`.
    public func appendJSON(to out: inout [UInt8]) {
        switch self {
        case .null: Event.append("null", to: &out)
        case .bool(let flag): Event.append(flag ? "true" : "false", to: &out)
        case .int(let number): JSONText.appendDecimal(number, to: &out)
        case .string(let text): Event.appendQuoted(text, to: &out)
        case .uuid(let uuid):
            out.append(UInt8(ascii: "\""))
            uuid.appendLowercased(to: &out)
            out.append(UInt8(ascii: "\""))
        case .dateTime(let date):
            out.append(UInt8(ascii: "\""))
            date.appendDescription(to: &out)
            out.append(UInt8(ascii: "\""))
        case .strings(let texts):
            out.append(UInt8(ascii: "["))
            for (position, text) in texts.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                Event.appendQuoted(text, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .bools(let flags):
            out.append(UInt8(ascii: "["))
            for (position, flag) in flags.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                Event.append(flag ? "true" : "false", to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .json(let text): out.append(contentsOf: text.utf8)
        }
    }
}
