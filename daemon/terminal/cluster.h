/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * Stand-ins: one code point for what libtsm cannot keep in a cell.
 *
 * libtsm 4 keeps one code point per cell and drops zero-width code points, so
 * a combining mark would never reach the screen; nor does it keep the dim
 * and strikethrough attributes (SGR 2 and 9). The pty stream stage (stream.h)
 * therefore replaces a base character with the marks that follow it, or a
 * character printed dim or struck through, by a stand-in code point from
 * Unicode's Supplementary Private Use Area-B (U+100000..U+10FFFD), which
 * libtsm stores like any narrow character, and the renderer draws what the
 * stand-in means: the cluster, with those attributes.
 *
 * Stand-ins are handed out once per distinct (cluster, flags) and never
 * reused within a session, since the scrollback may still show any of them;
 * when the area is used up, further ones are not handed out (the stream stage
 * then prints the base alone, and that is logged once). A new session starts
 * with an empty table (cluster_table_reset()), so one user cannot use the
 * area up for the next, nor learn the clusters shown before. Code points of
 * that area sent by programs themselves get a stand-in of their own, so every
 * code point of the area that libtsm holds is one of ours.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLUSTER_MAX_LEN 8 /* a base and up to 7 marks; more are dropped */
#define CLUSTER_FIRST 0x100000u
#define CLUSTER_LAST 0x10fffdu

/* What a stand-in adds to its cluster: attributes libtsm does not keep. */
enum cluster_flags {
	CLUSTER_DIM = 1 << 0,	 /* SGR 2, faint */
	CLUSTER_STRIKE = 1 << 1, /* SGR 9, crossed out */
};

struct cluster_table;

struct cluster_table *cluster_table_new(void);
void cluster_table_free(struct cluster_table *t);
/* Forgets every cluster: for a new session, once nothing on the screen or in
 * the scrollback holds a stand-in. Whoever draws stand-ins must forget what
 * it cached of them (render_set_clusters()). */
void cluster_table_reset(struct cluster_table *t);

/* The stand-in for the cluster ch[0..len) (len >= 1, a base and its marks;
 * more than CLUSTER_MAX_LEN are cut) with `flags` (enum cluster_flags),
 * handed out on first use; 0 when the area is used up. */
uint32_t cluster_intern(struct cluster_table *t, const uint32_t *ch, size_t len, unsigned flags);

/* The code points a stand-in means and its flags (ret_flags may be NULL);
 * NULL for any other code point. */
const uint32_t *cluster_lookup(const struct cluster_table *t, uint32_t cp, size_t *ret_len,
			       unsigned *ret_flags);

/* Session restore (snapshot.h): how many stand-ins are handed out (they are
 * CLUSTER_FIRST up to CLUSTER_FIRST + count - 1, read with cluster_lookup()),
 * and the next one re-created as it was: cp must be CLUSTER_FIRST + count,
 * ch[0..len) a cluster of 1 to CLUSTER_MAX_LEN code points and flags of enum
 * cluster_flags, not already in the table. Returns 0 or -EINVAL (nothing
 * changed). */
size_t cluster_table_count(const struct cluster_table *t);
int cluster_table_restore(struct cluster_table *t, uint32_t cp, const uint32_t *ch, size_t len,
			  unsigned flags);
