/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static int log_max_level = LOG_INFO;

void log_set_max_level(int level)
{
	log_max_level = level;
}

int log_get_max_level(void)
{
	return log_max_level;
}

static bool log_use_prefix(void)
{
	return getenv("JOURNAL_STREAM") || !isatty(STDERR_FILENO);
}

int log_internalv(int level, int error, const char *module, const char *format, va_list ap)
{
	char buf[1024];
	int saved_errno = errno;

	if (error < 0)
		error = -error;
	if (level > log_max_level)
		return -error;

	/* "%m" must expand to the error we were given, not whatever errno is. */
	errno = error;
	vsnprintf(buf, sizeof(buf), format, ap);

	if (log_use_prefix())
		fprintf(stderr, "<%d>%s: %s\n", level, module, buf);
	else
		fprintf(stderr, "%s: %s\n", module, buf);

	errno = saved_errno;
	return -error;
}

int log_internal(int level, int error, const char *module, const char *format, ...)
{
	va_list ap;
	int r;

	va_start(ap, format);
	r = log_internalv(level, error, module, format, ap);
	va_end(ap);
	return r;
}
