// Internal: thread-local error messages and logging.
#ifndef HG_CORE_ERROR_H
#define HG_CORE_ERROR_H
#include "hologram.h"

#if defined(__GNUC__)
#define HG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define HG_PRINTF(a, b)
#endif

// Records a formatted message as this thread's last error and returns status (so callers can
// write `return hg_error(HG_ERR_..., "...")`).
hg_status hg_error(hg_status status, const char* fmt, ...) HG_PRINTF(2, 3);
// Prepends context to the current message ("while loading x: <old message>").
hg_status hg_error_prefix(hg_status status, const char* fmt, ...) HG_PRINTF(2, 3);

// Logs a message at a level (formatted only when the level is enabled).
void hg_log(hg_log_level level, const char* fmt, ...) HG_PRINTF(2, 3);
int hg_log_enabled(hg_log_level level);

// Shorthand for argument checks.
#define HG_CHECK_NULL(ptr, name)                                                            \
    do {                                                                                   \
        if (!(ptr)) return hg_error(HG_ERR_NULL_POINTER, "%s: argument '%s' is NULL", __func__, name); \
    } while (0)

#endif
