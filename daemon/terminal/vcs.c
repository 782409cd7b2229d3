/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "vcs"
#include <errno.h>
#include <fcntl.h>
#include <libtsm.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cluster.h"
#include "image.h"
#include "tsmpeek.h"
#include "vcs.h"
#include "../util/log.h"
#include "../util/util.h"

#define VCS_INTERVAL_USEC ((uint64_t)VCS_INTERVAL_MS * USEC_PER_MSEC)
#define VCS_FLOOD_INTERVAL_USEC ((uint64_t)VCS_FLOOD_INTERVAL_MS * USEC_PER_MSEC)
#define VCS_QUIET_USEC ((uint64_t)VCS_QUIET_MS * USEC_PER_MSEC)

/* UTF-8 on (ESC % G), default attributes and display-control off (SGR 0,
 * 10), insert mode off (IRM), origin mode off (DECOM: CUP counts from the
 * top of the screen, not of a scroll region), autowrap off (DECAWM: a
 * character in the last column never moves on to the next row). */
static const char vcs_preamble[] = "\033%G\033[0;10m\033[4l\033[?6l\033[?7l";
static const char vcs_clear_seq[] = VCS_CLEAR_SEQ;

struct vcs {
	int fd;
	unsigned vt;
	bool active;
	bool dirty; /* changed since the last complete mirror */
	/* cleared at a session's end and nothing new since: the screen still
	 * held (until the next session starts) is not mirrored again */
	bool cleared;
	uint64_t last_usec;
	sd_event_source *timer;
	vcs_source_fn source;
	void *userdata;
	vcs_row_fn row; /* rows over the screen's; NULL: none */
	void *row_data;
	struct vcs_buf buf;
	/* the mirror the VT holds, for a VT of prev_cols x prev_rows (no rows:
	 * unknown, the next one is whole), and the changes written after it */
	struct vcs_buf prev, changes;
	unsigned prev_cols, prev_rows;
	struct vcs_stats stats;
};

/* ---- encoding ---- */

static void vcs_buf_reserve(struct vcs_buf *b, size_t more)
{
	if (b->len + more <= b->cap)
		return;
	b->cap = MAX(b->cap * 2, b->len + more + 4096);
	b->data = xrealloc(b->data, b->cap);
}

static void vcs_buf_add(struct vcs_buf *b, const char *s, size_t len)
{
	vcs_buf_reserve(b, len);
	memcpy(b->data + b->len, s, len);
	b->len += len;
}

static void vcs_buf_printf(struct vcs_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void vcs_buf_printf(struct vcs_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	vcs_buf_reserve(b, 64);
	va_start(ap, fmt);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += MIN((size_t)n, b->cap - b->len - 1);
}

void vcs_buf_fini(struct vcs_buf *b)
{
	free(b->data);
	free(b->rows);
	free(b->cells);
	free(b->grid);
	*b = (struct vcs_buf){};
}

uint32_t vcs_safe_cp(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp > 0x10ffff || cp == 0xfffe || cp == 0xffff || (cp >= 0x200b && cp <= 0x200f) ||
	    cp == 0xfeff)
		return '?';
	return cp;
}

static void vcs_buf_utf8(struct vcs_buf *b, uint32_t cp)
{
	char u[4];

	vcs_buf_add(b, u, utf8_put(cp, u));
}

struct vcs_grid {
	unsigned cols, rows;
	struct vcs_cell *cells;
	const struct cluster_table *clusters;
};

/* The cell at (x, y) holds cp (a blank: ' ') at width w. */
static void vcs_grid_put(struct vcs_grid *g, unsigned x, unsigned y, uint32_t cp, unsigned w)
{
	/* a stand-in: its cluster's base (the kernel has no combining) */
	if (cp >= CLUSTER_FIRST && g->clusters) {
		size_t n = 0;
		const uint32_t *cl = cluster_lookup(g->clusters, cp, &n, NULL);

		if (cl && n > 0)
			cp = cl[0];
	}
	/* an image's tile: a blank (nothing a braille display could show) */
	if (image_is_tile(cp))
		cp = ' ';
	g->cells[(size_t)y * g->cols + x] = (struct vcs_cell){cp, MIN(w, 2u)};
}

