#include <lz4.h>
#include <stddef.h>
#include <stdint.h>

// One-shot SHA-256 from the BoringSSL that swift-crypto vendors and links into every Tally
// binary (its symbols carry the CCryptoBoringSSL_ prefix). Swift-crypto's `SHA256.hash`
// allocates a digest context per call, which is most of the cost of hashing a ~160-byte
// event; this entry point hashes on the stack with the same (hardware-accelerated) code.
// `EventCodec.hash` uses it; a test checks it against swift-crypto on random inputs.
uint8_t *CCryptoBoringSSL_SHA256(const uint8_t *data, size_t len, uint8_t out[32]);
