// Thread-local last-error message and status names.
#include "base/error.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char tl_message[2048];

hg_status hg_error(hg_status status, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tl_message, sizeof tl_message, fmt, ap);
    va_end(ap);
    hg_log(HG_LOG_DEBUG, "%s: %s", hg_status_string(status), tl_message);
    return status;
}

hg_status hg_error_prefix(hg_status status, const char* fmt, ...) {
    char prefix[512], old[sizeof tl_message];
    memcpy(old, tl_message, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    // Joined by hand: the message is meant to be truncated when long, which snprintf with
    // two %s would make GCC warn about (-Wformat-truncation).
    size_t n = strlen(prefix);
    memcpy(tl_message, prefix, n);
    if (n + 2 < sizeof tl_message) {
        memcpy(tl_message + n, ": ", 2);
        n += 2;
    }
    size_t rest = strlen(old);
    if (rest > sizeof tl_message - 1 - n) rest = sizeof tl_message - 1 - n;
    memcpy(tl_message + n, old, rest);
    tl_message[n + rest] = 0;
    return status;
}

const char* hg_last_error(void) { return tl_message; }
void hg_clear_error(void) { tl_message[0] = 0; }

const char* hg_status_string(hg_status s) {
    switch (s) {
    case HG_OK: return "HG_OK";
    case HG_ERR_INVALID_ARGUMENT: return "HG_ERR_INVALID_ARGUMENT";
    case HG_ERR_NULL_POINTER: return "HG_ERR_NULL_POINTER";
    case HG_ERR_INVALID_HANDLE: return "HG_ERR_INVALID_HANDLE";
    case HG_ERR_DTYPE_MISMATCH: return "HG_ERR_DTYPE_MISMATCH";
    case HG_ERR_SIZE_MISMATCH: return "HG_ERR_SIZE_MISMATCH";
    case HG_ERR_OUT_OF_RANGE: return "HG_ERR_OUT_OF_RANGE";
    case HG_ERR_UNSUPPORTED: return "HG_ERR_UNSUPPORTED";
    case HG_ERR_PARSE: return "HG_ERR_PARSE";
    case HG_ERR_INVALID_PROGRAM: return "HG_ERR_INVALID_PROGRAM";
    case HG_ERR_BAD_FORMAT: return "HG_ERR_BAD_FORMAT";
    case HG_ERR_LAUNCH_CONFIG: return "HG_ERR_LAUNCH_CONFIG";
    case HG_ERR_ARGUMENT_BINDING: return "HG_ERR_ARGUMENT_BINDING";
    case HG_ERR_OUT_OF_BOUNDS: return "HG_ERR_OUT_OF_BOUNDS";
    case HG_ERR_EXECUTION: return "HG_ERR_EXECUTION";
    case HG_ERR_EXECUTOR_DEAD: return "HG_ERR_EXECUTOR_DEAD";
    case HG_ERR_OUT_OF_MEMORY: return "HG_ERR_OUT_OF_MEMORY";
    case HG_ERR_BACKEND_UNAVAILABLE: return "HG_ERR_BACKEND_UNAVAILABLE";
    case HG_ERR_IO: return "HG_ERR_IO";
    case HG_ERR_INTERNAL: return "HG_ERR_INTERNAL";
    }
    return "HG_UNKNOWN_STATUS";
}
