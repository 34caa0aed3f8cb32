import TallyFuzzing

// libFuzzer target (scripts/fuzz Events SECONDS). SwiftPM links an executable through
// `<Target>_main`; libFuzzer's runtime links against `LLVMFuzzerTestOneInput`.
@_cdecl("FuzzEvents_main")
public func fuzzEventsMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    fuzzMain(target: "Events", argc, argv, testOneInput)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzInputs.run("Events", UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