static int vcs_grid_cell(struct tsm_screen *con, uint64_t id, const uint32_t *ch, size_t len,
			 unsigned width, unsigned posx, unsigned posy,
			 const struct tsm_screen_attr *attr, tsm_age_t age, void *data)
{
	struct vcs_grid *g = data;

	(void)con;
	(void)id;
	(void)attr;
	(void)age;
	if (posx < g->cols && posy < g->rows)
		vcs_grid_put(g, posx, posy, len > 0 ? ch[0] : ' ', width);
	return 0;
}

bool vcs_test_draw_only;

/* The grid as tsm_screen_draw() shows it (libtsm 4.0.2's tsm-render.c: the
 * view's lines from the scrollback position on, then the screen's; past a
 * line's cells an empty one; no code point for an empty cell), read from
 * libtsm's lines (tsmpeek.h) instead of a callback per cell, into
 * out->grid. A row libtsm has not changed since prev's grid was read (its
 * line, its cells and the screen as a whole no older than that read: the
 * ages the renderer's peek reads too, render.c) is copied from prev's grid.
 * An echo's mirror at 80x30 on the host (`floor --pause`, README.md of
 * tests/bench, with the key's own feed): 579 thousand instructions through
 * tsm_screen_draw() with every row encoded, 100 thousand with the grid
 * read so and the rows' bytes taken from the last mirror
 * (vcs_encode_after()), 35 thousand with the grid's unchanged rows taken
 * from the last grid too. False when the view is not readable so
 * (tsmpeek's layout check failed, or a cell holds a symbol sequence, which
 * libtsm 4 never makes): then tsm_screen_draw(). */
static bool vcs_grid_peek(struct tsm_screen *screen, struct vcs_grid *g, const struct vcs_buf *prev,
			  struct vcs_buf *out)
{
	const struct tsmpeek_screen *p;
	const struct tsmpeek_line *iter;
	unsigned k = 0;
	bool keep;

	if (vcs_test_draw_only || !tsmpeek_check(screen))
		return false;
	p = tsmpeek(screen);
	if (p->cols != g->cols || p->rows != g->rows)
		return false;
	/* prev's grid: the screen's own rows (no view into the scrollback),
	 * of this screen and line array, and nothing changed all of it */
	keep = prev && prev->grid_age && prev->grid_screen == screen &&
	       prev->grid_lines == p->lines && prev->grid_clusters == g->clusters &&
	       prev->grid_cols == g->cols && prev->grid_rows == g->rows && !p->sb_pos &&
	       !p->age_reset && p->age_cnt >= prev->grid_age && p->age <= prev->grid_age;
	iter = p->sb_pos;
	for (unsigned y = 0; y < g->rows; y++) {
		const struct tsmpeek_line *line;
		struct vcs_cell *row = g->cells + (size_t)y * g->cols;
		unsigned n;

		if (iter) {
			line = iter;
			iter = iter->next;
		} else
			line = p->lines[k++];
		n = MIN(line->size, g->cols);
		if (keep && !tsmpeek_line_newer(line, n, prev->grid_age)) {
			memcpy(row, prev->grid + (size_t)y * g->cols, g->cols * sizeof(*row));
			continue;
		}
		for (unsigned x = 0; x < n; x++) {
			const struct tsmpeek_cell *c = &line->cells[x];

			if (c->ch > 0x10ffff)
				return false;
			/* below the image tiles and the stand-ins: as it is */
			if (c->ch < IMAGE_FIRST && c->ch < CLUSTER_FIRST)
				row[x] = (struct vcs_cell){c->ch ? c->ch : ' ', MIN(c->width, 2u)};
			else
				vcs_grid_put(g, x, y, c->ch, c->width);
		}
		/* past the line's cells: blanks, as the grid starts */
		for (unsigned x = n; x < g->cols; x++)
			row[x] = (struct vcs_cell){' ', 1};
	}
	/* a view into the scrollback: not kept (its lines are not aged as
	 * the screen's) */
	if (!p->sb_pos && !p->age_reset) {
		out->grid_age = p->age_cnt;
		out->grid_screen = screen;
		out->grid_lines = p->lines;
		out->grid_clusters = g->clusters;
	}
	return true;
}

