/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The terminal's snapshot (snapshot.h).
 *
 * Format, version 2 (version 1 stored scrollback lines as 12-byte cells). All
 * integers little-endian; offsets are from the start of the memfd. A cell is
 * 12 bytes:
 *     u32  code point (bits 0-20), width (21-22: 0 behind a wide character,
 *          1, 2), bold (23), italic (24), underline (25), inverse (26),
 *          protect (27), blink (28); bits 29-31 zero
 *     i8   fccode, bccode (-1: the rgb fields; 0-15; 16, 17: the defaults)
 *     u8   fr, fg, fb, br, bg, bb
 *
 * [0, 8192): two header slots of 4096 bytes. A header:
 *     0   "CONSNAP\n"
 *     8   u32 version (2)
 *     12  u32 length of the header (32 + records, at most 4096)
 *     16  u64 generation
 *     24  u32 CRC-32 (zlib) of bytes [0, 24) and [28, length)
 *     28  u32 zero
 *     32  records: u16 tag, u16 payload length, payload padded to 4 bytes;
 *         unknown tags are skipped, each known one appears once:
 *     GRID (1)     u32 cols, rows, sb_cap (scrollback lines the ring holds),
 *                  cl_cap (stand-in entries the region holds); u64 region
 *                  offset (the region's layout follows from these, see
 *                  layout_compute())
 *     CURSOR (2)   u32 x (cols or cols + 1: a wrap is pending), y
 *     SCREEN (3)   u32 flags (TSM_SCREEN_*), margin top, margin bottom (0-based,
 *                  inclusive); a cell: the attribute erased cells get
 *     TABS (4)     one bit per column, LSB first
 *     STREAM (5)   stream_state, field by field (see put_stream())
 *     CLUSTERS (6) u32 stand-ins handed out
 *     SB (7)       u64 ring offset of the oldest line, u64 ring offset where
 *                  the next goes, u32 lines, u32 zero, u64 id of the newest
 *     ROWS (8)     u32 CRC-32 of the rows' CRCs (main screen, then alternate,
 *                  each as u32), u32 zero: a row whose newest copy is broken
 *                  cannot pass for its older copy
 *     MOUSE (9)    u32 the mouse modes (stream_state.mouse: STREAM_MOUSE_*
 *                  bits, at most one tracking and one encoding), u32 zero.
 *                  Optional, added after version 2 without a new version: a
 *                  snapshot without it (an older consoled's) restores with
 *                  every mouse mode off, and an older consoled skips it.
 *     KITTY (10)   the kitty keyboard protocol's stacks (stream_state.kitty):
 *                  u8 entries of the main screen's, u8 of the alternate
 *                  screen's, u16 zero, then 16 u8 flags of each (those past
 *                  the entries zero). Optional, as MOUSE: without it, flags
 *                  0 on both screens.
 * The valid header (magic, version, length, CRC) with the highest generation
 * is the snapshot; if what it points to is broken, the other one is tried.
 *
 * A region (at the offset GRID names, 4096-aligned, from 8192 on; a new one
 * is written beside the old when the grid changes or the stand-ins outgrow
 * theirs, so that the old stays valid until the header that points to the
 * new one is written):
 *   - the stand-ins, cl_cap entries of 40 bytes, append-only: u32 CRC-32 of
 *     the rest, u8 length (1-8), u8 flags, u16 zero, u32 code points[8]
 *     (unused ones zero).
 *   - rows: for the main screen, then the alternate one, each row has two
 *     slots of align8(16 + cols * 12) bytes: u64 generation, u32 CRC-32 of
 *     bytes [0, 8) and [16, end), u32 zero, cols cells. A row is the valid
 *     slot with the highest generation not above the header's. An update
 *     writes a changed row into the slot not holding its committed copy.
 *   - the scrollback ring, (sb_cap + 1) * align8(32 + cols * 16) + 32 bytes.
 *     A line: u64 id (the push's number, consecutive), u16 cells stored,
 *     u16 width (cells shown, at most cols), u32 CRC-32 of bytes [0, 12) and
 *     [16, end), u16 runs, u16 text bytes, a cell whose attribute fills the
 *     cells from the stored ones to the width (code point 0, width 1); then
 *     the runs: cells whose code point field is the run's length in cells
 *     (width 0) and whose attribute the run's cells have, the lengths adding
 *     up to the cells stored; then the text: one unsigned LEB128 number per
 *     stored cell, its code point at the width libtsm gives it
 *     (tsm_ucs4_get_width(); 0: a blank of width 1), or 0x110000 plus the
 *     code point for a cell of width 0; padded with zeros to 8 bytes. Plain
 *     text thus takes about a byte per cell. A line never wraps around the
 *     end of the ring: if it does not fit, a marker (id 0, no cells) is left
 *     when 32 bytes remain and the line goes to offset 0. Lines are appended as libtsm
 *     pushes them; when appending would overwrite lines the committed header
 *     still counts, a header without them is committed first.
 *
 * Written in order: stand-in entries, ring lines and rows (all at places the
 * committed header does not count), then the new header into the other
 * slot, so a crash at any point leaves the last committed snapshot whole.
 */
#define LOG_MODULE "snapshot"
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cluster.h"
#include "snapshot.h"
#include "stream.h"
#include "tsmpeek.h"
#include "../util/log.h"
#include "../util/util.h"

#define SNAP_MAGIC "CONSNAP\n"
#define SNAP_VERSION 2u
#define HDR_SLOT 4096u
#define HDR_FIXED 32u
#define CELL_SIZE 12u
#define CL_MIN 64u
#define CL_ENTRY 40u
#define CL_COUNT (CLUSTER_LAST - CLUSTER_FIRST + 1)
#define PAGE 4096u
#define ALIGN(x, a) (((x) + (a)-1) / (a) * (a))
#define REGION_BASE (2u * HDR_SLOT)
#define ROW_HDR 16u
#define REC_HDR 32u

/* Rows of a region up to this size get their pages when they are mapped. */
#define POPULATE_MAX (16u << 20)

/* What a snapshot may describe (a larger one is refused). */
#define MAX_COLS 4096u
#define MAX_ROWS 4096u
#define MAX_SB 1000000u

enum {
	TAG_GRID = 1,
	TAG_CURSOR = 2,
	TAG_SCREEN = 3,
	TAG_TABS = 4,
	TAG_STREAM = 5,
	TAG_CLUSTERS = 6,
	TAG_SB = 7,
	TAG_ROWS = 8,
	TAG_MOUSE = 9,
	TAG_KITTY = 10,
	TAG_MAX_KNOWN = 10,
};

/* The records every snapshot has (MOUSE and KITTY may be missing). */
#define TAGS_REQUIRED 0x1feu

#define STREAM_REC_SIZE 112u
#define KITTY_REC_SIZE (4u + 2u * STREAM_KITTY_DEPTH)

void (*snapshot_test_commit_hook)(int fd, unsigned phase, void *userdata);
void *snapshot_test_commit_userdata;

struct layout {
	unsigned cols, rows, sb_cap, cl_cap;
	uint64_t region_off, region_size, cl_off;
	uint64_t slot_size, rows_off;
	uint64_t max_rec, ring_off, ring_cap;
};

struct cell {
	uint32_t ch;
	unsigned width;
	struct tsm_screen_attr attr;
};

/* What a header says besides its generation. */
struct hdr_state {
	struct layout lay;
	unsigned cursor_x, cursor_y;
	unsigned flags, margin_top, margin_bottom;
	struct tsm_screen_attr def_attr;
	uint8_t tabs[MAX_COLS / 8];
	struct stream_state stream;
	uint32_t clusters;
	uint64_t sb_tail, sb_head, sb_last_id;
	uint32_t sb_count;
	uint32_t rows_crc;
};

struct row_track {
	const struct tsmpeek_line *line; /* the line written last */
	uint8_t slot;			 /* which slot holds the committed copy */
	bool dirty;			 /* written in this update */
	uint32_t crc, new_crc;		 /* the committed copy's, the new one's */
};

struct snapshot {
	int fd;
	uint8_t *map;
	size_t map_size;
	unsigned sb_size;
	bool laid_out; /* something committed */
	/* The committed scrollback lacks older lines libtsm has (a flood). */
	bool sb_partial;
	uint64_t gen; /* the committed header's */
	struct hdr_state cur;
	struct row_track *track[2];
	uint32_t *crcs; /* scratch: 2 * rows */
	tsm_age_t last_age;
	/* scratch */
	const struct tsmpeek_line **sb_lines;
	uint64_t *sb_at; /* their records in sb_buf, and one past the last */
	size_t sb_lines_cap;
	uint8_t *sb_buf; /* the new lines' records */
	size_t sb_buf_cap;
	uint8_t hdr_buf[HDR_SLOT];
};

/* ---- encoding ----------------------------------------------------------- */

static void put_u16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put_u64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static uint16_t get_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return le16toh(v);
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static uint32_t crc_skip(const uint8_t *p, size_t len, size_t skip_at)
{
	uLong c = crc32(0, p, (uInt)skip_at);

	return (uint32_t)crc32(c, p + skip_at + 4, (uInt)(len - skip_at - 4));
}

static void put_cell(uint8_t *p, uint32_t ch, unsigned width, const struct tsm_screen_attr *a)
{
	if (ch > 0x10ffff || width > 2) { /* libtsm 4's vte makes neither */
		ch = 0xfffd;
		width = 1;
	}
	put_u32(p, ch | (uint32_t)width << 21 | (uint32_t)a->bold << 23 |
		       (uint32_t)a->italic << 24 | (uint32_t)a->underline << 25 |
		       (uint32_t)a->inverse << 26 | (uint32_t)a->protect << 27 |
		       (uint32_t)a->blink << 28);
	p[4] = (uint8_t)a->fccode;
	p[5] = (uint8_t)a->bccode;
	p[6] = a->fr;
	p[7] = a->fg;
	p[8] = a->fb;
	p[9] = a->br;
	p[10] = a->bg;
	p[11] = a->bb;
}

/* put_cell() for runs of cells: the attribute's bytes are made once per
 * run of equal attributes. */
struct cell_enc {
	bool valid;
	struct tsm_screen_attr attr;
	uint8_t bytes[CELL_SIZE];
};

static void put_cell_run(struct cell_enc *e, uint8_t *p, uint32_t ch, unsigned width,
			 const struct tsm_screen_attr *a)
{
	if (ch > 0x10ffff || width > 2 || !e->valid || memcmp(&e->attr, a, sizeof(*a)) != 0) {
		put_cell(p, ch, width, a);
		if (ch <= 0x10ffff && width <= 2) {
			memcpy(e->bytes, p, CELL_SIZE);
			e->attr = *a;
			e->valid = true;
		}
		return;
	}
	put_u32(p, (get_u32(e->bytes) & ~(uint32_t)0x7fffff) | ch | (uint32_t)width << 21);
	memcpy(p + 4, e->bytes + 4, CELL_SIZE - 4);
}

static bool code_valid(int8_t code)
{
	return code >= -1 && code < TSM_COLOR_NUM;
}

static bool get_cell(const uint8_t *p, struct cell *c)
{
	uint32_t w = get_u32(p);

	if (w >> 29)
		return false;
	*c = (struct cell){
	    .ch = w & 0x1fffff,
	    .width = (w >> 21) & 3,
	    .attr = {.fccode = (int8_t)p[4],
		     .bccode = (int8_t)p[5],
		     .fr = p[6],
		     .fg = p[7],
		     .fb = p[8],
		     .br = p[9],
		     .bg = p[10],
		     .bb = p[11],
		     .bold = (w >> 23) & 1,
		     .italic = (w >> 24) & 1,
		     .underline = (w >> 25) & 1,
		     .inverse = (w >> 26) & 1,
		     .protect = (w >> 27) & 1,
		     .blink = (w >> 28) & 1},
	};
	return code_valid(c->attr.fccode) && code_valid(c->attr.bccode);
}

static bool attr_eq(const struct tsm_screen_attr *a, const struct tsm_screen_attr *b)
{
	return a->fccode == b->fccode && a->bccode == b->bccode && a->fr == b->fr &&
	       a->fg == b->fg && a->fb == b->fb && a->br == b->br && a->bg == b->bg &&
	       a->bb == b->bb && a->bold == b->bold && a->italic == b->italic &&
	       a->underline == b->underline && a->inverse == b->inverse &&
	       a->protect == b->protect && a->blink == b->blink;
}

/* ---- layout ------------------------------------------------------------- */

static bool layout_compute(struct layout *l, unsigned cols, unsigned rows, unsigned sb_cap,
			   unsigned cl_cap, uint64_t region_off)
{
	if (cols < 1 || cols > MAX_COLS || rows < 1 || rows > MAX_ROWS || sb_cap > MAX_SB ||
	    cl_cap > CL_COUNT)
		return false;
	l->cols = cols;
	l->rows = rows;
	l->sb_cap = sb_cap;
	l->cl_cap = cl_cap;
	l->region_off = region_off;
	l->cl_off = region_off;
	l->slot_size = ALIGN(ROW_HDR + (uint64_t)cols * CELL_SIZE, 8);
	l->rows_off = region_off + (uint64_t)cl_cap * CL_ENTRY;
	l->max_rec = ALIGN(REC_HDR + (uint64_t)cols * (CELL_SIZE + 4), 8);
	l->ring_off = l->rows_off + 4 * (uint64_t)rows * l->slot_size;
	l->ring_cap = ((uint64_t)sb_cap + 1) * l->max_rec + REC_HDR;
	l->region_size = ALIGN(l->ring_off - region_off + l->ring_cap, PAGE);
	return true;
}

static uint64_t slot_off(const struct layout *l, unsigned screen, unsigned row, unsigned slot)
{
	return l->rows_off + (((uint64_t)screen * l->rows + row) * 2 + slot) * l->slot_size;
}

/* A scrollback record's size, from its runs and text bytes. */
static uint64_t rec_size(unsigned runs, unsigned text)
{
	return ALIGN(REC_HDR + (uint64_t)runs * CELL_SIZE + text, 8);
}

/* ---- the header ----------------------------------------------------------- */

static uint8_t *rec_begin(uint8_t *buf, size_t *off, unsigned tag, size_t len)
{
	uint8_t *p = buf + *off;

	put_u16(p, (uint16_t)tag);
	put_u16(p + 2, (uint16_t)len);
	memset(p + 4, 0, ALIGN(len, 4));
	*off += 4 + ALIGN(len, 4);
	return p + 4;
}

static void put_pen(uint8_t *p, const struct stream_pen *pen)
{
	put_cell(p, 0, 0, &pen->attr);
	put_u32(p + 12, pen->extra);
}

/* stream_state, field by field (112 bytes). */
static void put_stream(uint8_t *p, const struct stream_state *st)
{
	put_pen(p, &st->pen);
	memcpy(p + 16, st->g, 4);
	p[20] = st->gl;
	p[21] = st->gr;
	p[22] = (uint8_t)st->glt;
	p[23] = st->rep_len;
	put_u32(p + 24, st->modes);
	put_u32(p + 28, st->saved.x);
	put_u32(p + 32, st->saved.y);
	put_pen(p + 36, &st->saved.pen);
	p[52] = st->saved.gl;
	p[53] = st->saved.gr;
	p[54] = st->saved.wrap;
	p[55] = st->saved.origin;
	put_u32(p + 56, st->alt.x);
	put_u32(p + 60, st->alt.y);
	for (unsigned i = 0; i < STREAM_REP_MAX; i++)
		put_u32(p + 64 + 4 * i, i < st->rep_len ? st->rep[i] : 0);
	/* 96-111: zero, for fields to come */
}

static bool get_pen(const uint8_t *p, struct stream_pen *pen)
{
	struct cell c;

	if (!get_cell(p, &c) || c.ch || c.width)
		return false;
	pen->attr = c.attr;
	pen->extra = get_u32(p + 12);
	return true;
}

static bool get_stream(const uint8_t *p, struct stream_state *st)
{
	*st = (struct stream_state){0};
	if (!get_pen(p, &st->pen) || !get_pen(p + 36, &st->saved.pen))
		return false;
	memcpy(st->g, p + 16, 4);
	st->gl = p[20];
	st->gr = p[21];
	st->glt = (int8_t)p[22];
	st->rep_len = p[23];
	st->modes = get_u32(p + 24);
	st->saved.x = get_u32(p + 28);
	st->saved.y = get_u32(p + 32);
	st->saved.gl = p[52];
	st->saved.gr = p[53];
	if (p[54] > 1 || p[55] > 1 || st->rep_len > STREAM_REP_MAX)
		return false;
	st->saved.wrap = p[54];
	st->saved.origin = p[55];
	st->alt.x = get_u32(p + 56);
	st->alt.y = get_u32(p + 60);
	for (unsigned i = 0; i < STREAM_REP_MAX; i++)
		st->rep[i] = get_u32(p + 64 + 4 * i);
	return true;
}

static size_t header_build(uint8_t *buf, uint64_t gen, const struct hdr_state *h)
{
	size_t off = HDR_FIXED, len;
	uint8_t *p;

	memset(buf, 0, HDR_FIXED);
	memcpy(buf, SNAP_MAGIC, 8);
	put_u32(buf + 8, SNAP_VERSION);
	put_u64(buf + 16, gen);

	p = rec_begin(buf, &off, TAG_GRID, 24);
	put_u32(p, h->lay.cols);
	put_u32(p + 4, h->lay.rows);
	put_u32(p + 8, h->lay.sb_cap);
	put_u32(p + 12, h->lay.cl_cap);
	put_u64(p + 16, h->lay.region_off);

	p = rec_begin(buf, &off, TAG_CURSOR, 8);
	put_u32(p, h->cursor_x);
	put_u32(p + 4, h->cursor_y);

	p = rec_begin(buf, &off, TAG_SCREEN, 24);
	put_u32(p, h->flags);
	put_u32(p + 4, h->margin_top);
	put_u32(p + 8, h->margin_bottom);
	put_cell(p + 12, 0, 0, &h->def_attr);

	len = (h->lay.cols + 7) / 8;
	p = rec_begin(buf, &off, TAG_TABS, len);
	memcpy(p, h->tabs, len);

	p = rec_begin(buf, &off, TAG_STREAM, STREAM_REC_SIZE);
	put_stream(p, &h->stream);

	p = rec_begin(buf, &off, TAG_CLUSTERS, 4);
	put_u32(p, h->clusters);

	p = rec_begin(buf, &off, TAG_SB, 32);
	put_u64(p, h->sb_tail);
	put_u64(p + 8, h->sb_head);
	put_u32(p + 16, h->sb_count);
	put_u64(p + 24, h->sb_last_id);

	p = rec_begin(buf, &off, TAG_ROWS, 8);
	put_u32(p, h->rows_crc);

	p = rec_begin(buf, &off, TAG_MOUSE, 8);
	put_u32(p, h->stream.mouse);

	p = rec_begin(buf, &off, TAG_KITTY, KITTY_REC_SIZE);
	p[0] = h->stream.kitty_n[0];
	p[1] = h->stream.kitty_n[1];
	memcpy(p + 4, h->stream.kitty, sizeof(h->stream.kitty));

	put_u32(buf + 12, (uint32_t)off);
	put_u32(buf + 24, crc_skip(buf, off, 24));
	return off;
}

/* ---- writing ------------------------------------------------------------ */

int snapshot_new(unsigned sb_size, struct snapshot **ret)
{
	struct snapshot *s;
	int fd;

	if (sb_size > MAX_SB)
		return -EINVAL;
	fd = memfd_create("consoled-snapshot", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	s = xcalloc(1, sizeof(*s));
	s->fd = fd;
	s->sb_size = sb_size;
	*ret = s;
	return 0;
}

static void snapshot_unmap(struct snapshot *s)
{
	if (s->map)
		munmap(s->map, s->map_size);
	s->map = NULL;
	s->map_size = 0;
}

void snapshot_free(struct snapshot *s)
{
	if (!s)
		return;
	snapshot_unmap(s);
	close(s->fd);
	free(s->track[0]);
	free(s->track[1]);
	free(s->crcs);
	free(s->sb_lines);
	free(s->sb_at);
	free(s->sb_buf);
	free(s);
}

int snapshot_fd(const struct snapshot *s)
{
	return s->fd;
}

void snapshot_reset(struct snapshot *s)
{
	snapshot_unmap(s);
	/* the pages go at once: nothing of the session stays in the memfd */
	if (ftruncate(s->fd, 0) < 0)
		log_warning_errno(errno, "Cannot empty the snapshot: %m");
	s->laid_out = false;
	s->sb_partial = false;
	s->gen = 0;
	s->cur = (struct hdr_state){0};
	free(s->track[0]);
	free(s->track[1]);
	s->track[0] = s->track[1] = NULL;
}

/* The pages every update writes at once (one call, not a fault per page in
 * the updates that touch them first): the headers, and the stand-ins and
 * rows of the region at `l`. Not the scrollback ring: it fills a line at a
 * time, and taking its pages here made an idle terminal pay for all of its
 * scrollback from the start (1.3 MB at 80 columns, 2.6 MB at 160, with the
 * default 1000 lines). Without MADV_POPULATE_WRITE (Linux < 5.14) the pages
 * come as they are first written. */
static void snapshot_populate(struct snapshot *s, const struct layout *l)
{
#ifdef MADV_POPULATE_WRITE
	uint64_t rows = l->ring_off - l->region_off;

	if (madvise(s->map, REGION_BASE, MADV_POPULATE_WRITE) < 0 ||
	    (rows <= POPULATE_MAX &&
	     madvise(s->map + l->region_off, (size_t)rows, MADV_POPULATE_WRITE) < 0))
		log_debug_errno(errno, "Cannot populate the snapshot's pages: %m");
#else
	(void)s;
	(void)l;
#endif
}

static int snapshot_resize_file(struct snapshot *s, uint64_t size, const struct layout *l)
{
	void *map;

	if (size == s->map_size)
		return 0;
	/* a 32-bit address space: mmap() would take the size modulo 4 GiB */
	if (size > SIZE_MAX)
		return -E2BIG;
	snapshot_unmap(s);
	if (ftruncate(s->fd, (off_t)size) < 0)
		return -errno;
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	s->map = map;
	s->map_size = size;
	snapshot_populate(s, l);
	return 0;
}

static uint32_t write_row(struct snapshot *s, const struct layout *l, unsigned screen, unsigned row,
			  unsigned slot, uint64_t gen, const struct tsmpeek_line *line)
{
	uint8_t *p = s->map + slot_off(l, screen, row, slot);
	struct cell_enc e = {0};

	put_u64(p, gen);
	put_u32(p + 12, 0);
	for (unsigned x = 0; x < l->cols; x++) {
		const struct tsmpeek_cell *c = &line->cells[x];

		put_cell_run(&e, p + ROW_HDR + (size_t)x * CELL_SIZE, c->ch, c->width, &c->attr);
	}
	put_u32(p + 8, crc_skip(p, l->slot_size, 8));
	return get_u32(p + 8);
}

/* The CRC of the rows' CRCs, for the header. */
static uint32_t rows_digest(uint32_t *const crcs, size_t n)
{
	uLong c = crc32(0, NULL, 0);

	for (size_t i = 0; i < n; i++) {
		uint8_t b[4];

		put_u32(b, crcs[i]);
		c = crc32(c, b, 4);
	}
	return (uint32_t)c;
}

static bool cell_blank(const struct tsmpeek_cell *c, const struct tsm_screen_attr *fill)
{
	/* the same bytes (libtsm copies attributes whole) or the same fields */
	return c->ch == 0 && c->width == 1 &&
	       (memcmp(&c->attr, fill, sizeof(*fill)) == 0 || attr_eq(&c->attr, fill));
}

/* How many cells a scrollback line stores, its width and the fill. */
static unsigned sb_line_shape(const struct tsmpeek_line *line, unsigned cols, unsigned *ret_w,
			      const struct tsm_screen_attr **ret_fill)
{
	unsigned w = MIN(line->size, cols), n = w;
	const struct tsm_screen_attr *fill = &line->cells[w - 1].attr;

	while (n > 0 && cell_blank(&line->cells[n - 1], fill))
		n--;
	*ret_w = w;
	*ret_fill = fill;
	return n;
}

static unsigned put_leb(uint8_t *p, uint32_t v)
{
	unsigned n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* The text number of a cell (see the format). */
static uint32_t sb_code(uint32_t ch, unsigned width)
{
	int natural;

	if (ch > 0x10ffff || width > 2) /* libtsm 4's vte makes neither */
		return 0xfffd;
	if (width == 0)
		return 0x110000 + ch;
	if (ch == 0)
		return width == 1 ? 0 : 0xfffd;
	natural = tsm_ucs4_get_width(ch);
	/* a width libtsm would not give it (it makes none): a stand-in of
	 * width 1 for the character */
	return (int)width == natural ? ch : 0xfffd;
}

/* Encodes a scrollback line of n stored cells (sb_line_shape()) at p (room
 * for max_rec bytes); returns the record's size. */
static uint64_t encode_sb_line(uint8_t *p, const struct tsmpeek_line *line, unsigned cols,
			       unsigned n)
{
	unsigned w = MIN(line->size, cols), runs = 0, text = 0, run_len = 0;
	const struct tsm_screen_attr *fill = &line->cells[w - 1].attr, *run_attr = NULL;
	uint8_t tbuf[4 * MAX_COLS];
	uint8_t *r = p + REC_HDR;
	uint64_t size;

	for (unsigned x = 0; x < n; x++) {
		const struct tsmpeek_cell *c = &line->cells[x];
		uint32_t v;

		if (!run_attr || (memcmp(&c->attr, run_attr, sizeof(*run_attr)) != 0 &&
				  !attr_eq(&c->attr, run_attr))) {
			if (run_attr)
				put_cell(r + (size_t)(runs - 1) * CELL_SIZE, run_len, 0, run_attr);
			run_attr = &c->attr;
			run_len = 0;
			runs++;
		}
		run_len++;
		v = c->width == 1 && c->ch < 0x80 ? c->ch : sb_code(c->ch, c->width);
		if (v < 0x80)
			tbuf[text++] = (uint8_t)v;
		else
			text += put_leb(tbuf + text, v);
	}
	if (run_attr)
		put_cell(r + (size_t)(runs - 1) * CELL_SIZE, run_len, 0, run_attr);
	memcpy(r + (size_t)runs * CELL_SIZE, tbuf, text);
	size = rec_size(runs, text);
	memset(r + (size_t)runs * CELL_SIZE + text, 0, size - REC_HDR - runs * CELL_SIZE - text);
	put_u64(p, line->sb_id);
	put_u16(p + 8, (uint16_t)n);
	put_u16(p + 10, (uint16_t)w);
	put_u16(p + 16, (uint16_t)runs);
	put_u16(p + 18, (uint16_t)text);
	put_cell(p + 20, 0, 1, fill);
	put_u32(p + 12, crc_skip(p, size, 12));
	return size;
}

static void write_marker(uint8_t *p)
{
	memset(p, 0, REC_HDR);
	put_u32(p + 12, crc_skip(p, REC_HDR, 12));
}

/* The ring bytes from `from` up to `to` going forward (to == from: none). */
static uint64_t ring_dist(uint64_t from, uint64_t to, uint64_t cap)
{
	return to >= from ? to - from : cap - from + to;
}

/* Where a line of `size` bytes at `head` goes, and the bytes it takes from
 * head on (with what is skipped at the end). */
static uint64_t ring_place(uint64_t head, uint64_t size, uint64_t cap, uint64_t *ret_used)
{
	if (head + size > cap) {
		*ret_used = cap - head + size;
		return 0;
	}
	*ret_used = size;
	return head;
}

static void commit_header(struct snapshot *s, uint64_t gen, const struct hdr_state *h,
			  unsigned phase)
{
	size_t len = header_build(s->hdr_buf, gen, h);

	if (snapshot_test_commit_hook)
		snapshot_test_commit_hook(s->fd, phase, snapshot_test_commit_userdata);
	/* everything the header points to is written before it */
	atomic_thread_fence(memory_order_release);
	memcpy(s->map + (gen & 1) * HDR_SLOT, s->hdr_buf, len);
	atomic_thread_fence(memory_order_release);
}

static void read_screen_state(struct hdr_state *h, const struct tsmpeek_screen *p,
			      struct stream *stream)
{
	h->cursor_x = MIN(p->cursor_x, p->cols + 1);
	h->cursor_y = MIN(p->cursor_y, p->rows - 1);
	h->flags = p->flags & 0x7f;
	h->margin_top = p->margin_top;
	h->margin_bottom = p->margin_bottom;
	h->def_attr = p->def_attr;
	memset(h->tabs, 0, sizeof(h->tabs));
	for (unsigned x = 0; x < p->cols; x++)
		if (p->tab_stops[x])
			h->tabs[x / 8] |= (uint8_t)(1u << (x % 8));
	if (stream)
		stream_get_state(stream, &h->stream);
}

static bool hdr_state_eq(const struct hdr_state *a, const struct hdr_state *b)
{
	uint8_t x[STREAM_REC_SIZE] = {0}, y[STREAM_REC_SIZE] = {0};

	put_stream(x, &a->stream);
	put_stream(y, &b->stream);
	return a->lay.cols == b->lay.cols && a->lay.rows == b->lay.rows &&
	       a->lay.sb_cap == b->lay.sb_cap && a->lay.cl_cap == b->lay.cl_cap &&
	       a->lay.region_off == b->lay.region_off && a->stream.mouse == b->stream.mouse &&
	       memcmp(a->stream.kitty_n, b->stream.kitty_n, sizeof(a->stream.kitty_n)) == 0 &&
	       memcmp(a->stream.kitty, b->stream.kitty, sizeof(a->stream.kitty)) == 0 &&
	       a->cursor_x == b->cursor_x && a->cursor_y == b->cursor_y && a->flags == b->flags &&
	       a->margin_top == b->margin_top && a->margin_bottom == b->margin_bottom &&
	       attr_eq(&a->def_attr, &b->def_attr) &&
	       memcmp(a->tabs, b->tabs, sizeof(a->tabs)) == 0 && memcmp(x, y, sizeof(x)) == 0 &&
	       a->clusters == b->clusters && a->sb_tail == b->sb_tail && a->sb_head == b->sb_head &&
	       a->sb_last_id == b->sb_last_id && a->sb_count == b->sb_count &&
	       a->rows_crc == b->rows_crc;
}

/* The ring offset of the line after the one at off (our own bytes). */
static uint64_t ring_next(const struct snapshot *s, const struct layout *l, uint64_t off)
{
	const uint8_t *p;

	if (off + REC_HDR > l->ring_cap)
		off = 0;
	p = s->map + l->ring_off + off;
	if (get_u64(p) == 0) { /* a marker: the line is at 0 */
		off = 0;
		p = s->map + l->ring_off;
	}
	return off + rec_size(get_u16(p + 16), get_u16(p + 18));
}

static void write_clusters(struct snapshot *s, const struct layout *l,
			   const struct cluster_table *t, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++) {
		uint8_t *p = s->map + l->cl_off + (uint64_t)i * CL_ENTRY;
		unsigned flags = 0;
		size_t len = 0;
		const uint32_t *ch = cluster_lookup(t, CLUSTER_FIRST + i, &len, &flags);

		memset(p, 0, CL_ENTRY);
		p[4] = (uint8_t)len;
		p[5] = (uint8_t)flags;
		for (size_t k = 0; k < len; k++)
			put_u32(p + 8 + 4 * k, ch[k]);
		put_u32(p, (uint32_t)crc32(0, p + 4, CL_ENTRY - 4));
	}
}

/* max_new: at most this many new scrollback lines (0: all). */
static int update(struct snapshot *s, struct tsm_screen *screen, struct stream *stream,
		  const struct cluster_table *clusters, uint64_t max_new)
{
	const struct tsmpeek_screen *p;
	struct hdr_state h;
	struct layout lay;
	bool relayout, full, changed = false, partial = false;
	uint64_t gen, L, C, keep_from, first_new, k_new, tail, head, used, drop_to;
	uint32_t n_cl;
	unsigned sb_cap;
	int r;

	if (!tsmpeek_check(screen))
		return -EOPNOTSUPP;
	p = tsmpeek(screen);
	if (p->cols > MAX_COLS || p->rows > MAX_ROWS)
		return -E2BIG;
	n_cl = clusters ? (uint32_t)cluster_table_count(clusters) : 0;
	/* a new session without snapshot_reset(), another screen, or the age
	 * counter wrapped: written anew */
	if (s->laid_out && (n_cl < s->cur.clusters || p->sb_last_id < s->cur.sb_last_id ||
			    p->age_cnt < s->last_age))
		snapshot_reset(s);

	/* the ring holds what libtsm keeps: sb_size, or fewer lines where the
	 * terminal's bound cut them (term_sb_lines_fit()) */
	sb_cap = MIN(s->sb_size, p->sb_max);
	relayout = !s->laid_out || p->cols != s->cur.lay.cols || p->rows != s->cur.lay.rows ||
		   n_cl > s->cur.lay.cl_cap || sb_cap != s->cur.lay.sb_cap;
	full = relayout;
	if (relayout) {
		uint64_t off = REGION_BASE, need;
		unsigned cl_cap = CL_MIN;

		while (cl_cap < n_cl)
			cl_cap *= 2;
		cl_cap = MIN(cl_cap, CL_COUNT);
		if (!layout_compute(&lay, p->cols, p->rows, sb_cap, cl_cap, 0))
			return -E2BIG;
		if (s->laid_out && REGION_BASE + lay.region_size > s->cur.lay.region_off)
			off = ALIGN(s->cur.lay.region_off + s->cur.lay.region_size, PAGE);
		layout_compute(&lay, p->cols, p->rows, sb_cap, cl_cap, off);
		need = MAX(off + lay.region_size, (uint64_t)s->map_size);
		r = snapshot_resize_file(s, need, &lay);
		if (r < 0)
			return r;
		for (unsigned k = 0; k < 2; k++) {
			free(s->track[k]);
			s->track[k] = xcalloc(p->rows, sizeof(struct row_track));
		}
		free(s->crcs);
		s->crcs = xcalloc(2 * (size_t)p->rows, sizeof(uint32_t));
	} else
		lay = s->cur.lay;

	h = s->cur;
	h.lay = lay;
	read_screen_state(&h, p, stream);
	h.clusters = n_cl;

	/* the scrollback: libtsm holds the lines (L - C, L] */
	L = p->sb_last_id;
	C = MIN((uint64_t)p->sb_count, (uint64_t)lay.sb_cap);
	if (full) {
		tail = head = 0;
		h.sb_count = 0;
		first_new = L - C + 1;
	} else {
		tail = s->cur.sb_tail;
		head = s->cur.sb_head;
		first_new = MAX(L - C, s->cur.sb_last_id) + 1;
	}
	/* the committed lines libtsm no longer has go first */
	keep_from = L - C + 1;
	drop_to = h.sb_last_id - h.sb_count + 1; /* the oldest id counted */
	while (h.sb_count > 0 && drop_to < keep_from) {
		tail = ring_next(s, &lay, tail);
		h.sb_count--;
		drop_to++;
	}
	if (!full && max_new && L + 1 - first_new > max_new) {
		/* a flood: only the newest lines, the scrollback starts over
		 * from them (its ids follow each other) */
		first_new = L + 1 - max_new;
		h.sb_count = 0;
		partial = true;
	} else if (!full && !max_new && s->sb_partial &&
		   (h.sb_count ? drop_to : first_new) > keep_from) {
		/* after a flood: libtsm has older lines than the snapshot,
		 * all are written again */
		first_new = keep_from;
		h.sb_count = 0;
	} else
		partial = !full && s->sb_partial && max_new;
	if (h.sb_count == 0)
		tail = head;
	k_new = L + 1 - first_new;

	if (k_new > 0) {
		const struct tsmpeek_line *line = p->sb_last;
		uint64_t need = 0, pos = head, free_bytes;

		if (s->sb_lines_cap < k_new) {
			s->sb_lines_cap = k_new;
			s->sb_lines = xrealloc(s->sb_lines, k_new * sizeof(*s->sb_lines));
			s->sb_at = xrealloc(s->sb_at, (k_new + 1) * sizeof(*s->sb_at));
		}
		for (uint64_t i = k_new; i-- > 0; line = line->prev) {
			if (!line || line->sb_id != first_new + i)
				return -EIO; /* not what libtsm 4.0.2 does */
			s->sb_lines[i] = line;
		}
		/* encoded first (into sb_buf): the ring place needs the size */
		s->sb_at[0] = 0;
		for (uint64_t i = 0; i < k_new; i++) {
			const struct tsm_screen_attr *fill;
			unsigned w, n = sb_line_shape(s->sb_lines[i], lay.cols, &w, &fill);
			uint64_t size;

			if (s->sb_buf_cap < s->sb_at[i] + lay.max_rec) {
				s->sb_buf_cap = MAX(2 * s->sb_buf_cap, s->sb_at[i] + lay.max_rec);
				s->sb_buf = xrealloc(s->sb_buf, s->sb_buf_cap);
			}
			size = encode_sb_line(s->sb_buf + s->sb_at[i], s->sb_lines[i], lay.cols, n);
			s->sb_at[i + 1] = s->sb_at[i] + size;
			pos = ring_place(pos, size, lay.ring_cap, &used);
			need += used;
			pos += size;
		}
		/* the lines kept must stay clear of what is written; those the
		 * committed header counts too are dropped from it first */
		for (;;) {
			free_bytes =
			    h.sb_count ? ring_dist(head, tail, lay.ring_cap) : lay.ring_cap;
			if (need <= free_bytes || h.sb_count == 0)
				break;
			tail = ring_next(s, &lay, tail);
			h.sb_count--;
		}
		if (!full && s->cur.sb_count > 0 &&
		    need > ring_dist(head, s->cur.sb_tail, lay.ring_cap)) {
			struct hdr_state ph = s->cur;

			ph.sb_tail = tail;
			ph.sb_count = h.sb_count;
			if (ph.sb_count == 0)
				ph.sb_tail = ph.sb_head;
			s->gen++;
			commit_header(s, s->gen, &ph, 1);
			s->cur = ph;
		}
		for (uint64_t i = 0; i < k_new; i++) {
			uint64_t size = s->sb_at[i + 1] - s->sb_at[i];
			uint64_t at = ring_place(head, size, lay.ring_cap, &used);

			if (at != head && head + REC_HDR <= lay.ring_cap)
				write_marker(s->map + lay.ring_off + head);
			memcpy(s->map + lay.ring_off + at, s->sb_buf + s->sb_at[i], size);
			if (h.sb_count == 0)
				tail = at;
			h.sb_count++;
			head = at + size;
		}
		h.sb_last_id = L;
		changed = true;
	} else if (full)
		h.sb_last_id = L;
	h.sb_tail = tail;
	h.sb_head = head;
	gen = s->gen + 1;

	/* new stand-ins */
	if (n_cl > s->cur.clusters || relayout) {
		write_clusters(s, &lay, clusters, relayout ? 0 : s->cur.clusters, n_cl);
		changed = true;
	}

	/* the rows that changed since the last update */
	for (unsigned k = 0; k < 2; k++) {
		struct tsmpeek_line **lines = k ? p->alt_lines : p->main_lines;

		for (unsigned y = 0; y < lay.rows; y++) {
			struct row_track *t = &s->track[k][y];

			t->dirty = full || lines[y] != t->line ||
				   tsmpeek_line_newer(lines[y], lay.cols, s->last_age);
			t->new_crc = t->crc;
			if (!t->dirty)
				continue;
			t->new_crc =
			    write_row(s, &lay, k, y, relayout ? 0 : !t->slot, gen, lines[y]);
			changed = true;
		}
	}
	{
		uint32_t *crcs = s->crcs;

		for (unsigned k = 0; k < 2; k++)
			for (unsigned y = 0; y < lay.rows; y++)
				crcs[k * lay.rows + y] = s->track[k][y].new_crc;
		h.rows_crc = rows_digest(crcs, 2 * (size_t)lay.rows);
	}

	if (!changed && hdr_state_eq(&h, &s->cur)) {
		s->sb_partial = partial;
		return partial;
	}
	commit_header(s, gen, &h, 2);
	s->sb_partial = partial;

	if (relayout && s->laid_out) {
		/* the old region is no longer pointed to */
		const struct layout *o = &s->cur.lay;

		if (fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)o->region_off, (off_t)o->region_size) < 0)
			log_debug_errno(errno, "Cannot free the old snapshot region: %m");
		if (lay.region_off < o->region_off)
			(void)snapshot_resize_file(s, lay.region_off + lay.region_size, &lay);
	}
	for (unsigned k = 0; k < 2; k++) {
		struct tsmpeek_line **lines = k ? p->alt_lines : p->main_lines;

		for (unsigned y = 0; y < lay.rows; y++) {
			struct row_track *t = &s->track[k][y];

			if (!t->dirty)
				continue;
			t->slot = relayout ? 0 : !t->slot;
			t->line = lines[y];
			t->crc = t->new_crc;
			t->dirty = false;
		}
	}
	s->cur = h;
	s->gen = gen;
	s->laid_out = true;
	s->last_age = p->age_cnt;
	return partial;
}

