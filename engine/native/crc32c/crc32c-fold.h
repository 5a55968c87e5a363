// The CRC-32C register update of the crc32c addon (crc32c-fold.c): the own AVX-512 VPCLMULQDQ +
// SSE4.2 crc32 kernel on inputs of at least crc32c_fold_min_bytes() where the CPU runs it, ISA-L's
// crc32_iscsi otherwise. Bare register updates (no inversion on entry or exit), as crc32_iscsi.
#ifndef DUROLAB_CRC32C_FOLD_H
#define DUROLAB_CRC32C_FOLD_H
#include <stddef.h>
#include <stdint.h>

/** Once, before any other call: detects the CPU's support and computes the constants; 1 = the kernel runs here. */
int crc32c_fold_init(void);
/** Whether the CPU runs the kernel. */
int crc32c_fold_available(void);
/** Turns the kernel on or off for the process (off: ISA-L alone); returns whether it is now on. */
int crc32c_fold_enable(int on);
/** Inputs shorter than this go to ISA-L. */
size_t crc32c_fold_min_bytes(void);
/** The register update through the kernel when on and the input is long enough, else ISA-L. */
uint32_t crc32c_update(const uint8_t *b, size_t n, uint32_t state);
/** The register update through ISA-L alone, any length. */
uint32_t crc32c_isal_update(const uint8_t *b, size_t n, uint32_t state);
#endif
