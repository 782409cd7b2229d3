/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * A minimal unit-test harness: each test program runs its TEST functions in
 * order; a failed CHECK prints file, line and the expression and marks the
 * program failed (exit status 1), so meson reports it.
 */
#include <inttypes.h>
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

#define TESTS_RESULT() (tests_failed ? EXIT_FAILURE : EXIT_SUCCESS)
