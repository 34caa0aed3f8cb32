import Crypto
import Foundation
import TallyCore
import _CryptoExtras

/// The hash a member's kept session is checked against (`app-sessions.json`): scrypt — memory
/// hard, in swift-crypto, so TallyKit needs no server's package for it — with N = 2^14, r = 8,
/// p = 1 (16 MiB and ~50 ms of a core here for each hash or check: each guess costs a thief
/// who holds the file as much), a random 16-byte salt, 32 bytes out. Written
/// `scrypt$14$8$1$SALT$KEY` (hex).
enum KeptPassword {
    static let (log2Rounds, blockSize, parallelism) = (14, 8, 1)

    static func hash(_ password: String) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let key = try derive(password, salt: salt, log2Rounds: log2Rounds, blockSize: blockSize, parallelism: parallelism)
        return "scrypt$\(log2Rounds)$\(blockSize)$\(parallelism)$\(Hex.lowercase(salt))$\(Hex.lowercase(key))"
    }

    /// Whether `password` is the one `hash` was made of (false for a hash not of this shape,
    /// or with other parameters than these: the file is the device's, but read as untrusted).
    static func matches(_ password: String, _ hash: String) -> Bool {
        let parts = hash.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "scrypt", parts[1] == "\(log2Rounds)", parts[2] == "\(blockSize)", parts[3] == "\(parallelism)",
            let salt = Hex.decode(String(parts[4])), salt.count == 16, let expected = Hex.decode(String(parts[5])), expected.count == 32,
            let key = try? derive(password, salt: salt, log2Rounds: log2Rounds, blockSize: blockSize, parallelism: parallelism)
        else { return false }
        return SymmetricKey(data: key) == SymmetricKey(data: expected)  // compared in constant time
    }

    private static func derive(_ password: String, salt: [UInt8], log2Rounds: Int, blockSize: Int, parallelism: Int) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8), salt: salt, outputByteCount: 32, rounds: 1 << log2Rounds, blockSize: blockSize, parallelism: parallelism)
        return key.withUnsafeBytes { Array($0) }
    }
}
