import Foundation
import Synchronization

/// The bytes each prefix folder of a blob store holds (`blobs/ab/`), remembered between the
/// quota's checks: a folder is walked again only when it has changed since, so a check costs a
/// `stat` of each folder and the walk of those written lately — not a walk of every blob (with
/// 50,000 blobs held, 0.5 s for each upload, one upload at a time).
///
/// A folder's modification and change times move whenever a blob enters or leaves it (a
/// rename or an unlink in it), made by this process or another; a blob's bytes never change
/// once it is in place. The clock that stamps a folder is coarse (a few milliseconds; whole
/// seconds on some file systems), so two changes close together can leave the same stamp: a
/// folder changed within `settledAfter` is walked again at every check rather than remembered.
/// Meant for a local disk: a network file system (NFS, SMB) may answer a folder's times from
/// this host's cache, or stamp them by a clock behind this one's, and so leave a blob another
/// host added uncounted until the folder next changes here — the quota late by that blob.
/// (Every process that writes a ledger's blobs runs beside its writer, on its host.)
///
/// A count that cannot read a folder fails (the quota then refuses the upload) rather than
/// count it short, and a folder whose walk failed is never remembered. One per process
/// (`shared`), for at most `maxStores` stores, the least recently counted forgotten first.
public final class BlobTotals: Sendable {
    public static let shared = BlobTotals()

    /// What identifies a folder's contents as they were.
    struct Stamp: Equatable {
        let device: UInt64
        let inode: UInt64
        let modified: timespec
        let changed: timespec

        init(_ info: stat) {
            (device, inode, modified, changed) = (UInt64(info.st_dev), UInt64(info.st_ino), info.st_mtim, info.st_ctim)
        }

        /// The later of its two times, in seconds. The change time is the one nobody can set
        /// back (`utimes`, `touch -d`, `rsync -a` set the modification time, and move the change
        /// time to now).
        var latest: TimeInterval {
            max(Double(modified.tv_sec) + Double(modified.tv_nsec) / 1e9, Double(changed.tv_sec) + Double(changed.tv_nsec) / 1e9)
        }

        /// Whether its times look whole seconds (a file system of that grain).
        var looksWhole: Bool { modified.tv_nsec == 0 && changed.tv_nsec == 0 }

        static func == (a: Stamp, b: Stamp) -> Bool {
            a.device == b.device && a.inode == b.inode && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }
    }

    private struct Store {
        var folders: [String: (stamp: Stamp, bytes: Int)] = [:]
        var lastCounted: UInt64 = 0
    }

    private let state = Mutex<(stores: [String: Store], counts: UInt64)>(([:], 0))
    /// Prefix folders walked so far (for tests).
    let walks = Atomic<Int>(0)

    /// About as many as a hosted server keeps ledgers open (`DescriptorBudget`); each holds at
    /// most 256 folders' totals.
    static let maxStores = 1_024

    /// How long after its last change a folder's stamp is trusted: longer than the grain of
    /// the clock that stamps it — a tick of the kernel's coarse clock (at most 10 ms) where
    /// times carry nanoseconds, and two seconds (FAT's grain) where they look whole.
    static func settledAfter(_ stamp: Stamp) -> TimeInterval { stamp.looksWhole ? 2 : 0.1 }

    /// The bytes of every blob in the store at `path` (its two-letter folders), walking only
    /// the folders that changed since the last count here, or lately. `now` is the wall clock
    /// the folders' times are compared with. Throws when a folder cannot be read (no count is
    /// better than one short: the quota would let bytes past it); a store or a folder that
    /// is not there holds nothing.
    public func totalBytes(ofStoreAt path: String, now: Date = Date()) throws -> Int {
        guard let names = try Self.names(in: path) else { return 0 }
        let known = state.withLock { state in state.stores[path]?.folders ?? [:] }
        var folders: [String: (stamp: Stamp, bytes: Int)] = [:]
        var total = 0
        for prefix in names where prefix.utf8.count == 2 && prefix.utf8.allSatisfy(BlobStore.isDigestByte) {
            let folder = path + "/" + prefix
            var info = stat()
            guard lstat(folder, &info) == 0 else {
                if errno == ENOENT { continue }
                throw LogError.io(operation: "lstat", path: folder, errno: errno)
            }
            // A folder linked from elsewhere (blobs kept on another disk) is walked every time:
            // its link's times say nothing of what it holds.
            let isLink = info.st_mode & S_IFMT == S_IFLNK
            guard isLink || info.st_mode & S_IFMT == S_IFDIR else { continue }
            let stamp = Stamp(info)
            if !isLink, let remembered = known[prefix], remembered.stamp == stamp {
                folders[prefix] = remembered
                total += remembered.bytes
                continue
            }
            guard let bytes = try Self.bytes(in: folder) else { continue }  // gone meanwhile
            walks.add(1, ordering: .relaxed)
            total += bytes
            // Remembered only once settled: a change within the clock's grain could keep the stamp.
            if !isLink, stamp.latest < now.timeIntervalSince1970 - Self.settledAfter(stamp) {
                folders[prefix] = (stamp, bytes)
            }
        }
        state.withLock { state in
            state.counts += 1
            state.stores[path] = Store(folders: folders, lastCounted: state.counts)
            if state.stores.count > Self.maxStores, let oldest = state.stores.min(by: { $0.value.lastCounted < $1.value.lastCounted }) {
                state.stores[oldest.key] = nil
            }
        }
        return total
    }

    /// The names in the folder `path`; nil if it is not there.
    private static func names(in path: String) throws -> [String]? {
        var names: [String] = []
        let found = try forEachEntry(in: path) { name, _ in names.append(String(cString: name)) }
        return found ? names : nil
    }

    /// The bytes of the blobs in one prefix folder (regular files named as the rest of a
    /// digest: 62 lowercase hex digits), read with `readdir` and `fstatat` — no path or string
    /// made for each file, since a folder written lately is walked at every count. Nil if the
    /// folder is not there; throws if it cannot be read whole.
    private static func bytes(in folder: String) throws -> Int? {
        var bytes = 0
        let found = try forEachEntry(in: folder) { name, descriptor in
            guard (0..<62).allSatisfy({ BlobStore.isDigestByte(UInt8(bitPattern: name[$0])) }), name[62] == 0 else { return }
            var info = stat()
            guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                if errno == ENOENT { return }  // removed meanwhile
                throw LogError.io(operation: "fstatat", path: folder, errno: errno)
            }
            if info.st_mode & S_IFMT == S_IFREG { bytes += Int(info.st_size) }
        }
        return found ? bytes : nil
    }

    /// Calls `body` with each entry's name (NUL-terminated, as `readdir` gives it) and the
    /// folder's descriptor. False if the folder is not there; throws if it cannot be read whole.
    private static func forEachEntry(in folder: String, _ body: (UnsafePointer<CChar>, Int32) throws -> Void) throws -> Bool {
        guard let directory = opendir(folder) else {
            if errno == ENOENT { return false }
            throw LogError.io(operation: "opendir", path: folder, errno: errno)
        }
        defer { closedir(directory) }
        let descriptor = dirfd(directory)
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { throw LogError.io(operation: "readdir", path: folder, errno: errno) }
                return true
            }
            try withUnsafeBytes(of: &entry.pointee.d_name) { name in try body(name.baseAddress!.assumingMemoryBound(to: CChar.self), descriptor) }
        }
    }
}
