/// How many connections to its views one replica keeps: GRDB's pool readers, and direct
/// readers (`ViewReaders`) left idle. One busy ledger keeps many, so that 64 requests at once
/// read without opening one; a server holding a thousand ledgers open keeps few per ledger,
/// since each connection holds two file descriptors (the database and its WAL).
public struct ViewConnections: Sendable {
    /// GRDB's pool readers at most.
    public var poolReaders = 5
    /// Direct readers kept open while idle (more open under load, closed when given back).
    public var idleDirectReaders = 64
    /// Whether what a write reads (its checks, the entity it answers with, the recurrence
    /// pass's rules) is read on the views' writer when no direct reader is idle and no catch-up
    /// or other such read uses the writer, rather than on a reader opened for it: a hosted ledger that
    /// is only written then opens one connection, not two (each parses the views' whole
    /// schema, ~0.5 ms). A ledger of its own server reads them beside the writer, as it always did.
    public var writeReadsOnWriter = false

    public init() {}

    public init(poolReaders: Int, idleDirectReaders: Int, writeReadsOnWriter: Bool = false) {
        (self.poolReaders, self.idleDirectReaders, self.writeReadsOnWriter) = (poolReaders, idleDirectReaders, writeReadsOnWriter)
    }

    /// For a ledger among many open in one process (`tally serve --ledgers`). Each connection
    /// kept holds ~175 KB (its parsed schema ~73 KB, its page cache): with one of GRDB's readers
    /// and two direct ones kept (two and four before), the hosting bench's server of 10,000
    /// ledgers, 900 open, held 996 MiB instead of 1,076 (BENCHMARKS.md, hosting), at the same rate.
    /// A write's own reads go to the writer while no reader is idle (`writeReadsOnWriter`).
    public static let few = ViewConnections(poolReaders: 1, idleDirectReaders: 2, writeReadsOnWriter: true)

    /// Descriptors these connections hold at most while idle: the writer's and every kept
    /// reader's database and WAL, and the shared memory.
    public var idleDescriptors: Int { 2 * (1 + poolReaders + idleDirectReaders) + 1 }
}
