// CRC-32C (Castagnoli) for Node through N-API, and the batch checks that follow it on the
// append path. The CRC runs through crc32c-fold.c: its own AVX-512 VPCLMULQDQ + SSE4.2 crc32
// kernel on inputs of at least 1,536 bytes where the CPU has them, ISA-L's crc32_iscsi (Debian
// libisal, dispatched at load to its fastest kernel for the CPU) below that and elsewhere.
// Both run at memory speed where @node-rs/crc32 does not.
//
// Convention. crc32_iscsi(buf, len, init) (and crc32c_update) is the bare reflected CRC register
// update: no inversion on entry or exit. The standard CRC-32C (RFC 3720, Kafka's RecordBatch
// CRC, @node-rs/crc32's crc32c) starts from 0xFFFFFFFF and inverts the result, and continuing
// a previous result `prev` means starting from ~prev. So:
//   crc32c(buf, prev) = ~crc32c_update(buf, len, ~prev),   prev = 0 for a fresh CRC.
//
// Exports: crc32c(data: Uint8Array, initial?: number): number (unsigned 32-bit), crc32cIsal
// (the same through ISA-L alone, for the side-by-side bench), recordsFramingOk(buf, batchPos,
// size): boolean (records-framing.c), soleBatchOk(buf, maxBatchBytes, verify, out): boolean
// (below: the append's whole batch check in one call), appendSoleBatch(fd, buf, params, out):
// number (the check, the offset stamp and the write of an append in one call), isalVersion:
// string, foldKernel: a description of the own kernel, or null where the CPU lacks it,
// foldMinBytes: number, setFoldKernel(on: boolean): boolean (off: ISA-L alone, for
// DUROLAB_CRC32C=isa-l; returns whether the kernel now runs), and checkedWriteLoop (below: the
// check's bound for engine bench).
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <isa-l.h>
#include <node_api.h>

#include "crc32c-fold.h"
#include "records-framing.h"

static napi_value throw_type_error(napi_env env, const char *msg) {
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", msg);
  return NULL;
}

typedef uint32_t (*crc_update_fn)(const uint8_t *, size_t, uint32_t);

/** crc32c and crc32cIsal: the function's data is the register update it runs. */
static napi_value crc32c_js(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  void *fn_data = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, &fn_data) != napi_ok) return NULL;
  if (argc < 1) return throw_type_error(env, "crc32c(data, initial?): data must be a Uint8Array or Buffer, got nothing");

  bool is_typedarray = false;
  napi_is_typedarray(env, argv[0], &is_typedarray);
  if (!is_typedarray) return throw_type_error(env, "crc32c(data, initial?): data must be a Uint8Array or Buffer");
  napi_typedarray_type type;
  size_t length = 0;
  void *data = NULL;
  if (napi_get_typedarray_info(env, argv[0], &type, &length, &data, NULL, NULL) != napi_ok) return NULL;
  if (type != napi_uint8_array && type != napi_uint8_clamped_array && type != napi_int8_array) {
    return throw_type_error(env, "crc32c(data, initial?): data must be a byte array (Uint8Array or Buffer)");
  }

  uint32_t initial = 0;
  if (argc >= 2) {
    napi_valuetype vt;
    napi_typeof(env, argv[1], &vt);
    if (vt == napi_number) {
      napi_get_value_uint32(env, argv[1], &initial);
    } else if (vt != napi_undefined) {
      return throw_type_error(env, "crc32c(data, initial?): initial must be a number (a previous CRC-32C) or undefined");
    }
  }

  crc_update_fn update = (crc_update_fn)fn_data;
  uint32_t crc = update((const uint8_t *)data, length, ~initial);
  napi_value result;
  napi_create_uint32(env, ~crc, &result);
  return result;
}

// ---- Record framing ------------------------------------------------------------------
// recordsFramingOk(buf, batchPos, size): the record-framing check of validateBatch
// (engine/records/record-walk.ts walkRecords, strict, nothing decoded; the same rules as
// engine/records/framing-check.ts) over the batch of `size` bytes at batchPos. true = every
// record is well framed; false = "ask the full walker", which throws the precise error or
// accepts (a timestamp delta longer than 7 bytes is left to it). Bounds: never reads outside
// [batchPos, batchPos + size).

