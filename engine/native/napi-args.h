// Argument checks shared by the engine's N-API addons (engine/native/*/): a TypeError or
// RangeError with the caller's message, and a JS number read as a non-negative safe integer.
#ifndef DUROLAB_NAPI_ARGS_H
#define DUROLAB_NAPI_ARGS_H
#include <stdint.h>
#include <node_api.h>

static inline napi_value fail(napi_env env, int range, const char *msg) {
  if (range) napi_throw_range_error(env, "ERR_OUT_OF_RANGE", msg);
  else napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", msg);
  return NULL;
}

static inline int get_int64(napi_env env, napi_value v, int64_t *out) {
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_number) return 0;
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok) return 0;
  if (!(d >= 0 && d <= 9007199254740991.0) || d != (double)(int64_t)d) return 0;
  *out = (int64_t)d;
  return 1;
}
#endif