int snapshot_update(struct snapshot *s, struct tsm_screen *screen, struct stream *stream,
		    const struct cluster_table *clusters)
{
	return update(s, screen, stream, clusters, 0);
}

int snapshot_update_flood(struct snapshot *s, struct tsm_screen *screen, struct stream *stream,
			  const struct cluster_table *clusters)
{
	const struct tsmpeek_screen *p;

	if (!tsmpeek_check(screen))
		return -EOPNOTSUPP;
	p = tsmpeek(screen);
	return update(s, screen, stream, clusters, MAX(p->rows, 1u));
}

/* ---- reading ------------------------------------------------------------ */

struct parsed_row {
	const uint8_t *cells; /* cols cells */
};

struct parsed_sb {
	const uint8_t *rec;
};

struct parsed {
	struct hdr_state h;
	uint64_t gen;
	struct parsed_row *rows[2];
	struct parsed_sb *sb;
	struct cluster_table *table;
};

static void parsed_free(struct parsed *ps)
{
	free(ps->rows[0]);
	free(ps->rows[1]);
	free(ps->sb);
	cluster_table_free(ps->table);
	*ps = (struct parsed){0};
}

/* A cell restore can make as it was (see restore_row()), or a stand-in the
 * snapshot's table lacks, which restore draws as U+FFFD (known_ch()). */