static napi_value records_framing_ok_js(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  bool is_typedarray = false;
  if (argc >= 1) napi_is_typedarray(env, argv[0], &is_typedarray);
  if (argc < 3 || !is_typedarray) return throw_type_error(env, "recordsFramingOk(buf, batchPos, size): buf must be a Uint8Array or Buffer");
  napi_typedarray_type type;
  size_t length = 0;
  void *data = NULL;
  if (napi_get_typedarray_info(env, argv[0], &type, &length, &data, NULL, NULL) != napi_ok) return NULL;
  if (type != napi_uint8_array) return throw_type_error(env, "recordsFramingOk(buf, batchPos, size): buf must be a Uint8Array or Buffer");
  int64_t pos = -1, size = -1;
  napi_get_value_int64(env, argv[1], &pos);
  napi_get_value_int64(env, argv[2], &size);
  if (pos < 0 || size < 0 || (uint64_t)pos > length || (uint64_t)size > length - (uint64_t)pos) {
    napi_throw_range_error(env, "ERR_OUT_OF_RANGE", "recordsFramingOk(buf, batchPos, size): [batchPos, batchPos + size) must lie inside buf");
    return NULL;
  }
  napi_value result;
  napi_get_boolean(env, records_framing_ok((const uint8_t *)data + pos, (size_t)size), &result);
  return result;
}

// ---- One whole batch, header to last record -------------------------------------------
// soleBatchOk(buf, maxBatchBytes, verify, out): the append path's step 1 in one call, for a
// buffer that must hold exactly one batch at position 0 (engine/records/decode.ts
// checkSoleBatch). true = the batch passes everything the JS path checks (length range, magic 2,
// buffer = exactly one batch, i64 fields safe JS integers; with verify also the CRC-32C, no
// compression and the record framing) and out (a Float64Array of 12) holds its header fields:
// baseOffset, length, partitionLeaderEpoch, crc, attributes, lastOffsetDelta, firstTimestamp,
// maxTimestamp, producerId, producerEpoch, baseSequence, recordCount. false = "ask the JS path",
// which throws the precise error (or accepts what this refuses to judge). Never reads outside buf.

#define MAGIC_OFFSET 16
#define CRC_OFFSET 17
#define ATTRIBUTES_OFFSET 21
#define COMPRESSION_MASK 7
#define HEADER_FIELDS 12

static int safe_integer(int64_t v) { return v <= MAX_SAFE_INTEGER && v >= -MAX_SAFE_INTEGER; }
static int16_t be16(const uint8_t *p) { return (int16_t)((uint16_t)p[0] << 8 | p[1]); }

static int sole_batch_ok(const uint8_t *b, size_t size, int64_t max_batch_bytes, int verify, double *out) {
  if (size < BATCH_HEADER_BYTES) return 0;
  int32_t length = be32(b + 8);
  if (length < BATCH_HEADER_BYTES - LOG_OVERHEAD || (int64_t)length > max_batch_bytes - LOG_OVERHEAD) return 0;
  if ((int8_t)b[MAGIC_OFFSET] != 2) return 0;
  if ((size_t)length + LOG_OVERHEAD != size) return 0;
  int64_t base_offset = be64(b), first_timestamp = be64(b + 27), max_timestamp = be64(b + 35), producer_id = be64(b + 43);
  int32_t last_offset_delta = be32(b + 23);
  if (!safe_integer(base_offset) || !safe_integer(base_offset + last_offset_delta)) return 0;
  if (!safe_integer(first_timestamp) || !safe_integer(max_timestamp) || !safe_integer(producer_id)) return 0;
  uint32_t stored_crc = (uint32_t)be32(b + CRC_OFFSET);
  int16_t attributes = be16(b + ATTRIBUTES_OFFSET);
  if (verify) {
    if ((uint32_t)~crc32c_update(b + ATTRIBUTES_OFFSET, size - ATTRIBUTES_OFFSET, 0xffffffffu) != stored_crc) return 0;
    if ((attributes & COMPRESSION_MASK) != 0) return 0;
    if (!records_framing_ok(b, size)) return 0;
  }
  out[0] = (double)base_offset;
  out[1] = (double)length;
  out[2] = (double)be32(b + 12);
  out[3] = (double)stored_crc;
  out[4] = (double)attributes;
  out[5] = (double)last_offset_delta;
  out[6] = (double)first_timestamp;
  out[7] = (double)max_timestamp;
  out[8] = (double)producer_id;
  out[9] = (double)be16(b + 51);
  out[10] = (double)be32(b + 53);
  out[11] = (double)be32(b + 57);
  return 1;
}

/** The data and length of v when it is a typed array of `type` with at least min_length elements; 0 otherwise. */
static int typed_array_arg(napi_env env, napi_value v, napi_typedarray_type type, size_t min_length, void **data, size_t *length) {
  bool is_typedarray = false;
  napi_typedarray_type t;
  if (napi_is_typedarray(env, v, &is_typedarray) != napi_ok || !is_typedarray) return 0;
  if (napi_get_typedarray_info(env, v, &t, length, data, NULL, NULL) != napi_ok) return 0;
  return t == type && *length >= min_length;
}

