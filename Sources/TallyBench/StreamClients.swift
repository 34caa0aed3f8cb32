import Foundation
import Glibc
import Synchronization

/// Many change-feed clients in one thread (issue 31's 10,000 streams): a plain TCP socket each,
/// a `GET …/changes` sent on it, and one `poll` loop reading them all, noting when each event
/// id first arrives on each stream. An HTTP client per stream would cost the benchmark more
/// than the server it measures.
final class StreamClients: @unchecked Sendable {
    // @unchecked: `sockets` and `polled` are written before `start`, then only by its thread; `arrivals` is a Mutex.
    struct Stream {
        let fd: Int32
        let ledger: Int
        var carry: [UInt8] = []
        var answered = false
    }
    private var sockets: [Int32: Stream] = [:]
    private var polled: [pollfd] = []
    private let stop = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    /// When each (ledger, event id) arrived on each of that ledger's streams.
    let arrivals = Mutex<[Int: [UInt64: [Double]]]>([:])
    /// Streams whose response was a 200.
    let answered = Atomic<Int>(0)

    /// Opens a stream to `path` (with `token`) on 127.0.0.1:`port`, for ledger number `ledger`.
    func open(port: UInt16, path: String, token: String, ledger: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw BenchError("connect: errno \(errno)")
        }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        polled.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
        sockets[fd] = Stream(fd: fd, ledger: ledger)
    }

    /// Starts reading every stream on a thread of its own.
    func start() {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while !stop.load(ordering: .relaxed) {
                let ready = poll(&polled, nfds_t(polled.count), 100)
                guard ready > 0 else { continue }
                let at = now()
                for index in polled.indices where polled[index].revents != 0 {
                    let fd = polled[index].fd
                    polled[index].revents = 0
                    while true {
                        let count = recv(fd, &buffer, buffer.count, 0)
                        if count == 0 || (count < 0 && errno != EAGAIN) { polled[index].fd = -1 }  // closed: poll no more
                        guard count > 0 else { break }
                        take(buffer[0..<count], from: fd, at: at)
                    }
                }
            }
            done.signal()
        }
    }

    /// Notes each `\nid: N` in what `fd` sent (the tail of its last read is kept, so an id cut
    /// between two reads is found).
    private func take(_ bytes: ArraySlice<UInt8>, from fd: Int32, at time: Double) {
        guard var stream = sockets[fd] else { return }
        let text = stream.carry + bytes
        if !stream.answered, text.starts(with: Array("HTTP/1.1 200".utf8)) {
            stream.answered = true
            answered.add(1, ordering: .relaxed)
        }
        var ids: [UInt64] = []
        let marker = Array("\nid: ".utf8)
        var position = 0
        var lastComplete = 0
        while position + marker.count <= text.count {
            if text[position] == marker[0], Array(text[position..<position + marker.count]) == marker {
                var digit = position + marker.count
                var value: UInt64 = 0
                while digit < text.count, text[digit] >= 48, text[digit] <= 57 {
                    value = value * 10 + UInt64(text[digit] - 48)
                    digit += 1
                }
                guard digit < text.count else { break }  // the number may go on in the next read
                ids.append(value)
                position = digit
                lastComplete = digit
            } else {
                position += 1
            }
        }
        stream.carry = Array(text[max(lastComplete, text.count - 16)...])
        sockets[fd] = stream
        guard !ids.isEmpty else { return }
        arrivals.withLock { arrivals in
            for id in ids { arrivals[stream.ledger, default: [:]][id, default: []].append(time) }
        }
    }

    /// Stops reading and closes every stream.
    func close() {
        stop.store(true, ordering: .relaxed)
        done.wait()
        for fd in sockets.keys { Glibc.close(fd) }
    }
}