static bool cell_valid(const struct cell *c)
{
	int natural;

	if (c->ch > 0x10ffff || (c->ch >= 0xd800 && c->ch <= 0xdfff))
		return false;
	if (c->ch == 0)
		return c->width <= 1;
	natural = tsm_ucs4_get_width(c->ch);
	if (natural != 1 && natural != 2)
		return false;
	return c->width == 0 || c->width == (unsigned)natural;
}

static bool cells_valid(const uint8_t *p, unsigned n)
{
	struct cell c;

	for (unsigned x = 0; x < n; x++)
		if (!get_cell(p + (size_t)x * CELL_SIZE, &c) || !cell_valid(&c))
			return false;
	return true;
}

static bool parse_records(const uint8_t *hdr, size_t len, struct hdr_state *h, uint64_t size)
{
	unsigned seen = 0;
	size_t off = HDR_FIXED;
	const uint8_t *tabs = NULL;
	unsigned tabs_len = 0;
	uint32_t mouse = 0;
	const uint8_t *kitty = NULL;

	*h = (struct hdr_state){0};
	while (off < len) {
		unsigned tag, rlen;
		const uint8_t *p;

		if (len - off < 4)
			return false;
		tag = get_u16(hdr + off);
		rlen = get_u16(hdr + off + 2);
		p = hdr + off + 4;
		if (len - off - 4 < ALIGN(rlen, 4))
			return false;
		off += 4 + ALIGN(rlen, 4);
		if (tag == 0 || tag > TAG_MAX_KNOWN)
			continue;
		if (seen & (1u << tag))
			return false;
		seen |= 1u << tag;
		switch (tag) {
		case TAG_GRID:
			if (rlen != 24 ||
			    !layout_compute(&h->lay, get_u32(p), get_u32(p + 4), get_u32(p + 8),
					    get_u32(p + 12), get_u64(p + 16)))
				return false;
			if (h->lay.region_off < REGION_BASE || h->lay.region_off % PAGE ||
			    h->lay.region_off > size ||
			    h->lay.region_size > size - h->lay.region_off)
				return false;
			break;
		case TAG_CURSOR:
			if (rlen != 8)
				return false;
			h->cursor_x = get_u32(p);
			h->cursor_y = get_u32(p + 4);
			break;
		case TAG_SCREEN: {
			struct cell c;

			if (rlen != 24 || !get_cell(p + 12, &c) || c.ch || c.width)
				return false;
			h->flags = get_u32(p);
			h->margin_top = get_u32(p + 4);
			h->margin_bottom = get_u32(p + 8);
			h->def_attr = c.attr;
			break;
		}
		case TAG_TABS:
			tabs = p; /* checked below, with the grid */
			tabs_len = rlen;
			break;
		case TAG_STREAM:
			if (rlen != STREAM_REC_SIZE || !get_stream(p, &h->stream))
				return false;
			for (unsigned i = 96; i < STREAM_REC_SIZE; i++)
				if (p[i])
					return false;
			break;
		case TAG_CLUSTERS:
			if (rlen != 4)
				return false;
			h->clusters = get_u32(p);
			break;
		case TAG_ROWS:
			if (rlen != 8 || get_u32(p + 4) != 0)
				return false;
			h->rows_crc = get_u32(p);
			break;
		case TAG_MOUSE:
			/* checked with the rest of the stream state
			 * (stream_set_state()) */
			if (rlen != 8 || get_u32(p + 4) != 0)
				return false;
			mouse = get_u32(p);
			break;
		case TAG_KITTY:
			/* the flags are checked with the rest of the stream
			 * state (stream_set_state()) */
			if (rlen != KITTY_REC_SIZE || p[2] || p[3])
				return false;
			kitty = p;
			break;
		case TAG_SB:
			if (rlen != 32 || get_u32(p + 20) != 0)
				return false;
			h->sb_tail = get_u64(p);
			h->sb_count = get_u32(p + 16);
			h->sb_last_id = get_u64(p + 24);
			break;
		}
	}
	if ((seen & TAGS_REQUIRED) != TAGS_REQUIRED)
		return false;
	/* TAG_STREAM's get_stream() cleared it */
	h->stream.mouse = mouse;
	if (kitty) {
		h->stream.kitty_n[0] = kitty[0];
		h->stream.kitty_n[1] = kitty[1];
		memcpy(h->stream.kitty, kitty + 4, sizeof(h->stream.kitty));
	}
	/* with the grid known */
	if (tabs_len != (h->lay.cols + 7) / 8)
		return false;
	memcpy(h->tabs, tabs, tabs_len);
	for (unsigned x = h->lay.cols; x < ALIGN(h->lay.cols, 8); x++)
		if (h->tabs[x / 8] & (1u << (x % 8)))
			return false;
	if (h->cursor_y >= h->lay.rows || h->cursor_x > h->lay.cols + 1)
		return false;
	if (h->flags & ~0x7fu)
		return false;
	if (!(h->margin_top == 0 && h->margin_bottom == h->lay.rows - 1) &&
	    !(h->margin_top < h->margin_bottom && h->margin_bottom < h->lay.rows))
		return false;
	if (h->clusters > h->lay.cl_cap || h->sb_count > h->lay.sb_cap ||
	    h->sb_tail > h->lay.ring_cap || (h->sb_count > 0 && h->sb_last_id < h->sb_count))
		return false;
	return true;
}

