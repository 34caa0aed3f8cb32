import NIOCore
import Synchronization

/// A cap on open connections: each connection's pipeline holds one `ConnectionLimit.Handler`,
/// which counts it while it is open and closes it at once when a cap is reached — so clients
/// that open connections and never finish them cannot run the service out of file descriptors.
/// (Together with the idle timeout: a connection that sends nothing is closed anyway.)
///
/// Two caps: all connections together, and those of one client address, so that one client
/// cannot fill the first and keep everyone else out. An IPv6 address counts by its first 64
/// bits (what one host is usually given, and holds billions of addresses within). Loopback
/// is not counted per address: a reverse proxy on this machine speaks for everyone behind it
/// (which a proxy elsewhere does too: raise `maximumPerAddress` to `maximum` behind one).
public final class ConnectionLimit: Sendable {
    /// The most connections open at once.
    public let maximum: Int
    /// The most connections one client address may hold at once.
    public let maximumPerAddress: Int
    private let open = Atomic<Int>(0)
    private let openByAddress = Mutex<[[UInt8]: Int]>([:])

    public init(maximum: Int, maximumPerAddress: Int) { (self.maximum, self.maximumPerAddress) = (maximum, maximumPerAddress) }

    /// Connections open now.
    public var current: Int { open.load(ordering: .relaxed) }

    /// Connections open now from the client whose address counts as `key` (`addressKey`).
    func current(from key: [UInt8]) -> Int { openByAddress.withLock { $0[key] ?? 0 } }

    /// A handler for one new connection's pipeline.
    public func handler() -> Handler { Handler(limit: self) }

    /// What a client's connections are counted under: an IPv4 address, or the first 64 bits of
    /// an IPv6 one (an IPv4 address written as IPv6 counts as itself); nil for loopback and for
    /// a Unix socket, which are not counted per address.
    static func addressKey(_ address: SocketAddress?) -> [UInt8]? {
        switch address {
        case .v4(let v4):
            let bytes = withUnsafeBytes(of: v4.address.sin_addr.s_addr) { Array($0) }
            return bytes[0] == 127 ? nil : bytes
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            let mappedIPv4: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]
            if Array(bytes.prefix(12)) == mappedIPv4 { return bytes[12] == 127 ? nil : Array(bytes.suffix(4)) }
            if bytes == [UInt8](repeating: 0, count: 15) + [1] { return nil }  // ::1
            return Array(bytes.prefix(8))
        default:
            return nil
        }
    }

    /// Counts its connection while active; closes it if a cap is already reached.
    public final class Handler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
        public typealias InboundIn = NIOAny
        let limit: ConnectionLimit
        /// Whether the connection is counted in the whole cap, and under which address if any.
        private let counted = Mutex<(all: Bool, address: [UInt8]?)>((false, nil))

        init(limit: ConnectionLimit) { self.limit = limit }

        public func handlerAdded(context: ChannelHandlerContext) {
            // The address's share first: a connection it refuses takes no slot of the whole cap,
            // even for the moment until it is closed (a client reconnecting past its share in a
            // loop squeezed others out, found by a hostile run).
            let key = ConnectionLimit.addressKey(context.channel.remoteAddress)
            if let key {
                let fromAddress = limit.openByAddress.withLock { open in
                    open[key, default: 0] += 1
                    return open[key] ?? 0
                }
                guard fromAddress <= limit.maximumPerAddress else {
                    counted.withLock { $0 = (false, key) }
                    return context.close(promise: nil)
                }
            }
            let now = limit.open.add(1, ordering: .relaxed).newValue
            counted.withLock { $0 = (true, key) }
            if now > limit.maximum { context.close(promise: nil) }
        }

        public func handlerRemoved(context: ChannelHandlerContext) {
            let (all, address) = counted.withLock { counted in
                defer { counted = (false, nil) }
                return counted
            }
            if all { limit.open.subtract(1, ordering: .relaxed) }
            guard let address else { return }
            limit.openByAddress.withLock { open in
                let left = (open[address] ?? 1) - 1
                open[address] = left > 0 ? left : nil
            }
        }
    }
}
