import Foundation
import Synchronization

/// An exclusive advisory lock (flock) on a file: held by the one writer of a data directory,
/// and by whoever writes a new generation of its views. The kernel drops it when the process
/// dies, so a crashed holder never leaves a stale lock.
public final class FileLock: Sendable {
    private let descriptor: Mutex<Int32>

    private init(descriptor fd: Int32) {
        descriptor = Mutex(fd)
    }

    /// Takes the lock, retrying every 10 ms for up to `timeout` seconds (a NaN: no retry).
    public convenience init(path: String, timeout: Double) throws(LogError) {
        let timeout = timeout.isNaN ? 0 : timeout  // `waited >= NaN` is never true: it would wait forever
        let start = Date()
        while true {
            if let fd = try Self.take(path) {
                self.init(descriptor: fd)
                return
            }
            let waited = Date().timeIntervalSince(start)
            if waited >= timeout {
                throw LogError.writerLocked(directory: (path as NSString).deletingLastPathComponent, waitedSeconds: waited)
            }
            usleep(10_000)
        }
    }

    /// Takes the lock if no one holds it; nil if someone does.
    public static func takeIfFree(path: String) throws(LogError) -> FileLock? {
        try take(path).map { FileLock(descriptor: $0) }
    }

    /// One attempt: the locked descriptor, or nil if another holder has the lock.
    private static func take(_ path: String) throws(LogError) -> Int32? {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LogError.io(operation: "open", path: path, errno: errno) }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            if failure == EINTR { continue }
            close(fd)
            if failure == EWOULDBLOCK { return nil }
            throw LogError.io(operation: "flock", path: path, errno: failure)
        }
        return fd
    }

    /// Runs `body` holding the lock on `path` — shared (beside other shared holders) or
    /// exclusive — waiting for it as long as it takes: for short sections only. The file is
    /// opened to read (made readable by all if missing: it holds nothing), so a lock file made
    /// by another user, such as root running a command, still locks.
    public static func whileHeld<Value>(path: String, shared: Bool, _ body: () throws -> Value) throws -> Value {
        let fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LogError.io(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        while flock(fd, shared ? LOCK_SH : LOCK_EX) != 0 {
            guard errno == EINTR else { throw LogError.io(operation: "flock", path: path, errno: errno) }
        }
        return try body()
    }

    /// Releases the lock (idempotent).
    public func release() {
        descriptor.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    deinit { release() }
}