static bool parse_clusters(const uint8_t *buf, uint64_t size, struct parsed *ps)
{
	uint32_t n = ps->h.clusters;

	ps->table = cluster_table_new();
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *p = buf + ps->h.lay.cl_off + (uint64_t)i * CL_ENTRY;
		uint32_t ch[CLUSTER_MAX_LEN];
		unsigned len = p[4];

		if (get_u32(p) != (uint32_t)crc32(0, p + 4, CL_ENTRY - 4) || len < 1 ||
		    len > CLUSTER_MAX_LEN || get_u16(p + 6) != 0)
			return false;
		for (unsigned k = 0; k < CLUSTER_MAX_LEN; k++) {
			uint32_t v = get_u32(p + 8 + 4 * k);

			if (k >= len ? v != 0 : v > 0x10ffff)
				return false;
			ch[k] = v;
		}
		if (cluster_table_restore(ps->table, CLUSTER_FIRST + i, ch, len, p[5]) < 0)
			return false;
	}
	return true;
}

static bool parse_rows(const uint8_t *buf, struct parsed *ps)
{
	const struct layout *l = &ps->h.lay;
	uint32_t *crcs = xcalloc(2 * (size_t)l->rows, sizeof(uint32_t));
	bool ok;

	for (unsigned k = 0; k < 2; k++) {
		ps->rows[k] = xcalloc(l->rows, sizeof(struct parsed_row));
		for (unsigned y = 0; y < l->rows; y++) {
			const uint8_t *best = NULL;
			uint64_t best_gen = 0;

			for (unsigned slot = 0; slot < 2; slot++) {
				const uint8_t *p = buf + slot_off(l, k, y, slot);
				uint64_t g = get_u64(p);

				if (g == 0 || g > ps->gen || (best && g <= best_gen) ||
				    get_u32(p + 12) != 0 ||
				    get_u32(p + 8) != crc_skip(p, l->slot_size, 8))
					continue;
				best = p;
				best_gen = g;
			}
			if (!best || !cells_valid(best + ROW_HDR, l->cols)) {
				free(crcs);
				return false;
			}
			ps->rows[k][y].cells = best + ROW_HDR;
			crcs[k * l->rows + y] = get_u32(best + 8);
		}
	}
	ok = rows_digest(crcs, 2 * (size_t)l->rows) == ps->h.rows_crc;
	free(crcs);
	return ok;
}

