// Logging: a level (HOLOGRAM_LOG_LEVEL, default warn) and a callback (default: stderr).
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include "base/config.h"
#include "base/error.h"
#include "base/fork.h"

static const char* const level_names[HG_LOG_LEVEL_COUNT] = {"trace", "debug", "info", "warn",
                                                            "error", "off"};
_Static_assert(sizeof(level_names) / sizeof(level_names[0]) == HG_LOG_LEVEL_COUNT, "log levels");

static atomic_int g_level = -1;  // -1: not yet read from the environment
static pthread_mutex_t g_cb_lock = PTHREAD_MUTEX_INITIALIZER;
static hg_log_fn g_cb = NULL;
static void* g_cb_user = NULL;

// A bad HOLOGRAM_LOG_LEVEL is itself logged (at warn) while it is being read: that nested
// call sees the default level instead of reading the variable again.
static _Thread_local int t_reading_env;

static int level_from_env(void) {
    t_reading_env = 1;
    int l = hg_config_choice("HOLOGRAM_LOG_LEVEL", level_names, HG_LOG_LEVEL_COUNT, HG_LOG_WARN);
    t_reading_env = 0;
    return l;
}

hg_log_level hg_log_get_level(void) {
    int l = atomic_load(&g_level);
    if (l < 0) {
        if (t_reading_env) return HG_LOG_WARN;
        int want = level_from_env();
        int expected = -1;
        atomic_compare_exchange_strong(&g_level, &expected, want);
        l = atomic_load(&g_level);
    }
    return (hg_log_level)l;
}

void hg_log_set_level(hg_log_level level) {
    if ((int)level < 0 || level >= HG_LOG_LEVEL_COUNT) return;
    atomic_store(&g_level, (int)level);
}

void hg_log_set_callback(hg_log_fn fn, void* user) {
    pthread_mutex_lock(&g_cb_lock);
    g_cb = fn;
    g_cb_user = user;
    pthread_mutex_unlock(&g_cb_lock);
}

int hg_log_enabled(hg_log_level level) {
    hg_log_level cur = hg_log_get_level();
    return cur != HG_LOG_OFF && level >= cur;
}

void hg_log(hg_log_level level, const char* fmt, ...) {
    if (!hg_log_enabled(level)) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&g_cb_lock);
    hg_log_fn cb = g_cb;
    void* user = g_cb_user;
    pthread_mutex_unlock(&g_cb_lock);
    if (cb)
        cb(level, msg, user);
    else
        fprintf(stderr, "hologram [%s] %s\n", level_names[level], msg);
}

void hg_log_fork(hg_fork_phase phase) { hg_fork_mutex(&g_cb_lock, phase); }
