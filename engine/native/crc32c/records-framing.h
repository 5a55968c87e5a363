// The record-framing walk of a RecordBatch v2 (records-framing.c) and the batch layout both it
// and the append path (crc32c.c) read.
#ifndef DUROLAB_RECORDS_FRAMING_H
#define DUROLAB_RECORDS_FRAMING_H
#include <stddef.h>
#include <stdint.h>

#define LOG_OVERHEAD 12
#define BATCH_HEADER_BYTES 61
#define MIN_RECORD_BYTES 7
#define LOG_APPEND_TIME_FLAG 8
#define MAX_SAFE_INTEGER 9007199254740991LL

static inline int32_t be32(const uint8_t *p) { return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]); }
static inline int64_t be64(const uint8_t *p) { return (int64_t)((uint64_t)(uint32_t)be32(p) << 32 | (uint32_t)be32(p + 4)); }

/**
 * The record-framing check of validateBatch over the batch of `size` bytes at b (see
 * records-framing.c): 1 = every record is well framed; 0 = "ask the full walker". Never reads
 * outside [b, b + size).
 */
int records_framing_ok(const uint8_t *b, size_t size);
#endif