/* Decodes and checks a scrollback record (its header's sizes already
 * checked against the ring): its n stored cells into cells (cols of them),
 * the rest from the fill up to the width and the default attribute after. */
static bool decode_sb_line(const uint8_t *p, unsigned cols, const struct tsm_screen_attr *def_attr,
			   struct cell *cells)
{
	unsigned n = get_u16(p + 8), w = get_u16(p + 10), runs = get_u16(p + 16);
	unsigned text = get_u16(p + 18), x = 0, t = 0;
	const uint8_t *r = p + REC_HDR, *tp = r + (size_t)runs * CELL_SIZE;
	uint64_t size = rec_size(runs, text);
	struct cell fill, run;

	if (!get_cell(p + 20, &fill) || fill.ch != 0 || fill.width != 1)
		return false;
	for (unsigned k = 0; k < runs; k++) {
		if (!get_cell(r + (size_t)k * CELL_SIZE, &run) || run.width != 0 || run.ch < 1 ||
		    run.ch > n - x)
			return false;
		for (unsigned e = x + run.ch; x < e; x++) {
			uint32_t v = 0;
			unsigned shift = 0;

			for (;;) {
				if (t >= text || shift > 21)
					return false;
				v |= (uint32_t)(tp[t] & 0x7f) << shift;
				shift += 7;
				if (!(tp[t++] & 0x80))
					break;
			}
			cells[x].attr = run.attr;
			if (v >= 0x110000) {
				cells[x].ch = v - 0x110000;
				cells[x].width = 0;
			} else {
				int natural = v ? tsm_ucs4_get_width(v) : 1;

				cells[x].ch = v;
				cells[x].width =
				    natural == 1 || natural == 2 ? (unsigned)natural : 3;
			}
			if (cells[x].ch > 0x10ffff || !cell_valid(&cells[x]))
				return false;
		}
	}
	if (x != n || t != text)
		return false;
	for (uint64_t b = REC_HDR + (uint64_t)runs * CELL_SIZE + text; b < size; b++)
		if (p[b])
			return false;
	for (; x < cols; x++)
		cells[x] = x < w ? fill : (struct cell){.width = 1, .attr = *def_attr};
	return true;
}