/* The rows drawn over the screen, in place of its own; whether there were
 * any. */
static bool vcs_grid_rows(struct vcs_grid *g, vcs_row_fn fn, void *data)
{
	uint32_t *cps = xcalloc(g->cols, sizeof(*cps));
	bool any = false;

	for (unsigned y = 0; y < g->rows; y++) {
		struct vcs_cell *row = g->cells + (size_t)y * g->cols;

		if (!fn(data, y, g->cols, cps))
			continue;
		any = true;
		for (unsigned x = 0; x < g->cols; x++) {
			bool wide = cps[x] && x + 1 < g->cols && cps[x + 1] == 0;

			row[x] = (struct vcs_cell){cps[x] ? cps[x] : ' ',
						   cps[x] ? (wide ? 2u : 1u) : 0u};
		}
	}
	free(cps);
	return any;
}

void vcs_encode(const struct vcs_source *src, unsigned vt_cols, unsigned vt_rows,
		struct vcs_buf *out)
{
	vcs_encode_after(src, NULL, NULL, vt_cols, vt_rows, NULL, out);
}

void vcs_encode_rows(const struct vcs_source *src, vcs_row_fn row_fn, void *row_data,
		     unsigned vt_cols, unsigned vt_rows, struct vcs_buf *out)
{
	vcs_encode_after(src, row_fn, row_data, vt_cols, vt_rows, NULL, out);
}

/* Row y of the window, its cells cols from row (its CUP, erase and text). */
static void vcs_encode_row(struct vcs_buf *out, const struct vcs_cell *row, unsigned y,
			   unsigned cols)
{
	bool realign = false;
	unsigned end = cols;

	/* the whole row erased first: a character the kernel counts narrower
	 * than libtsm leaves no stale cell behind it */
	vcs_buf_printf(out, "\033[%u;1H\033[2K", y + 1);
	/* trailing blanks: the erase made them */
	while (end > 0 && row[end - 1].cp == ' ' && row[end - 1].width == 1)
		end--;
	for (unsigned x = 0; x < end; x++) {
		const struct vcs_cell *c = &row[x];
		uint32_t cp = vcs_safe_cp(c->cp);

		if (c->width == 0 && x > 0)
			continue; /* the wide character before covers it */
		if (realign)
			vcs_buf_printf(out, "\033[%uG", x + 1);
		/* the right half of a wide character at the window's edge, or
		 * its left half cut off by it */
		if ((c->width == 0) || (c->width == 2 && x + 1 >= cols))
			cp = ' ';
		vcs_buf_utf8(out, cp);
		realign = cp >= 0x300;
	}
}

void vcs_encode_after(const struct vcs_source *src, vcs_row_fn row_fn, void *row_data,
		      unsigned vt_cols, unsigned vt_rows, const struct vcs_buf *prev,
		      struct vcs_buf *out)
{
	struct tsm_screen *screen = src->screen;
	struct vcs_grid g = {
	    .cols = tsm_screen_get_width(screen),
	    .rows = tsm_screen_get_height(screen),
	    .clusters = src->clusters,
	};
	unsigned cx = tsm_screen_get_cursor_x(screen), cy = tsm_screen_get_cursor_y(screen);
	unsigned top = 0, left = 0, rows, cols;
	bool hidden = tsm_screen_get_flags(screen) & TSM_SCREEN_HIDE_CURSOR;

