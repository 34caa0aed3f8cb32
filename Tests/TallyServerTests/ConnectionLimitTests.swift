import NIOCore
import NIOEmbedded
import Testing
@testable import TallyServer

/// The connection caps (`ConnectionLimit`): all connections together, and one client
/// address's — an IPv6 address by its /64, loopback not counted per address.
@Suite struct ConnectionLimitTests {
    /// A connection from `address` through `limit`'s handler; whether it stays open.
    static func connect(_ limit: ConnectionLimit, from address: String) throws -> (channel: EmbeddedChannel, open: Bool) {
        let channel = EmbeddedChannel()
        try channel.connect(to: try SocketAddress(ipAddress: address, port: 40_000)).wait()
        try channel.pipeline.syncOperations.addHandler(limit.handler())
        channel.embeddedEventLoop.run()  // a close's removal of the handlers
        return (channel, channel.isActive)
    }

    @Test func oneAddressCannotHoldMoreThanItsShareAndOthersStillGetIn() throws {
        let limit = ConnectionLimit(maximum: 10, maximumPerAddress: 2)
        let first = try Self.connect(limit, from: "203.0.113.7"), second = try Self.connect(limit, from: "203.0.113.7")
        let third = try Self.connect(limit, from: "203.0.113.7")
        #expect(first.open && second.open && !third.open, "the third from one address is closed as it arrives")
        #expect(try Self.connect(limit, from: "203.0.113.8").open, "another address still gets in")
        #expect(limit.current(from: [203, 0, 113, 7]) == 2 && limit.current == 3, "a closed connection is no longer counted")

        _ = try first.channel.finish()
        first.channel.embeddedEventLoop.run()
        #expect(try Self.connect(limit, from: "203.0.113.7").open, "a slot is free again once one closes")
        #expect(!(try Self.connect(limit, from: "::ffff:203.0.113.7").open), "the same IPv4 address written as IPv6 counts as itself")
    }

    /// A connection refused for its address's share takes no slot of the whole cap, even
    /// before it is closed (a client reconnecting in a loop squeezed others out).
    @Test func aConnectionRefusedForItsAddressTakesNoSlotOfTheWholeCap() throws {
        let limit = ConnectionLimit(maximum: 10, maximumPerAddress: 1)
        #expect(try Self.connect(limit, from: "203.0.113.7").open)
        let channel = EmbeddedChannel()
        try channel.connect(to: try SocketAddress(ipAddress: "203.0.113.7", port: 40_001)).wait()
        try channel.pipeline.syncOperations.addHandler(limit.handler())
        #expect(limit.current == 1, "not counted while it is being closed")
        channel.embeddedEventLoop.run()
        #expect(limit.current == 1 && limit.current(from: [203, 0, 113, 7]) == 1)
    }

    @Test func anIPv6ClientCountsByItsSlash64() throws {
        let limit = ConnectionLimit(maximum: 10, maximumPerAddress: 2)
        #expect(try Self.connect(limit, from: "2001:db8:1:2::1").open)
        #expect(try Self.connect(limit, from: "2001:db8:1:2:ffff::9").open)
        #expect(!(try Self.connect(limit, from: "2001:db8:1:2:abcd::5").open), "a third address of the same /64")
        #expect(try Self.connect(limit, from: "2001:db8:1:3::1").open, "the next /64 is another client")
    }

    @Test func loopbackIsNotCountedPerAddressButTheWholeCapHolds() throws {
        let limit = ConnectionLimit(maximum: 4, maximumPerAddress: 1)
        for address in ["127.0.0.1", "127.0.0.1", "::1", "::ffff:127.0.0.1"] {
            #expect(try Self.connect(limit, from: address).open, "\(address): a reverse proxy on this machine speaks for everyone")
        }
        #expect(!(try Self.connect(limit, from: "127.0.0.1").open), "past the whole cap")
        #expect(!(try Self.connect(limit, from: "198.51.100.1").open), "past the whole cap, whoever asks")
    }
}
