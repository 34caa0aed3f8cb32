import Foundation
import TallyCore

/// One origin's pinned public key and how it came to be pinned.
public struct PinnedOriginKey: Codable, Sendable, Equatable {
    /// The key, 64 hex digits.
    public var key: String
    /// "first contact" (trust on first use), "trusted by hand" (`tally peers trust`) or
    /// "rotation" (a rotation signed by the key pinned before).
    public var pinnedBy: String
    /// When (ISO 8601).
    public var at: String

    public init(key: OriginKey, pinnedBy: String, at: Date = Date()) {
        self.key = key.description
        self.pinnedBy = pinnedBy
        self.at = ISO8601DateFormatter().string(from: at)
    }
}

/// `log/origin-keys.json`: the public key pinned for each origin this replica holds events of
/// (docs/MERGE.md, "Signed origins"). Events of an origin are accepted only under a valid
/// signature of its pinned key; a pin changes only by a rotation signed with the pinned key.
/// Written before the events it admits are appended, under the file's lock.
public struct OriginKeyStore: Sendable {
    let file: SecretFile<[String: PinnedOriginKey]>

    /// The store of the log in `logDirectory`.
    public init(logDirectory: String) { file = SecretFile(path: logDirectory + "/origin-keys.json", empty: [:]) }

    /// Every pin.
    public func all() throws -> [String: PinnedOriginKey] {
        do { return try file.read() } catch {
            throw LogError.notALog(path: file.path, reason: "the pinned origin keys are unreadable (\(error))")
        }
    }

    /// The pinned keys by origin (entries that do not parse are left out; `tally audit verify` names them).
    public func keys() throws -> [ReplicaID: OriginKey] {
        var keys: [ReplicaID: OriginKey] = [:]
        for (origin, pin) in try all() {
            if let id = ReplicaID(string: origin), let key = OriginKey(hex: pin.key) { keys[id] = key }
        }
        return keys
    }

    /// Records pins learned from a delivery (before its events are appended), each only if the
    /// origin's pin is still the one the delivery was checked against (`PinChange.replacing`):
    /// a delivery that raced another one which moved the pin meanwhile is refused, changing nothing.
    public func record(_ changes: [ReplicaID: PinChange]) throws {
        guard !changes.isEmpty else { return }
        try file.update { pins in
            for (origin, change) in changes {
                let current = pins[origin.description].flatMap { OriginKey(hex: $0.key) }
                if current?.description == change.pin.key { continue }
                guard current == change.replacing else {
                    throw LogError.rejected(reason: "the key pinned for origin \(origin) changed while this delivery was checked; nothing was applied")
                }
            }
            for (origin, change) in changes where pins[origin.description]?.key != change.pin.key { pins[origin.description] = change.pin }
        }
    }

    /// Pins `key` for `origin` by hand (`tally peers trust`), before first contact. Refuses to
    /// replace a different pin: a pinned key moves only by a rotation it signed.
    public func trust(_ key: OriginKey, for origin: ReplicaID) throws {
        try file.update { pins in
            if let current = pins[origin.description], current.key != key.description {
                throw LogError.rejected(
                    reason: "origin \(origin) already has key \(current.key) pinned (\(current.pinnedBy)); a pin moves only by a rotation signed with it")
            }
            pins[origin.description] = PinnedOriginKey(key: key, pinnedBy: "trusted by hand")
        }
    }
}

/// A pin a delivery sets, and the key it replaces (nil: the origin had none).
public struct PinChange: Sendable {
    public var pin: PinnedOriginKey
    public var replacing: OriginKey?

    public init(pin: PinnedOriginKey, replacing: OriginKey?) {
        (self.pin, self.replacing) = (pin, replacing)
    }
}