static bool parse_sb(const uint8_t *buf, struct parsed *ps)
{
	const struct layout *l = &ps->h.lay;
	const uint8_t *ring = buf + l->ring_off;
	uint64_t off = ps->h.sb_tail, id = ps->h.sb_last_id - ps->h.sb_count + 1;
	struct cell *cells = xcalloc(l->cols, sizeof(struct cell));
	bool ok = false;

	ps->sb = xcalloc(ps->h.sb_count ? ps->h.sb_count : 1, sizeof(struct parsed_sb));
	for (uint32_t i = 0; i < ps->h.sb_count; i++, id++) {
		const uint8_t *p;
		unsigned n, w, runs, text;
		uint64_t size;

		for (unsigned tries = 0;; tries++) {
			if (off + REC_HDR > l->ring_cap)
				off = 0;
			p = ring + off;
			if (get_u64(p) != 0)
				break;
			/* a marker: checked, then the line is at 0 */
			if (tries > 0 || off == 0 || get_u32(p + 8) != 0 ||
			    get_u32(p + 12) != crc_skip(p, REC_HDR, 12))
				goto out;
			for (unsigned b = 16; b < REC_HDR; b++)
				if (p[b])
					goto out;
			off = 0;
		}
		n = get_u16(p + 8);
		w = get_u16(p + 10);
		runs = get_u16(p + 16);
		text = get_u16(p + 18);
		size = rec_size(runs, text);
		if (get_u64(p) != id || w < 1 || w > l->cols || n > w || runs > n || text > 4 * n ||
		    off + size > l->ring_cap || get_u32(p + 12) != crc_skip(p, size, 12) ||
		    !decode_sb_line(p, l->cols, &ps->h.def_attr, cells))
			goto out;
		ps->sb[i].rec = p;
		off += size;
	}
	ok = true;
out:
	free(cells);
	return ok;
}

