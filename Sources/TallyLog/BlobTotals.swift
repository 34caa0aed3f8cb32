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
/// (A file system whose clock is behind this machine's by more than that — a remote one — can
/// leave a blob uncounted until its folder next changes: the quota is then late by that blob.)
///
/// One per process (`shared`), for at most `maxStores` stores, the least recently counted
/// forgotten first.
public final class BlobTotals: Sendable {
    public static let shared = BlobTotals()

    /// What identifies a folder's contents as they were.
    struct Stamp: Equatable {
        let inode: UInt64
        let modified: timespec
        let changed: timespec

        static func == (a: Stamp, b: Stamp) -> Bool {
            a.inode == b.inode && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
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

    static let maxStores = 64

    /// How long after its last change a folder's stamp is trusted: longer than the grain of
    /// the clock that stamps it — a tick of the kernel's coarse clock (at most 10 ms) where
    /// times carry nanoseconds, and two seconds (FAT's grain) where they look whole.
    static func settledAfter(_ stamp: Stamp) -> TimeInterval { stamp.modified.tv_nsec == 0 ? 2 : 0.1 }

    /// The bytes of every blob in the store at `path` (its two-letter folders), walking only
    /// the folders that changed since the last count here, or lately. `now` is the wall clock
    /// the folders' times are compared with.
    public func totalBytes(ofStoreAt path: String, now: Date = Date()) -> Int {
        let prefixes = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { name in
            name.utf8.count == 2 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
        }
        let known = state.withLock { state in state.stores[path]?.folders ?? [:] }
        var folders: [String: (stamp: Stamp, bytes: Int)] = [:]
        var total = 0
        for prefix in prefixes {
            let folder = path + "/" + prefix
            guard let stamp = Self.stamp(of: folder) else { continue }
            if let remembered = known[prefix], remembered.stamp == stamp {
                folders[prefix] = remembered
                total += remembered.bytes
                continue
            }
            let bytes = Self.bytes(in: folder)
            walks.add(1, ordering: .relaxed)
            total += bytes
            // Remembered only once settled: a change within the clock's grain could keep the stamp.
            if Double(stamp.modified.tv_sec) + Double(stamp.modified.tv_nsec) / 1e9 < now.timeIntervalSince1970 - Self.settledAfter(stamp) {
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

    private static func stamp(of folder: String) -> Stamp? {
        var info = stat()
        guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
        return Stamp(inode: UInt64(info.st_ino), modified: info.st_mtim, changed: info.st_ctim)
    }

    /// The bytes of the blobs in one prefix folder (regular files named as the rest of a
    /// digest: 62 lowercase hex digits), read with `readdir` and `fstatat` — no path or string
    /// made for each file, since a folder written lately is walked at every count.
    private static func bytes(in folder: String) -> Int {
        guard let directory = opendir(folder) else { return 0 }
        defer { closedir(directory) }
        let descriptor = dirfd(directory)
        var bytes = 0
        while let entry = readdir(directory) {
            let isRestOfDigest = withUnsafeBytes(of: &entry.pointee.d_name) { name in
                (0..<62).allSatisfy { (48...57).contains(name[$0]) || (97...102).contains(name[$0]) } && name[62] == 0
            }
            guard isRestOfDigest else { continue }
            var info = stat()
            let found = withUnsafeBytes(of: &entry.pointee.d_name) { name in
                fstatat(descriptor, name.baseAddress!.assumingMemoryBound(to: CChar.self), &info, AT_SYMLINK_NOFOLLOW) == 0
            }
            if found, info.st_mode & S_IFMT == S_IFREG { bytes += Int(info.st_size) }
        }
        return bytes
    }
}
