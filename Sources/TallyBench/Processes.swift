import Foundation

/// Starts a process with its output discarded (a server the benchmark loads).
func startProcess(_ arguments: [String]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
}

/// Runs a process to its end and returns what it printed; throws if it failed.
func runProcess(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    while process.isRunning { usleep(1000) }
    guard process.terminationStatus == 0 else { throw BenchError("\(arguments.joined(separator: " ")) exited with \(process.terminationStatus)") }
    return output
}
