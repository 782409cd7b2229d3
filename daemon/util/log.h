/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Logging. Every message goes to stderr. Under systemd (JOURNAL_STREAM set, or
 * stderr not a terminal) each line starts with a "<N>" priority prefix that
 * journald turns into the message priority; on a terminal the text is plain.
 * Debug messages are compiled in and shown only after log_set_max_level(LOG_DEBUG)
 * (--verbose). The log level is the only mutable global state of the daemon.
 *
 * The log_*_errno() helpers return the negative errno they were given, so an
 * error can be logged where it is decided and returned in one statement:
 *     return log_error_errno(r, "Failed to map %s: %m", path);
 * "%m" expands to strerror() of that errno.
 */
#include <stdarg.h>
#include <syslog.h>

#ifndef LOG_MODULE
#define LOG_MODULE "consoled"
#endif

void log_set_max_level(int level);
int log_get_max_level(void);

int log_internal(int level, int error, const char *module, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
int log_internalv(int level, int error, const char *module, const char *format, va_list ap)
    __attribute__((format(printf, 4, 0)));

#define log_full_errno(level, error, ...) log_internal((level), (error), LOG_MODULE, __VA_ARGS__)

#define log_debug(...) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_full_errno(LOG_ERR, 0, __VA_ARGS__)

#define log_debug_errno(e, ...) log_full_errno(LOG_DEBUG, (e), __VA_ARGS__)
#define log_info_errno(e, ...) log_full_errno(LOG_INFO, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, (e), __VA_ARGS__)