static napi_value sole_batch_ok_js(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  const char *usage = "soleBatchOk(buf, maxBatchBytes, verify, out): buf a Uint8Array or Buffer, out a Float64Array of 12";
  if (argc < 4) return throw_type_error(env, usage);
  size_t length = 0, out_length = 0;
  void *data = NULL, *out = NULL;
  if (!typed_array_arg(env, argv[0], napi_uint8_array, 0, &data, &length) || !typed_array_arg(env, argv[3], napi_float64_array, HEADER_FIELDS, &out, &out_length)) {
    return throw_type_error(env, usage);
  }
  int64_t max_batch_bytes = 0;
  bool verify = false;
  if (napi_get_value_int64(env, argv[1], &max_batch_bytes) != napi_ok || napi_get_value_bool(env, argv[2], &verify) != napi_ok) {
    return throw_type_error(env, usage);
  }
  // A batch's length field is an int32: a longer buffer is never one batch.
  int ok = length <= (size_t)INT_MAX && sole_batch_ok((const uint8_t *)data, length, max_batch_bytes, verify, (double *)out);
  napi_value result;
  napi_get_boolean(env, ok, &result);
  return result;
}

// ---- Check, stamp and write: a buffered append in one call ----------------------------
// appendSoleBatch(fd, buf, params, out): what Log.append does for a leader's batch on a plain
// (buffered or O_DSYNC) segment writer, in one crossing: soleBatchOk's check, the roll test,
// the stamp of the base offset (and the leader epoch) and pwrite(2) of the whole batch at the
// segment's end. Each crossing and each JS touch of the batch after a system call costs here
// (caches and TLB cold after the kernel): measured on 4 KiB appends, JS check + stamp + write
// 5.4 µs against 4.0 µs for the write alone.
//   params (Float64Array of 8): position, maxBatchBytes, verify (0/1), baseOffset to stamp,
//     bytes the segment takes before it must roll (-1: any), largest lastOffsetDelta before it
//     must roll, stamp the leader epoch (0/1), the leader epoch.
//   out (Float64Array of 13): soleBatchOk's 12 header fields (baseOffset as stamped), then the
//     write's duration in µs.
// Returns 0 = written; 1 = refused by the check, nothing written or stamped (the JS path
// throws the precise error); 2 = the batch is well formed but needs what JS does (a roll, or
// log-append time, which rewrites the CRC), nothing written or stamped; -errno = write(2)
// failed, a partial write may be in the file.

#define APPEND_PARAMS 8
#define APPEND_FIELDS (HEADER_FIELDS + 1)

static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/** pwrite(2) of all `left` bytes at `at`, across short writes and EINTR: 0, or -errno (a partial write may be in the file). */
static int32_t pwrite_fully(int fd, const uint8_t *p, size_t left, off_t at) {
  while (left > 0) {
    ssize_t n = pwrite(fd, p, left, at);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) return -EIO;
    p += n;
    at += n;
    left -= (size_t)n;
  }
  return 0;
}

static int32_t append_sole_batch(int fd, uint8_t *b, size_t size, const double *params, double *out) {
  double position = params[0], base_offset = params[3], room = params[4], max_delta = params[5];
  if (!(position >= 0 && position <= (double)MAX_SAFE_INTEGER) || !(base_offset >= 0 && base_offset <= (double)MAX_SAFE_INTEGER)) return 1;
  if (!sole_batch_ok(b, size, (int64_t)params[1], params[2] != 0, out)) return 1;
  if (((int)out[4] & LOG_APPEND_TIME_FLAG) != 0) return 2;
  if ((room >= 0 && (double)size > room) || out[5] > max_delta) return 2;
  if (base_offset + out[5] > (double)MAX_SAFE_INTEGER) return 1;
  int64_t base = (int64_t)base_offset;
  put_be32(b, (uint32_t)((uint64_t)base >> 32));
  put_be32(b + 4, (uint32_t)base);
  out[0] = base_offset;
  if (params[6] != 0) {
    put_be32(b + 12, (uint32_t)(int32_t)params[7]);
    out[2] = (double)(int32_t)params[7];
  }
  double t0 = now_us();
  int32_t written = pwrite_fully(fd, b, size, (off_t)position);
  if (written != 0) return written;
  out[HEADER_FIELDS] = now_us() - t0;
  return 0;
}

static napi_value append_sole_batch_js(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  const char *usage = "appendSoleBatch(fd, buf, params, out): fd an int32, buf a Uint8Array or Buffer, params a Float64Array of 8, out a Float64Array of 13";
  if (argc < 4) return throw_type_error(env, usage);
  int32_t fd = -1;
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) return throw_type_error(env, usage);
  size_t length = 0, params_length = 0, out_length = 0;
  void *data = NULL, *params = NULL, *out = NULL;
  if (!typed_array_arg(env, argv[1], napi_uint8_array, 0, &data, &length) || !typed_array_arg(env, argv[2], napi_float64_array, APPEND_PARAMS, &params, &params_length) ||
      !typed_array_arg(env, argv[3], napi_float64_array, APPEND_FIELDS, &out, &out_length)) {
    return throw_type_error(env, usage);
  }
  int32_t code = length <= (size_t)INT_MAX ? append_sole_batch(fd, (uint8_t *)data, length, (const double *)params, (double *)out) : 1;
  napi_value result;
  napi_create_int32(env, code, &result);
  return result;
}

