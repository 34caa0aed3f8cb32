import CFuzzDriver
import Glibc

/// What every fuzz executable's `<Target>_main` does: with TALLY_FUZZ_WRITE_SEEDS=DIR, write
/// the seed corpus and stop (scripts/fuzz does this first); otherwise hand libFuzzer the
/// target's one-input function.
public func fuzzMain(
    target: String, _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
    _ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32 {
    if let folder = getenv("TALLY_FUZZ_WRITE_SEEDS") {
        do { try FuzzSeeds.write(target: target, to: String(cString: folder)) } catch { fatalError("\(error)") }
        return 0
    }
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
}