	out->len = 0;
	out->n_rows = 0;
	out->grid_age = 0;
	if (g.cols == 0 || g.rows == 0 || vt_cols == 0 || vt_rows == 0)
		return;
	if (out->grid_cap < (size_t)g.cols * g.rows) {
		free(out->grid);
		out->grid = xcalloc((size_t)g.cols * g.rows, sizeof(*out->grid));
		out->grid_cap = (size_t)g.cols * g.rows;
	}
	g.cells = out->grid;
	out->grid_cols = g.cols;
	out->grid_rows = g.rows;
	if (!vcs_grid_peek(screen, &g, prev, out)) {
		for (size_t i = 0; i < (size_t)g.cols * g.rows; i++)
			g.cells[i] = (struct vcs_cell){' ', 1};
		tsm_screen_draw(screen, vcs_grid_cell, &g);
	}
	/* the grid with rows drawn over it is not libtsm's: not kept */
	if (row_fn && vcs_grid_rows(&g, row_fn, row_data))
		out->grid_age = 0;

	/* after a character in the last column, libtsm's cursor waits beyond it */
	cx = MIN(cx, g.cols - 1);
	cy = MIN(cy, g.rows - 1);
	/* a grid larger than the VT: the window that holds the cursor */
	if (cy >= vt_rows)
		top = cy - vt_rows + 1;
	if (cx >= vt_cols)
		left = cx - vt_cols + 1;
	rows = MIN(g.rows - top, vt_rows);
	cols = MIN(g.cols - left, vt_cols);
	if (out->rows_cap < rows + 1) {
		out->rows = xrealloc(out->rows, (rows + 1) * sizeof(*out->rows));
		out->rows_cap = rows + 1;
	}
	if (out->cells_cap < (size_t)rows * cols) {
		free(out->cells);
		out->cells = xcalloc((size_t)rows * cols, sizeof(*out->cells));
		out->cells_cap = (size_t)rows * cols;
	}
	/* prev's rows of the same width: those whose cells are the same give
	 * the same bytes (a row's bytes follow from its cells, its number and
	 * the width alone) */
	if (prev && (prev->cols != cols || !prev->cells))
		prev = NULL;

	vcs_buf_add(out, vcs_preamble, sizeof(vcs_preamble) - 1);
	for (unsigned y = 0; y < rows; y++) {
		const struct vcs_cell *row = g.cells + (size_t)(top + y) * g.cols + left;
		size_t bytes = (size_t)cols * sizeof(*row);

		out->rows[y] = out->len;
		memcpy(out->cells + (size_t)y * cols, row, bytes);
		if (prev && y < prev->n_rows &&
		    memcmp(prev->cells + (size_t)y * cols, row, bytes) == 0)
			vcs_buf_add(out, prev->data + prev->rows[y],
				    prev->rows[y + 1] - prev->rows[y]);
		else
			vcs_encode_row(out, row, y, cols);
	}
	out->rows[rows] = out->len;
	out->n_rows = rows;
	out->cols = cols;
	if (rows < vt_rows)
		vcs_buf_printf(out, "\033[%u;1H\033[J", rows + 1);
	vcs_buf_printf(out, "\033[%u;%uH\033[?25%c", cy - top + 1, cx - left + 1,
		       hidden ? 'l' : 'h');
}

void vcs_encode_changes(const struct vcs_buf *prev, const struct vcs_buf *cur, struct vcs_buf *out)
{
	unsigned n = cur->n_rows;

	out->len = 0;
	out->n_rows = 0;
	if (n == 0 || prev->n_rows != n) {
		vcs_buf_add(out, cur->data, cur->len);
		return;
	}
	vcs_buf_add(out, cur->data, cur->rows[0]);
	for (unsigned y = 0; y < n; y++) {
		size_t len = cur->rows[y + 1] - cur->rows[y];

		if (len != prev->rows[y + 1] - prev->rows[y] ||
		    memcmp(cur->data + cur->rows[y], prev->data + prev->rows[y], len) != 0)
			vcs_buf_add(out, cur->data + cur->rows[y], len);
	}
	vcs_buf_add(out, cur->data + cur->rows[n], cur->len - cur->rows[n]);
}

