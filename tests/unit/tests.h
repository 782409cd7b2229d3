/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * A minimal unit-test harness: each test program runs its TEST functions in
 * order; a failed CHECK prints file, line and the expression and marks the
 * program failed (exit status 1), so meson reports it.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tests_failed;

#define CHECK(expr)                                                                                \
	do {                                                                                       \
		if (!(expr)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #expr);   \
			tests_failed = 1;                                                          \
		}                                                                                  \
	} while (0)

#define CHECK_EQ_U(a, b)                                                                           \
	do {                                                                                       \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                   \
		if (a_ != b_) {                                                                    \
			fprintf(stderr,                                                            \
				"%s:%d: CHECK failed: %s == %s (0x%" PRIx64 " != 0x%" PRIx64       \
				")\n",                                                             \
				__FILE__, __LINE__, #a, #b, a_, b_);                               \
			tests_failed = 1;                                                          \
		}                                                                                  \
	} while (0)

#define RUN(test)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "== %s\n", #test);                                                 \
		test();                                                                            \
	} while (0)

/* Bytes as terminfo writes them: \E for ESC, octal for other controls. */
/* Little-endian fields (the snapshot's, PSF2's) whatever the CPU's order. */
static inline uint32_t get_le(const uint8_t *p, unsigned n)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

static inline void put_le(uint8_t *p, uint32_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void print_bytes(FILE *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == 0x1b)
			fputs("\\E", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\%03o", c);
		else
			fputc(c, f);
	}
}

/* Before a test starts a session on a pty (term_new()): sd-event watches the
 * session's child with SIGCHLD blocked, and the session's hang-up must not
 * end the test. */
static inline void tests_session_signals(void)
{
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	signal(SIGHUP, SIG_IGN);
}

#define TESTS_RESULT() (tests_failed ? EXIT_FAILURE : EXIT_SUCCESS)
