/// Derived values of a todo.
public enum Todo {
    /// Checks done / checks, as a percentage rounded to two decimals; 0 when there are none.
    /// Always derived from `checks`, never stored as an input.
    public static func percentage(_ checks: PropertyValue?) -> Double {
        guard case .bools(let flags)? = checks, !flags.isEmpty else { return 0 }
        let done = flags.filter { $0 }.count
        return (Double(done) * 10_000 / Double(flags.count)).rounded() / 100
    }
}