static void scratch_write(struct tsm_vte *vte, const char *u8, size_t len, void *data)
{
	(void)vte;
	(void)u8;
	(void)len;
	(void)data;
}

static void scratch_reply(const char *bytes, size_t len, void *data)
{
	(void)bytes;
	(void)len;
	(void)data;
}

static bool parse_stream_state(const struct parsed *ps)
{
	struct tsm_screen *screen;
	struct tsm_vte *vte;
	struct cluster_table *t;
	struct stream *st;
	int r = -EINVAL;

	/* stream_set_state() checks its values: tried on a scratch terminal */
	if (tsm_screen_new(&screen, NULL, NULL) < 0)
		return false;
	if (tsm_screen_resize(screen, ps->h.lay.cols, ps->h.lay.rows) == 0 &&
	    tsm_vte_new(&vte, screen, scratch_write, NULL, NULL, NULL) == 0) {
		t = cluster_table_new();
		st = stream_new(&(struct stream_config){
		    .vte = vte, .screen = screen, .table = t, .reply = scratch_reply});
		r = stream_set_state(st, &ps->h.stream);
		stream_free(st);
		cluster_table_free(t);
		tsm_vte_unref(vte);
	}
	tsm_screen_unref(screen);
	return r == 0;
}

/* Everything the header at `hdr` points to, checked; 0 or -EBADMSG. */
static int parse_all(const uint8_t *buf, uint64_t size, const uint8_t *hdr, struct parsed *ps)
{
	const char *what;

	*ps = (struct parsed){0};
	ps->gen = get_u64(hdr + 16);
	if (!parse_records(hdr, get_u32(hdr + 12), &ps->h, size))
		what = "header records";
	else if (!parse_clusters(buf, size, ps))
		what = "stand-ins";
	else if (!parse_rows(buf, ps))
		what = "rows";
	else if (!parse_sb(buf, ps))
		what = "scrollback";
	else if (!parse_stream_state(ps))
		what = "stream state";
	else
		return 0;
	log_debug("Snapshot generation %" PRIu64 ": bad %s", ps->gen, what);
	parsed_free(ps);
	return -EBADMSG;
}

/* ---- restoring ------------------------------------------------------------ */

#define HELPER_WIDE 0x4e00u /* any wide character */

struct rebuild {
	struct tsm_screen *screen;
	unsigned y, cols;
	struct tsm_screen_attr def_attr; /* what erasing gets between cells */
	uint32_t n_clusters;		 /* the stand-ins the table has */
};

/* A stand-in the snapshot's table does not have (a snapshot written by a
 * consoled that kept such cells after its table was reset) means nothing
 * that can be shown: that cell becomes U+FFFD, narrow like every stand-in,
 * and the session is kept. */
static uint32_t known_ch(uint32_t ch, uint32_t n_clusters)
{
	if (ch >= CLUSTER_FIRST && ch <= CLUSTER_LAST && ch - CLUSTER_FIRST >= n_clusters)
		return 0xfffd;
	return ch;
}

/* The cell's character and attributes at x, at the character's own width
 * (code point 0: erased with the attribute). */
static void put_content(struct rebuild *b, unsigned x, const struct cell *c)
{
	tsm_screen_move_to(b->screen, x, b->y);
	if (c->ch == 0) {
		tsm_screen_set_def_attr(b->screen, &c->attr);
		tsm_screen_erase_chars(b->screen, 1);
		tsm_screen_set_def_attr(b->screen, &b->def_attr);
	} else
		tsm_screen_write(b->screen, known_ch(c->ch, b->n_clusters), &c->attr);
}

/* Makes x (>= 1) a cell of width 0 keeping what it holds: a wide character
 * is written just before it, then the cell before is made again. */
static void make_zero(struct rebuild *b, unsigned x, const struct cell *c)
{
	if (c[x - 1].width != 2) {
		tsm_screen_move_to(b->screen, x - 1, b->y);
		tsm_screen_write(b->screen, HELPER_WIDE, &c[x - 1].attr);
	}
	put_content(b, x - 1, &c[x - 1]);
}

/* A row exactly as it was, cell by cell: character, width and attributes,
 * also the cells of width 0 that no wide character precedes any more (what
 * libtsm leaves after a wide character is overwritten, or moved by ICH and
 * DCH): libtsm makes a cell width 0 only behind a wide character it writes,
 * and keeps what the cell held. Flags must be 0 (no insert mode, absolute
 * cursor, no wrap). */
static void restore_row(struct rebuild *b, const struct cell *c)
{
	unsigned cols = b->cols;

	for (unsigned x = 0; x < cols; x++)
		put_content(b, x, &c[x]);
	for (unsigned x = cols; x-- > 1;)
		if (c[x].width == 0)
			make_zero(b, x, c);
	if (c[0].width == 0 && cols > 1) {
		/* shifted right by one, made width 0 at 1, shifted back */
		tsm_screen_move_to(b->screen, 0, b->y);
		tsm_screen_insert_chars(b->screen, 1);
		tsm_screen_move_to(b->screen, 0, b->y);
		tsm_screen_write(b->screen, HELPER_WIDE, &c[0].attr);
		tsm_screen_move_to(b->screen, 0, b->y);
		tsm_screen_delete_chars(b->screen, 1);
		/* the last cell went, and came back blank */
		put_content(b, cols - 1, &c[cols - 1]);
		for (unsigned x = cols - 1; x > 1 && c[x].width == 0; x--)
			make_zero(b, x, c);
	}
}

