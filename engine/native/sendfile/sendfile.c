// sendfile(2) for Node through N-API: the zero-copy step of a consumer fetch
// (engine/server/kafka/zero-copy.ts), as Kafka's FileRecords.writeTo reaches
// FileChannel.transferTo. The file's pages go from the page cache to the socket without a copy
// into user space (and, on a cold read, are read from the device by the kernel).
//
// Exports:
//   dupFd(fd): number
//     fcntl(F_DUPFD_CLOEXEC): a descriptor of the same open file that the caller owns and closes
//     (fs.closeSync). The fetch holds one per region, so a segment deleted or closed between the
//     read and the send still serves the bytes it was sliced from. Negative errno on failure.
//   sendFile(socketFd, fileFd, position, length, stallMs, callback)
//     Sends file bytes [position, position + length) to the socket on a libuv worker thread:
//     sendfile(2) until done, poll(POLLOUT) when the (non-blocking) socket is full. The socket
//     descriptor is duplicated on the calling thread, so the worker's stays valid whatever
//     happens to the JS socket meanwhile. callback(errno, sent): errno 0 and sent == length
//     when all went; ETIMEDOUT when the socket took nothing for stallMs; sent < length with
//     errno 0 when the file ended first (it was truncated after it was sliced). The caller
//     writes nothing else to the socket until the callback.
// Arguments that are not what the signatures say throw TypeError/RangeError.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <unistd.h>
#include <node_api.h>
#include "../napi-args.h"


static napi_value dup_fd_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  int64_t fd;
  if (argc < 1 || !get_int64(env, argv[0], &fd) || fd > INT32_MAX) return fail(env, 1, "dupFd(fd): fd must be an integer in [0, 2^31)");
  int r = fcntl((int)fd, F_DUPFD_CLOEXEC, 0);
  napi_value out;
  napi_create_int32(env, r < 0 ? -errno : r, &out);
  return out;
}

typedef struct {
  napi_async_work work;
  napi_ref callback;
  int socket_fd; /* our duplicate, closed on completion */
  int file_fd;
  int64_t position;
  int64_t length;
  int64_t sent;
  int stall_ms;
  int err;
} SendJob;

static void send_execute(napi_env env, void *data) {
  (void)env;
  SendJob *job = (SendJob *)data;
  off_t at = (off_t)job->position;
  while (job->sent < job->length) {
    size_t want = (size_t)(job->length - job->sent);
    if (want > 0x7ffff000) want = 0x7ffff000;
    ssize_t n = sendfile(job->socket_fd, job->file_fd, &at, want);
    if (n > 0) {
      job->sent += n;
      continue;
    }
    if (n == 0) return; /* the file ended: sent < length tells the caller */
    if (errno == EINTR) continue;
    if (errno == EAGAIN) {
      struct pollfd p = { .fd = job->socket_fd, .events = POLLOUT, .revents = 0 };
      int r = poll(&p, 1, job->stall_ms);
      if (r == 0) {
        job->err = ETIMEDOUT;
        return;
      }
      if (r < 0 && errno != EINTR) {
        job->err = errno;
        return;
      }
      continue;
    }
    job->err = errno;
    return;
  }
}

static void send_complete(napi_env env, napi_status status, void *data) {
  SendJob *job = (SendJob *)data;
  close(job->socket_fd);
  napi_value cb, global, argv[2];
  napi_get_reference_value(env, job->callback, &cb);
  napi_get_global(env, &global);
  napi_create_int32(env, status == napi_ok ? job->err : ECANCELED, &argv[0]);
  napi_create_int64(env, job->sent, &argv[1]);
  napi_delete_reference(env, job->callback);
  napi_delete_async_work(env, job->work);
  free(job);
  napi_call_function(env, global, cb, 2, argv, NULL);
}

static napi_value send_file_js(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc < 6) return fail(env, 0, "sendFile(socketFd, fileFd, position, length, stallMs, callback): six arguments expected");
  int64_t sock, file, position, length, stall;
  if (!get_int64(env, argv[0], &sock) || sock > INT32_MAX || !get_int64(env, argv[1], &file) || file > INT32_MAX) {
    return fail(env, 1, "sendFile: socketFd and fileFd must be integers in [0, 2^31)");
  }
  if (!get_int64(env, argv[2], &position) || !get_int64(env, argv[3], &length)) return fail(env, 1, "sendFile: position and length must be non-negative integers");
  if (!get_int64(env, argv[4], &stall) || stall < 1 || stall > INT32_MAX) return fail(env, 1, "sendFile: stallMs must be an integer in [1, 2^31)");
  napi_valuetype t;
  if (napi_typeof(env, argv[5], &t) != napi_ok || t != napi_function) return fail(env, 0, "sendFile: callback must be a function");
  int dup_sock = fcntl((int)sock, F_DUPFD_CLOEXEC, 0);
  if (dup_sock < 0) {
    napi_value out;
    napi_create_int32(env, -errno, &out);
    return out;
  }
  SendJob *job = (SendJob *)calloc(1, sizeof(SendJob));
  if (!job) {
    close(dup_sock);
    napi_throw_error(env, NULL, "sendFile: out of memory");
    return NULL;
  }
  job->socket_fd = dup_sock;
  job->file_fd = (int)file;
  job->position = position;
  job->length = length;
  job->stall_ms = (int)stall;
  napi_value name;
  napi_create_string_utf8(env, "durolab.sendFile", NAPI_AUTO_LENGTH, &name);
  if (napi_create_reference(env, argv[5], 1, &job->callback) != napi_ok ||
      napi_create_async_work(env, NULL, name, send_execute, send_complete, job, &job->work) != napi_ok ||
      napi_queue_async_work(env, job->work) != napi_ok) {
    close(dup_sock);
    free(job);
    napi_throw_error(env, NULL, "sendFile: cannot queue the work");
    return NULL;
  }
  napi_value out;
  napi_create_int32(env, 0, &out);
  return out;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_value fn;
  if (napi_create_function(env, "dupFd", NAPI_AUTO_LENGTH, dup_fd_js, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "dupFd", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "sendFile", NAPI_AUTO_LENGTH, send_file_js, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "sendFile", fn) != napi_ok) return NULL;
  return exports;
}
