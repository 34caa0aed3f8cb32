import Foundation
import Synchronization

/// An exclusive advisory lock (flock) on a file: held by the one writer of a data directory.
/// The kernel drops it when the process dies, so a crashed writer never leaves a stale lock.
final class FileLock: Sendable {
    private let descriptor: Mutex<Int32>

    /// Takes the lock, retrying every 10 ms for up to `timeout` seconds.
    init(path: String, timeout: Double) throws(LogError) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LogError.io(operation: "open", path: path, errno: errno) }
        let start = Date()
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            guard failure == EWOULDBLOCK || failure == EINTR else {
                close(fd)
                throw LogError.io(operation: "flock", path: path, errno: failure)
            }
            let waited = Date().timeIntervalSince(start)
            if waited >= timeout {
                close(fd)
                throw LogError.writerLocked(directory: (path as NSString).deletingLastPathComponent, waitedSeconds: waited)
            }
            usleep(10_000)
        }
        descriptor = Mutex(fd)
    }

    /// Releases the lock (idempotent).
    func release() {
        descriptor.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    deinit { release() }
}
