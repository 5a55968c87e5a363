// pwrite(2) of a whole byte range for Node through N-API: the write step of an append
// (engine/storage/segment-writer.ts). Node's fs.writeSync reaches the same system call through
// argument validation, a uv_fs_t and an error context per call; measured here at 4 KiB appends
// into the page cache that is ~1.1 µs of a ~4.6 µs write, at 64 KiB ~1.6 µs of ~11.6 µs
// (fio's psync engine, the baseline, pays neither).
//
// Export: pwriteFully(fd, buf, offset, length, position): number. Writes buf[offset,
// offset + length) at file position `position`, repeating after short writes and EINTR, and
// returns `length`; on failure returns the negative errno (bytes of a partial write may be in
// the file: the caller cuts back, as after a throwing fs.writeSync loop). Arguments that are
// not what the signature says throw TypeError/RangeError: they are programming errors.
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <node_api.h>
#include "../napi-args.h"


static napi_value pwrite_fully_js(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc < 5) return fail(env, 0, "pwriteFully(fd, buf, offset, length, position): five arguments expected");
  bool is_typedarray = false;
  napi_is_typedarray(env, argv[1], &is_typedarray);
  if (!is_typedarray) return fail(env, 0, "pwriteFully: buf must be a Uint8Array or Buffer");
  napi_typedarray_type type;
  size_t byte_length = 0;
  void *data = NULL;
  if (napi_get_typedarray_info(env, argv[1], &type, &byte_length, &data, NULL, NULL) != napi_ok) return NULL;
  if (type != napi_uint8_array) return fail(env, 0, "pwriteFully: buf must be a Uint8Array or Buffer");
  int64_t fd, offset, length, position;
  if (!get_int64(env, argv[0], &fd) || fd > INT32_MAX) return fail(env, 1, "pwriteFully: fd must be an integer in [0, 2^31)");
  if (!get_int64(env, argv[2], &offset) || !get_int64(env, argv[3], &length)) {
    return fail(env, 1, "pwriteFully: offset and length must be non-negative integers");
  }
  if ((uint64_t)offset > byte_length || (uint64_t)length > byte_length - (uint64_t)offset) {
    return fail(env, 1, "pwriteFully: [offset, offset + length) must lie inside buf");
  }
  if (!get_int64(env, argv[4], &position)) return fail(env, 1, "pwriteFully: position must be a non-negative integer");

  const char *p = (const char *)data + offset;
  size_t left = (size_t)length;
  off_t at = (off_t)position;
  int64_t result = length;
  while (left > 0) {
    ssize_t n = pwrite((int)fd, p, left, at);
    if (n < 0) {
      if (errno == EINTR) continue;
      result = -(int64_t)errno;
      break;
    }
    if (n == 0) {
      // A regular file never answers 0 to a non-empty write; do not spin on it.
      result = -(int64_t)EIO;
      break;
    }
    p += n;
    at += n;
    left -= (size_t)n;
  }
  napi_value out;
  napi_create_int64(env, result, &out);
  return out;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_value fn;
  if (napi_create_function(env, "pwriteFully", NAPI_AUTO_LENGTH, pwrite_fully_js, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "pwriteFully", fn) != napi_ok) return NULL;
  return exports;
}
