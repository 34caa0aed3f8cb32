import CFuzzDriver
import Glibc
import TallyFuzzing

// libFuzzer target (scripts/fuzz Events SECONDS). SwiftPM links an executable through
// `<Target>_main`, so this defines it and hands libFuzzer the one-input function.
@_cdecl("FuzzEvents_main")
public func fuzzEventsMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    // TALLY_FUZZ_WRITE_SEEDS=DIR: write the seed corpus and stop (scripts/fuzz does this first).
    if let folder = getenv("TALLY_FUZZ_WRITE_SEEDS") {
        do { try FuzzSeeds.write(target: "Events", to: String(cString: folder)) } catch { fatalError("\(error)") }
        return 0
    }
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in testOneInput(data, size) }
}

/// The one-input function; libFuzzer's runtime also links against it by this name.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzInputs.event(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
