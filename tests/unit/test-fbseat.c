/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which framebuffers of an enumeration a seat takes (fbseat_choose(),
 * fbdev=all): its own in /dev/fbN order, never another seat's, never one a
 * screen has or waits at, no more than there may be screens.
 */
#include <stdlib.h>
#include <string.h>

#include "../../daemon/devices/fbseat.h"
#include "../../daemon/util/util.h"
#include "tests.h"

/* An enumeration as udev lists it (not in N's order): fbN on seats[N]. */
static struct fbseat_entry *entries(const unsigned *n, const char *const *seats, size_t count)
{
	struct fbseat_entry *e = xcalloc(count, sizeof(*e));
	char node[32];

	for (size_t i = 0; i < count; i++) {
		snprintf(node, sizeof(node), "/dev/fb%u", n[i]);
		e[i] = (struct fbseat_entry){n[i], xstrdup(node), xstrdup(seats[i]), -1};
	}
	return e;
}

/* e's verdicts in N's order as letters: T take, O other seat, U used, F full. */
static void verdicts(const struct fbseat_entry *e, size_t n, char *buf)
{
	static const char letters[] = {'T', 'O', 'U', 'F'};

	for (size_t i = 0; i < n; i++)
		buf[i] = e[i].verdict >= 0 && e[i].verdict < 4 ? letters[e[i].verdict] : '?';
	buf[n] = '\0';
}

static void check_choice(const unsigned *n, const char *const *seats, size_t count,
			 const char *seat, const char *const *used, size_t n_used, unsigned max,
			 const char *want)
{
	struct fbseat_entry *e = entries(n, seats, count);
	char got[16];

	fbseat_choose(e, count, seat, used, n_used, max);
	for (size_t i = 1; i < count; i++)
		CHECK(e[i - 1].n < e[i].n);
	verdicts(e, count, got);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "seat %s: got %s, want %s\n", seat, got, want);
	CHECK(strcmp(got, want) == 0);
	fbseat_list_free(e, count);
}

static void test_start(void)
{
	/* fb2, fb0, fb1 as udev lists them; fb1 attached to seat1 */
	static const unsigned n[] = {2, 0, 1};
	static const char *const seats[] = {"seat0", "seat0", "seat1"};

	check_choice(n, seats, 3, "seat0", NULL, 0, 4, "TOT");
	check_choice(n, seats, 3, "seat1", NULL, 0, 4, "OTO");
	check_choice(n, seats, 3, "seat2", NULL, 0, 4, "OOO");
	/* six of a seat: the first four by N */
	static const unsigned six[] = {5, 4, 3, 2, 1, 0};
	static const char *const s6[] = {"seat0", "seat0", "seat0", "seat0", "seat0", "seat0"};

	check_choice(six, s6, 6, "seat0", NULL, 0, 4, "TTTTFF");
	/* another seat's in between does not take a place */
	static const char *const mixed[] = {"seat0", "seat0", "seat0", "seat0", "seat1", "seat0"};

	check_choice(six, mixed, 6, "seat0", NULL, 0, 4, "TOTTTF");
	check_choice(n, seats, 0, "seat0", NULL, 0, 4, "");
}

static void test_later(void)
{
	static const unsigned n[] = {0, 1, 2};
	static const char *const seats[] = {"seat0", "seat0", "seat0"};
	/* fb0 is a screen's, fb1's screen waits at its path for a successor */
	static const char *const used[] = {"/dev/fb0", "/dev/fb1"};

	check_choice(n, seats, 3, "seat0", used, 2, 4, "UUT");
	/* three screens already, one may come */
	static const char *const three[] = {"/dev/fb0", "/dev/fb7", "/dev/fb8"};

	check_choice(n, seats, 3, "seat0", three, 3, 4, "UTF");
	static const char *const four[] = {"/dev/fb0", "/dev/fb7", "/dev/fb8", "/dev/fb9"};

	check_choice(n, seats, 3, "seat0", four, 4, 4, "UFF");
	/* a card moved onto another seat: not taken, though no screen has it */
	static const char *const moved[] = {"seat0", "seat0", "seat-b"};

	check_choice(n, moved, 3, "seat0", used, 2, 4, "UUO");
	check_choice(n, moved, 3, "seat-b", NULL, 0, 4, "OOT");
}

static void test_verdict_names(void)
{
	CHECK(strcmp(fbseat_verdict_to_string(FBSEAT_TAKE), "taken") == 0);
	CHECK(strcmp(fbseat_verdict_to_string(FBSEAT_OTHER_SEAT), "another seat's") == 0);
	CHECK(strcmp(fbseat_verdict_to_string(FBSEAT_USED), "?") != 0);
	CHECK(strcmp(fbseat_verdict_to_string(FBSEAT_FULL), "?") != 0);
}

int main(void)
{
	RUN(test_start);
	RUN(test_later);
	RUN(test_verdict_names);
	return TESTS_RESULT();
}