static void decode_cells(const uint8_t *p, unsigned n, struct cell *out)
{
	for (unsigned x = 0; x < n; x++)
		(void)get_cell(p + (size_t)x * CELL_SIZE, &out[x]);
}

/* The cell at (x, y) of the screen the flags show. */
static bool decode_at(const struct parsed *ps, unsigned y, unsigned x, struct cell *ret)
{
	const struct parsed_row *row = &ps->rows[(ps->h.flags & TSM_SCREEN_ALTERNATE) != 0][y];

	decode_cells(row->cells + (size_t)x * CELL_SIZE, 1, ret);
	return true;
}

/* The cursor, on the screen the flags show; a pending wrap (x at the width,
 * or one more after a wide character in the last column) by writing the
 * last cell again, or, if it is blank, a character of the width wanted that
 * is then erased (erasing leaves the cursor where it is). */
static void put_cursor(const struct parsed *ps, struct tsm_screen *screen)
{
	const struct hdr_state *h = &ps->h;
	unsigned cols = h->lay.cols, x = cols - 1, keep;
	struct cell last, before;

	keep = h->flags & (TSM_SCREEN_REL_ORIGIN | TSM_SCREEN_INSERT_MODE);
	if (keep)
		tsm_screen_reset_flags(screen, keep);
	if (h->cursor_x < cols)
		tsm_screen_move_to(screen, h->cursor_x, h->cursor_y);
	else {
		decode_at(ps, h->cursor_y, x, &last);
		tsm_screen_move_to(screen, x, h->cursor_y);
		if (h->cursor_x == cols && last.width == 0 && cols >= 2 &&
		    decode_at(ps, h->cursor_y, x - 1, &before) && before.width == 2) {
			/* the second half of a wide character */
			tsm_screen_move_to(screen, x - 1, h->cursor_y);
			tsm_screen_write(screen, before.ch, &before.attr);
		} else if (last.ch != 0 && last.width == h->cursor_x - x)
			tsm_screen_write(screen, known_ch(last.ch, h->clusters), &last.attr);
		else {
			tsm_screen_write(screen, h->cursor_x - x == 2 ? HELPER_WIDE : ' ',
					 &last.attr);
			tsm_screen_set_def_attr(screen, &last.attr);
			tsm_screen_erase_chars(screen, 1);
			tsm_screen_set_def_attr(screen, &h->def_attr);
			if (last.ch != 0) /* libtsm makes no such state */
				log_debug("pending wrap after %x of width %u", last.ch, last.width);
		}
	}
	if (keep)
		tsm_screen_set_flags(screen, keep);
}

/* The rebuild through libtsm's public API: scrollback (pushed from row 0),
 * main screen, alternate screen, tab stops, margins, cursor, flags, then the
 * vte through the stream stage. */
static int apply(struct parsed *ps, struct tsm_screen *screen, struct tsm_vte *vte,
		 struct stream *stream, struct cluster_table *clusters)
{
	const struct hdr_state *h = &ps->h;
	unsigned cols = h->lay.cols, rows = h->lay.rows;
	struct cell *cells = xcalloc(cols, sizeof(struct cell));
	struct rebuild b = {
	    .screen = screen, .cols = cols, .def_attr = h->def_attr, .n_clusters = h->clusters};
	int r;

	tsm_vte_hard_reset(vte);
	stream_reset(stream);
	tsm_screen_reset_flags(screen, tsm_screen_get_flags(screen));
	tsm_screen_sb_reset(screen);
	r = tsm_screen_resize(screen, cols, rows);
	if (r < 0) {
		free(cells);
		return r;
	}
	tsm_screen_clear_sb(screen); /* also what a smaller height pushed */
	tsm_screen_set_margins(screen, 0, 0);
	tsm_screen_set_def_attr(screen, &h->def_attr);
	tsm_screen_erase_screen(screen, false);

	cluster_table_reset(clusters);
	for (uint32_t i = 0; i < h->clusters; i++) {
		unsigned flags = 0;
		size_t len = 0;
		const uint32_t *ch = cluster_lookup(ps->table, CLUSTER_FIRST + i, &len, &flags);

		(void)cluster_table_restore(clusters, CLUSTER_FIRST + i, ch, len, flags);
	}

	b.y = 0;
	for (uint32_t i = 0; i < h->sb_count; i++) {
		(void)decode_sb_line(ps->sb[i].rec, cols, &h->def_attr, cells);
		restore_row(&b, cells);
		tsm_screen_scroll_up(screen, 1);
	}
	for (unsigned k = 0; k < 2; k++) {
		if (k == 1)
			tsm_screen_set_flags(screen, TSM_SCREEN_ALTERNATE);
		for (unsigned y = 0; y < rows; y++) {
			b.y = y;
			decode_cells(ps->rows[k][y].cells, cols, cells);
			restore_row(&b, cells);
		}
	}
	tsm_screen_reset_flags(screen, TSM_SCREEN_ALTERNATE);

	tsm_screen_reset_all_tabstops(screen);
	for (unsigned x = 0; x < cols; x++)
		if (h->tabs[x / 8] & (1u << (x % 8))) {
			tsm_screen_move_to(screen, x, 0);
			tsm_screen_set_tabstop(screen);
		}
	if (h->margin_top == 0 && h->margin_bottom == rows - 1)
		tsm_screen_set_margins(screen, 0, 0);
	else
		tsm_screen_set_margins(screen, h->margin_top + 1, h->margin_bottom + 1);

	tsm_screen_set_def_attr(screen, &h->def_attr);
	tsm_screen_set_flags(screen, h->flags);
	put_cursor(ps, screen);
	free(cells);

	r = stream_set_state(stream, &h->stream);
	/* it puts the cursor back, a pending wrap as best it can (a character
	 * it writes again may not be the cell that was there): made exact */
	put_cursor(ps, screen);
	tsm_screen_set_def_attr(screen, &h->def_attr);
	return r;
}

int snapshot_restore(int fd, struct tsm_screen *screen, struct tsm_vte *vte, struct stream *stream,
		     struct cluster_table *clusters, unsigned *ret_cols, unsigned *ret_rows)
{
	const uint8_t *cand[2];
	unsigned n_cand = 0;
	bool foreign = false;
	struct parsed ps;
	struct stat st;
	uint8_t *buf;
	uint64_t size;
	int r = -EBADMSG;

	if (fstat(fd, &st) < 0)
		return -errno;
	size = (uint64_t)st.st_size;
	if (size < 2 * HDR_SLOT)
		return -EBADMSG;
	/* more than a 32-bit process can map (mmap() would map the size
	 * modulo 4 GiB and the checks below would trust the rest) */
	if (size > SIZE_MAX)
		return -EFBIG;
	buf = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (buf == MAP_FAILED)
		return -errno;

	for (unsigned i = 0; i < 2; i++) {
		const uint8_t *hdr = buf + i * HDR_SLOT;
		uint32_t len = get_u32(hdr + 12);

		if (memcmp(hdr, SNAP_MAGIC, 8) != 0)
			continue;
		if (get_u32(hdr + 8) != SNAP_VERSION) {
			foreign = true;
			continue;
		}
		if (len < HDR_FIXED || len > HDR_SLOT || get_u32(hdr + 28) != 0 ||
		    get_u32(hdr + 24) != crc_skip(hdr, len, 24) || get_u64(hdr + 16) == 0)
			continue;
		cand[n_cand++] = hdr;
	}
	if (n_cand == 2 && get_u64(cand[1] + 16) > get_u64(cand[0] + 16)) {
		const uint8_t *t = cand[0];

		cand[0] = cand[1];
		cand[1] = t;
	}
	if (n_cand == 0 && foreign)
		r = -EPROTONOSUPPORT;
	for (unsigned i = 0; i < n_cand; i++) {
		r = parse_all(buf, size, cand[i], &ps);
		if (r == 0)
			break;
	}
	if (r == 0) {
		r = apply(&ps, screen, vte, stream, clusters);
		if (r == 0) {
			if (ret_cols)
				*ret_cols = ps.h.lay.cols;
			if (ret_rows)
				*ret_rows = ps.h.lay.rows;
		}
		parsed_free(&ps);
	}
	munmap(buf, size);
	return r;
}

bool snapshot_supported(struct tsm_screen *screen)
{
	return tsmpeek_check(screen);
}
