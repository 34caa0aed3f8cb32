import NIOCore
import Synchronization

/// A cap on open connections: each connection's pipeline holds one `ConnectionLimit.Handler`,
/// which counts it while it is open and closes it at once when the cap is reached — so clients
/// that open connections and never finish them cannot run the service out of file descriptors.
/// (Together with the idle timeout: a connection that sends nothing is closed anyway.)
public final class ConnectionLimit: Sendable {
    /// The most connections open at once.
    public let maximum: Int
    private let open = Atomic<Int>(0)

    public init(maximum: Int) { self.maximum = maximum }

    /// Connections open now.
    public var current: Int { open.load(ordering: .relaxed) }

    /// A handler for one new connection's pipeline.
    public func handler() -> Handler { Handler(limit: self) }

    /// Counts its connection while active; closes it if the cap is already reached.
    public final class Handler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
        public typealias InboundIn = NIOAny
        let limit: ConnectionLimit
        private let counted = Atomic<Bool>(false)

        init(limit: ConnectionLimit) { self.limit = limit }

        public func handlerAdded(context: ChannelHandlerContext) {
            let now = limit.open.add(1, ordering: .relaxed).newValue
            counted.store(true, ordering: .relaxed)
            if now > limit.maximum { context.close(promise: nil) }
        }

        public func handlerRemoved(context: ChannelHandlerContext) {
            if counted.exchange(false, ordering: .relaxed) { limit.open.subtract(1, ordering: .relaxed) }
        }
    }
}