/* ---- the daemon's side ---- */

/* Writes all of it or counts a failure (the next mirror writes everything
 * again). Non-blocking: a tty stopped by someone else's TCOOFF must not
 * stall consoled. */
static bool vcs_write(struct vcs *v, const char *data, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(v->fd, data + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (v->stats.failed++ == 0)
				log_warning_errno(
				    n < 0 ? errno : EAGAIN,
				    "Failed to write the mirror to tty%u, retrying: %m", v->vt);
			v->stats.writes++;
			v->stats.bytes += done;
			return false;
		}
		done += (size_t)n;
	}
	v->stats.writes++;
	v->stats.bytes += len;
	return true;
}

static void vcs_mirror(struct vcs *v)
{
	struct vcs_source src;
	struct winsize ws = {0};
	unsigned cols, rows;

	uint64_t start = now_usec();

	v->last_usec = start;
	if (!v->source(v->userdata, &src) || !src.screen)
		return;
	cols = tsm_screen_get_width(src.screen);
	rows = tsm_screen_get_height(src.screen);
	if (ioctl(v->fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
		cols = ws.ws_col;
		rows = ws.ws_row;
	}
	/* what the VT holds (for its size), the bytes of the rows unchanged
	 * since taken from it */
	bool held = v->prev.n_rows && v->prev_cols == cols && v->prev_rows == rows;

	vcs_encode_after(&src, v->row, v->row_data, cols, rows, held ? &v->prev : NULL, &v->buf);
	const struct vcs_buf *w = &v->buf;

	if (held) {
		vcs_encode_changes(&v->prev, &v->buf, &v->changes);
		w = &v->changes;
	}
	v->dirty = !vcs_write(v, w->data, w->len);
	/* a failed write may have left part of it: all again next time */
	if (v->dirty) {
		v->prev.n_rows = 0;
	} else {
		struct vcs_buf old = v->prev;

		v->prev = v->buf;
		v->buf = old;
		v->prev_cols = cols;
		v->prev_rows = rows;
	}
	v->stats.usec += now_usec() - start;
	if (v->dirty)
		vcs_damage(v);
}

static int vcs_on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct vcs *v = userdata;

	(void)s;
	(void)usec;
	if (v->active && v->dirty)
		vcs_mirror(v);
	return 0;
}

static void vcs_cancel(struct vcs *v)
{
	sd_event_source_set_enabled(v->timer, SD_EVENT_OFF);
}

void vcs_damage(struct vcs *v)
{
	int enabled = SD_EVENT_OFF;
	uint64_t now, when;

	if (!v)
		return;
	v->dirty = true;
	v->cleared = false;
	if (!v->active)
		return;
	sd_event_source_get_enabled(v->timer, &enabled);
	if (enabled != SD_EVENT_OFF)
		return;
	now = now_usec();
	/* Output that goes on right after a mirror is a flood: a screen
	 * reader cannot follow 20 screens a second anyway, and each mirror
	 * costs the kernel a screenful of terminal output. Else (a key's echo
	 * after a pause) the mirror waits VCS_QUIET_MS: not between the
	 * echo's frame and consoled's sleep, where on one CPU it held back
	 * everything else (the session's next read, what shows the pixels),
	 * and with session restore's snapshot, due after the same quiet, in
	 * one wake-up. */
	when = now < v->last_usec + VCS_INTERVAL_USEC ? v->last_usec + VCS_FLOOD_INTERVAL_USEC
						      : now + VCS_QUIET_USEC;
	sd_event_source_set_time(v->timer, when);
	sd_event_source_set_enabled(v->timer, SD_EVENT_ONESHOT);
}

