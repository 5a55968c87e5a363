// CRC-32C (Castagnoli) for Node through N-API, over ISA-L's crc32_iscsi (Debian libisal):
// ISA-L dispatches at load time to its fastest kernel for this CPU (PCLMULQDQ / VPCLMULQDQ
// folding), which runs at memory speed where @node-rs/crc32 does not.
//
// Convention. ISA-L's crc32_iscsi(buf, len, init) is the bare reflected CRC register update:
// no inversion on entry or exit. The standard CRC-32C (RFC 3720, Kafka's RecordBatch CRC,
// @node-rs/crc32's crc32c) starts from 0xFFFFFFFF and inverts the result, and continuing
// a previous result `prev` means starting from ~prev. So:
//   crc32c(buf, prev) = ~crc32_iscsi(buf, len, ~prev),   prev = 0 for a fresh CRC.
//
// Exports: crc32c(data: Uint8Array, initial?: number): number (unsigned 32-bit), and
// isalVersion: string.
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <isa-l.h>
#include <node_api.h>

// crc32_iscsi takes an int length: larger inputs go in chunks.
#define MAX_CHUNK (1u << 30)

static napi_value throw_type_error(napi_env env, const char *msg) {
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", msg);
  return NULL;
}

static napi_value crc32c_js(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
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

  uint32_t crc = ~initial;
  unsigned char *p = (unsigned char *)data;
  while (length > 0) {
    size_t n = length < MAX_CHUNK ? length : MAX_CHUNK;
    crc = crc32_iscsi(p, (int)n, crc);
    p += n;
    length -= n;
  }
  napi_value result;
  napi_create_uint32(env, ~crc, &result);
  return result;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_value fn;
  if (napi_create_function(env, "crc32c", NAPI_AUTO_LENGTH, crc32c_js, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "crc32c", fn) != napi_ok) return NULL;
  char version[32];
  snprintf(version, sizeof version, "%d.%d.%d", ISAL_MAJOR_VERSION, ISAL_MINOR_VERSION, ISAL_PATCH_VERSION);
  napi_value v;
  napi_create_string_utf8(env, version, NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, exports, "isalVersion", v);
  return exports;
}
