import TallyFuzzing

// libFuzzer target (scripts/fuzz Segments SECONDS). SwiftPM links an executable through
// `<Target>_main`; libFuzzer's runtime links against `LLVMFuzzerTestOneInput`.
@_cdecl("FuzzSegments_main")
public func fuzzSegmentsMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    fuzzMain(target: "Segments", argc, argv, testOneInput)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzInputs.run("Segments", UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