void vcs_set_rows(struct vcs *v, vcs_row_fn row, void *userdata)
{
	if (!v)
		return;
	v->row = row;
	v->row_data = userdata;
	vcs_damage(v);
}

void vcs_set_active(struct vcs *v, bool active)
{
	if (!v)
		return;
	v->active = active;
	/* another program may write to the VT while it is not ours: the next
	 * mirror is whole */
	v->prev.n_rows = 0;
	if (!active) {
		vcs_cancel(v);
		return;
	}
	/* another program may have written to the VT meanwhile */
	if (v->cleared) {
		(void)vcs_write(v, vcs_clear_seq, sizeof(vcs_clear_seq) - 1);
		return;
	}
	v->dirty = true;
	vcs_mirror(v);
}

void vcs_clear(struct vcs *v)
{
	if (!v)
		return;
	vcs_cancel(v);
	(void)vcs_write(v, vcs_clear_seq, sizeof(vcs_clear_seq) - 1);
	v->prev.n_rows = 0;
	/* the next screen (the new session's) is mirrored when it changes */
	v->dirty = true;
	v->cleared = true;
}

const struct vcs_stats *vcs_get_stats(const struct vcs *v)
{
	return &v->stats;
}

/* The kernel records the code points written to a VT only once /dev/vcsuN
 * has been read (the first read maps the glyphs back, so what the font
 * lacks reads as its replacement until the cell is written again): one
 * read now, so that a reader that comes later gets the code points of the
 * mirror at once. Within consoled@.service's sandbox the device is not
 * allowed; then the first reader's read starts it. */
static void vcs_start_unicode(unsigned vt)
{
	char path[32];
	uint32_t cell;
	int fd;

	snprintf(path, sizeof(path), "/dev/vcsu%u", vt);
	fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || read(fd, &cell, sizeof(cell)) < 0)
		log_debug_errno(
		    errno, "Cannot read %s, its code points start with its first reader: %m", path);
	if (fd >= 0)
		close(fd);
}

int vcs_new(sd_event *event, unsigned vt, vcs_source_fn source, void *userdata, struct vcs **ret)
{
	struct vcs *v;
	char path[32];
	int r;

	v = xcalloc(1, sizeof(*v));
	v->vt = vt;
	v->source = source;
	v->userdata = userdata;
	snprintf(path, sizeof(path), "/dev/tty%u", vt);
	v->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (v->fd < 0) {
		r = log_warning_errno(errno, "Failed to open %s for the mirror, no mirror: %m",
				      path);
		free(v);
		return r;
	}
	vcs_start_unicode(vt);
	/* to the millisecond: with sd-event's default accuracy (250 ms) the
	 * mirror could lag the screen by that much more than VCS_INTERVAL */
	r = sd_event_add_time(event, &v->timer, CLOCK_MONOTONIC, 0, USEC_PER_MSEC, vcs_on_timer, v);
	if (r < 0) {
		log_warning_errno(r, "Failed to set up the mirror's timer, no mirror: %m");
		sd_event_source_unref(v->timer);
		close(v->fd);
		free(v);
		return r;
	}
	sd_event_source_set_enabled(v->timer, SD_EVENT_OFF);
	*ret = v;
	return 0;
}

void vcs_free(struct vcs *v)
{
	if (!v)
		return;
	/* always: a mirror of an earlier consoled (one that was killed) may
	 * still be there */
	(void)vcs_write(v, vcs_clear_seq, sizeof(vcs_clear_seq) - 1);
	sd_event_source_unref(v->timer);
	close(v->fd);
	vcs_buf_fini(&v->buf);
	vcs_buf_fini(&v->prev);
	vcs_buf_fini(&v->changes);
	free(v);
}
