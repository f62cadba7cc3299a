#include "sha256.hpp"

#include <bit>
#include <cstring>
#include <string_view>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define LOCKSTEP_SHA_X86 1
#endif

#include "lockstep/prop/config_hash.hpp"

namespace lockstep::prop::io {

namespace {

// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first
// 64 primes.
constexpr std::array<std::uint32_t, 64> kRound{
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// §5.3.3: the first 32 bits of the fractional parts of the square roots of the first 8 primes.
constexpr std::array<std::uint32_t, 8> kInitial{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

/// The plain compression of one 64-byte block (FIPS 180-4 §6.2.2).
void compress_reference(std::array<std::uint32_t, 8>& state, const std::uint8_t* block) {
  std::array<std::uint32_t, 64> w;
  for (int t = 0; t < 16; ++t)
    w[t] = std::uint32_t{block[4 * t]} << 24 | std::uint32_t{block[4 * t + 1]} << 16 |
           std::uint32_t{block[4 * t + 2]} << 8 | std::uint32_t{block[4 * t + 3]};
  for (int t = 16; t < 64; ++t) {
    const auto s0 = std::rotr(w[t - 15], 7) ^ std::rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const auto s1 = std::rotr(w[t - 2], 17) ^ std::rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  auto [a, b, c, d, e, f, g, h] = state;
  for (int t = 0; t < 64; ++t) {
    const auto S1 = std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25);
    const auto ch = (e & f) ^ (~e & g);
    const auto t1 = h + S1 + ch + kRound[t] + w[t];
    const auto S0 = std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22);
    const auto maj = (a & b) ^ (a & c) ^ (b & c);
    const auto t2 = S0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  const std::array<std::uint32_t, 8> add{a, b, c, d, e, f, g, h};
  for (int i = 0; i < 8; ++i) state[i] += add[i];
}

#ifdef LOCKSTEP_SHA_X86
/// The same compression with the SHA extensions. The instructions keep the state as the
/// vectors ABEF and CDGH; sha256rnds2 does two rounds, sha256msg1/msg2 the message schedule
/// four words at a time: W[4i..4i+3] = msg2(msg1(W_{i−4}, W_{i−3}) + (W[4i−7..4i−4]), W_{i−1}).
__attribute__((target("sha,sse4.1"))) void compress_sha_x86(std::array<std::uint32_t, 8>& state,
                                                            const std::uint8_t* block) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state.data()));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state.data() + 4));
  const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  const __m128i abef_start = abef, cdgh_start = cdgh;
  __m128i w[16];
  for (int i = 0; i < 16; ++i) {
    if (i < 4) {
      w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * i)), byte_swap);
    } else {
      const __m128i sum =
          _mm_add_epi32(_mm_sha256msg1_epu32(w[i - 4], w[i - 3]), _mm_alignr_epi8(w[i - 1], w[i - 2], 4));
      w[i] = _mm_sha256msg2_epu32(sum, w[i - 1]);
    }
    __m128i message = _mm_add_epi32(w[i], _mm_loadu_si128(reinterpret_cast<const __m128i*>(kRound.data() + 4 * i)));
    cdgh = _mm_sha256rnds2_epu32(cdgh, abef, message);  // now holds ABEF; abef holds CDGH
    message = _mm_shuffle_epi32(message, 0x0E);
    abef = _mm_sha256rnds2_epu32(abef, cdgh, message);  // two rounds later, the old ABEF is CDGH
  }
  abef = _mm_add_epi32(abef, abef_start);
  cdgh = _mm_add_epi32(cdgh, cdgh_start);
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  dcba = _mm_blend_epi16(feba, dchg, 0xF0);
  hgfe = _mm_alignr_epi8(dchg, feba, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state.data()), dcba);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state.data() + 4), hgfe);
}
#endif

}  // namespace

bool Sha256::hardware_available() {
#ifdef LOCKSTEP_SHA_X86
  static const bool available = [] {
    unsigned a, b, c, d;
    const bool sha = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));  // CPUID.7.0:EBX.SHA
    const bool sse41 = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 19));         // CPUID.1:ECX.SSE4.1
    return sha && sse41;
  }();
  return available;
#else
  return false;
#endif
}

Sha256::Sha256(Path path) : hardware_(path == Path::best && hardware_available()), state_(kInitial) {}

void Sha256::compress(const std::uint8_t* block) {
#ifdef LOCKSTEP_SHA_X86
  if (hardware_) return compress_sha_x86(state_, block);
#endif
  compress_reference(state_, block);
}

void Sha256::update(std::span<const std::uint8_t> bytes) {
  length_ += bytes.size();
  std::size_t i = 0;
  if (buffered_ > 0) {
    const std::size_t take = std::min(bytes.size(), 64 - buffered_);
    std::memcpy(buffer_.data() + buffered_, bytes.data(), take);
    buffered_ += take;
    i = take;
    if (buffered_ < 64) return;
    compress(buffer_.data());
    buffered_ = 0;
  }
  for (; i + 64 <= bytes.size(); i += 64) compress(bytes.data() + i);
  std::memcpy(buffer_.data(), bytes.data() + i, bytes.size() - i);
  buffered_ = bytes.size() - i;
}

std::array<std::uint8_t, 32> Sha256::finish() {
  // §5.1.1: a 1 bit, zeros up to 56 bytes mod 64, then the message length in bits, big-endian.
  const std::uint64_t bits = length_ * 8;
  std::array<std::uint8_t, 72> pad{};
  pad[0] = 0x80;
  const std::size_t zeros = (buffered_ < 56 ? 56 : 120) - buffered_;
  for (int k = 0; k < 8; ++k) pad[zeros + k] = static_cast<std::uint8_t>(bits >> (56 - 8 * k));
  update(std::span(pad.data(), zeros + 8));
  std::array<std::uint8_t, 32> digest;
  for (int i = 0; i < 8; ++i)
    for (int k = 0; k < 4; ++k) digest[4 * i + k] = static_cast<std::uint8_t>(state_[i] >> (24 - 8 * k));
  return digest;
}

std::string Sha256::finish_hex() {
  constexpr std::string_view kHex = "0123456789abcdef";
  std::string out;
  for (const auto byte : finish()) {
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
  }
  return out;
}

}  // namespace lockstep::prop::io

namespace lockstep::prop {

std::string sha256_hex(std::span<const std::uint8_t> bytes) {
  io::Sha256 hash;
  hash.update(bytes);
  return hash.finish_hex();
}

std::string sha256_hex(std::string_view text) {
  return sha256_hex(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

}  // namespace lockstep::prop
