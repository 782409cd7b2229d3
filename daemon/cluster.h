/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Combining characters. libtsm 4 keeps one code point per cell and drops
 * zero-width code points, so a combining mark would never reach the screen.
 * consoled therefore joins a base character and the marks that follow it in
 * the pty's byte stream before libtsm sees them: the cluster is replaced by a
 * stand-in code point from Unicode's Supplementary Private Use Area-B
 * (U+100000..U+10FFFD), which libtsm stores like any narrow character, and
 * the renderer draws the cluster the stand-in means.
 *
 * Stand-ins are handed out once per distinct cluster and never reused within
 * a session, since the scrollback may still show any of them; when the area
 * is used up, further marks are dropped (and that is logged once). A new
 * session starts with an empty table (cluster_table_reset()), so one user
 * cannot use the area up for the next, nor learn the clusters shown before. Code points of that
 * area sent by programs themselves are passed through a stand-in of their own,
 * so every code point of the area that libtsm holds is one of ours.
 *
 * Only clusters whose base and marks arrive in one read from the pty are
 * joined (programs write a character with its marks in one go); a mark that
 * comes in a later read is dropped, as libtsm would. A UTF-8 sequence cut
 * by the end of a read is held back until the rest arrives. A wide base keeps its
 * width and loses its marks: a stand-in is narrow.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLUSTER_MAX_LEN 8 /* a base and up to 7 marks; more are dropped */
#define CLUSTER_FIRST 0x100000u
#define CLUSTER_LAST 0x10fffdu

struct cluster_table;

struct cluster_table *cluster_table_new(void);
void cluster_table_free(struct cluster_table *t);
/* Forgets every cluster: for a new session, once nothing on the screen or in
 * the scrollback holds a stand-in. Whoever draws stand-ins must forget what
 * it cached of them (render_set_clusters()). */
void cluster_table_reset(struct cluster_table *t);

/* The code points a stand-in means; NULL for any other code point. */
const uint32_t *cluster_lookup(const struct cluster_table *t, uint32_t cp, size_t *ret_len);

/* A filter on the pty's byte stream that joins clusters, with state across
 * calls (escape sequences and strings are passed through untouched). */
struct cluster_filter {
	struct cluster_table *table;
	int state; /* where in an escape sequence the stream is */
	/* A UTF-8 sequence cut by the end of a read waits for its rest, so
	 * that no code point reaches libtsm unseen. */
	char pending[4];
	size_t n_pending;
	char *scratch; /* pending + the next read */
	size_t scratch_cap;
};

/* Rewrites in[0..len) into out (room for CLUSTER_FILTER_OUT(len) bytes: a
 * 3-byte cluster becomes a 4-byte stand-in, and up to 3 bytes held back from
 * the last call come first); returns the bytes written. */
#define CLUSTER_FILTER_OUT(len) (2 * (len) + 8)
size_t cluster_filter_feed(struct cluster_filter *f, const char *in, size_t len, char *out);
/* A new session: text again, and nothing held back from the last one (the
 * table is reset on its own, cluster_table_reset()). */
void cluster_filter_reset(struct cluster_filter *f);
void cluster_filter_fini(struct cluster_filter *f);
