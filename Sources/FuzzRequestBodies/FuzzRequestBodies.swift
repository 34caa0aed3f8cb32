import TallyFuzzing

// libFuzzer target (scripts/fuzz RequestBodies SECONDS). SwiftPM links an executable through
// `<Target>_main`; libFuzzer's runtime links against `LLVMFuzzerTestOneInput`.
@_cdecl("FuzzRequestBodies_main")
public func fuzzRequestBodiesMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    fuzzMain(target: "RequestBodies", argc, argv, testOneInput)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzInputs.run("RequestBodies", UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