// ---- The check's bound: check + write in a C loop -------------------------------------
// checkedWriteLoop(fd, buf, count, check): `count` pwrite(2)s of buf at consecutive positions
// from 0, each after soleBatchOk's check and the base-offset stamp when `check` is true (what
// appendSoleBatch does, without the JS around it); returns the loop's µs, or -errno when a
// write fails. `engine bench` runs it with check on and off: their ratio is the most any
// one-thread append that performs Kafka's check can reach against a bare write loop here.

static napi_value checked_write_loop_js(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  const char *usage = "checkedWriteLoop(fd, buf, count, check): fd an int32, buf a Uint8Array or Buffer, count an integer >= 1, check a boolean";
  if (argc < 4) return throw_type_error(env, usage);
  int32_t fd = -1;
  int64_t count = 0;
  bool check = false;
  size_t length = 0;
  void *data = NULL;
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0 || !typed_array_arg(env, argv[1], napi_uint8_array, 1, &data, &length) ||
      napi_get_value_int64(env, argv[2], &count) != napi_ok || count < 1 || napi_get_value_bool(env, argv[3], &check) != napi_ok) {
    return throw_type_error(env, usage);
  }
  uint8_t *b = (uint8_t *)data;
  double fields[HEADER_FIELDS];
  if (check && (length > (size_t)INT_MAX || !sole_batch_ok(b, length, INT_MAX, 1, fields))) {
    napi_throw_range_error(env, "ERR_INVALID_ARG_VALUE", "checkedWriteLoop: buf is not one batch that passes the append's check");
    return NULL;
  }
  double t0 = now_us();
  double result = 0;
  for (int64_t i = 0; i < count && result == 0; i++) {
    if (check) {
      if (!sole_batch_ok(b, length, INT_MAX, 1, fields)) {
        result = -EINVAL;
        break;
      }
      put_be32(b, (uint32_t)((uint64_t)i >> 32));
      put_be32(b + 4, (uint32_t)i);
    }
    result = pwrite_fully(fd, b, length, (off_t)(i * (int64_t)length));
  }
  if (result == 0) result = now_us() - t0;
  napi_value out;
  napi_create_double(env, result, &out);
  return out;
}

static napi_value set_fold_kernel_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  bool on = false;
  if (argc < 1 || napi_get_value_bool(env, argv[0], &on) != napi_ok) return throw_type_error(env, "setFoldKernel(on): on must be a boolean");
  napi_value result;
  napi_get_boolean(env, crc32c_fold_enable(on), &result);
  return result;
}

static int export_function(napi_env env, napi_value exports, const char *name, napi_callback cb, void *data) {
  napi_value fn;
  return napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, data, &fn) == napi_ok && napi_set_named_property(env, exports, name, fn) == napi_ok;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  int fold = crc32c_fold_init();
  if (!export_function(env, exports, "crc32c", crc32c_js, (void *)crc32c_update) || !export_function(env, exports, "crc32cIsal", crc32c_js, (void *)crc32c_isal_update) ||
      !export_function(env, exports, "recordsFramingOk", records_framing_ok_js, NULL) || !export_function(env, exports, "soleBatchOk", sole_batch_ok_js, NULL) ||
      !export_function(env, exports, "appendSoleBatch", append_sole_batch_js, NULL) || !export_function(env, exports, "setFoldKernel", set_fold_kernel_js, NULL) ||
      !export_function(env, exports, "checkedWriteLoop", checked_write_loop_js, NULL)) {
    return NULL;
  }
  char version[32];
  snprintf(version, sizeof version, "%d.%d.%d", ISAL_MAJOR_VERSION, ISAL_MINOR_VERSION, ISAL_PATCH_VERSION);
  napi_value v;
  napi_create_string_utf8(env, version, NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, exports, "isalVersion", v);
  napi_value kernel;
  if (fold) {
    napi_create_string_utf8(env, "AVX-512 VPCLMULQDQ folding interleaved with 4 SSE4.2 crc32 streams (crc32c-fold.c)", NAPI_AUTO_LENGTH, &kernel);
  } else {
    napi_get_null(env, &kernel);
  }
  napi_set_named_property(env, exports, "foldKernel", kernel);
  napi_value min_bytes;
  napi_create_uint32(env, (uint32_t)crc32c_fold_min_bytes(), &min_bytes);
  napi_set_named_property(env, exports, "foldMinBytes", min_bytes);
  return exports;
}
