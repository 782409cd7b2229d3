/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ftref: the reference picture of text drawn with a FreeType font, made the
 * way fonts/fontset.h says consoled places glyphs in cells, by calling
 * FreeType directly. None of consoled's code is used: the VM tests compare
 * consoled's screendump with this picture, so a misreading of the contract
 * on either side shows as differing pixels.
 *
 *   ftref --font=MAIN [--fallback=FILE]... [--size=POINTS] [--dpi=DPI] [--mono]
 *         [--fg=RRGGBB] [--bg=RRGGBB] [--cols=N] [--out=FILE.ppm]
 *         [--coverage=FILE.pgm] [--clusters] TEXT...
 *   ftref --font=MAIN [--size=POINTS] [--dpi=DPI] [--mono] --metrics
 *
 * Each TEXT (UTF-8) is one text row, starting in column 0. Cells: a
 * character of wcwidth 2 takes two cells, one of wcwidth 0 (a combining
 * mark) joins the cluster before it, anything else takes one cell (the
 * widths of libtsm's mk_wcwidth agree with glibc's for the characters the
 * tests use). The picture is cols * cell_width by rows * cell_height pixels;
 * each pixel is the coverage a blended as the renderer does it:
 * (bg * (255 - a) + fg * a + 127) / 255 per 8-bit channel.
 *
 * --metrics prints "cell W H ascent A descent D ppem P" and exits;
 * --clusters prints one line per cluster: row, column, cells, code points and
 * which font drew it (main, fallback N, or box).
 *
 * The fontset.h contract, as implemented here:
 *  - FT_Set_Char_Size(face, 0, round(size * 64), dpi, dpi) for every face;
 *    a fallback face gets the same call, which is "the main font's pixel
 *    size" when size * dpi / 72 is a whole number of pixels (the tests only
 *    use such sizes);
 *  - load FT_LOAD_DEFAULT | FT_LOAD_TARGET_NORMAL and FT_RENDER_MODE_NORMAL,
 *    or FT_LOAD_TARGET_MONO and FT_RENDER_MODE_MONO (coverage 0 or 255);
 *  - cell_width = (advance.x of 'M' + 32) >> 6 (at least 1), 'M' loaded with
 *    the same flags; ascent and descent from size->metrics rounded up;
 *  - bitmap at (bitmap_left, ascent - bitmap_top) from the top-left of the
 *    cluster's first cell, clipped to the cluster's cells;
 *  - a cluster's base picks the font (main, else the first fallback that
 *    has it); its marks come from that font when it has them, else the same
 *    search; a mark is drawn at the base's origin, or at the base's advance
 *    when its own advance is zero; coverage is the maximum;
 *  - no font has the base: a 1-pixel rectangle inset 1 pixel from the
 *    cluster's cells.
 */
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <ft2build.h>
#include FT_FREETYPE_H

#define MAX_FONTS 8
#define MAX_MARKS 8

struct ref {
	FT_Library lib;
	FT_Face faces[MAX_FONTS]; /* [0] main, then fallbacks in order */
	const char *paths[MAX_FONTS];
	unsigned n_faces;
	bool mono;
	FT_Int32 load_flags;
	FT_Render_Mode render_mode;
	unsigned cell_w, cell_h, ascent, descent;
};

struct cluster {
	uint32_t ch[1 + MAX_MARKS];
	size_t len;
	unsigned col, cells;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("ftref: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die("out of memory");
	return p;
}

static void ref_open_face(struct ref *r, const char *path, double size, double dpi)
{
	FT_Face face;
	FT_Error err;

	if (r->n_faces == MAX_FONTS)
		die("too many fonts");
	err = FT_New_Face(r->lib, path, 0, &face);
	if (err)
		die("cannot open %s: FreeType error %d", path, err);
	err = FT_Set_Char_Size(face, 0, (FT_F26Dot6)lround(size * 64), (FT_UInt)lround(dpi),
			       (FT_UInt)lround(dpi));
	if (err)
		die("cannot set %s to %g points at %g dpi: FreeType error %d", path, size, dpi,
		    err);
	r->paths[r->n_faces] = path;
	r->faces[r->n_faces++] = face;
}

/* Loads and renders glyph `index` of `face` into its glyph slot. */
static FT_GlyphSlot ref_render_glyph(struct ref *r, FT_Face face, FT_UInt index)
{
	FT_Error err = FT_Load_Glyph(face, index, r->load_flags);

	if (!err)
		err = FT_Render_Glyph(face->glyph, r->render_mode);
	if (err)
		die("cannot render glyph %u of %s: FreeType error %d", index, face->family_name,
		    err);
	return face->glyph;
}

static void ref_metrics(struct ref *r)
{
	FT_Face face = r->faces[0];
	FT_UInt m = FT_Get_Char_Index(face, 'M');
	FT_Error err;

	if (!m)
		die("%s has no 'M'", r->paths[0]);
	err = FT_Load_Glyph(face, m, r->load_flags);
	if (err)
		die("cannot load 'M' of %s: FreeType error %d", r->paths[0], err);
	r->cell_w = (unsigned)((face->glyph->advance.x + 32) >> 6);
	if (r->cell_w < 1)
		r->cell_w = 1;
	r->ascent = (unsigned)((face->size->metrics.ascender + 63) >> 6);
	r->descent = (unsigned)((-face->size->metrics.descender + 63) >> 6);
	r->cell_h = r->ascent + r->descent;
}

/* The face that draws ucs4: `first` if it has it, else main, then the
 * fallbacks in order; -1 for none. */
static int ref_face_for(const struct ref *r, uint32_t ucs4, int first)
{
	if (first >= 0 && FT_Get_Char_Index(r->faces[first], ucs4))
		return first;
	for (unsigned i = 0; i < r->n_faces; i++)
		if (FT_Get_Char_Index(r->faces[i], ucs4))
			return (int)i;
	return -1;
}

/* Max-blends the slot's bitmap at pen position (ox, baseline) into a
 * w x h coverage map, dropping what falls outside. */
static void ref_blit(const FT_GlyphSlot slot, int ox, int baseline, uint8_t *cov, unsigned w,
		     unsigned h)
{
	const FT_Bitmap *bm = &slot->bitmap;
	int x0 = ox + slot->bitmap_left, y0 = baseline - slot->bitmap_top;

	if (bm->pixel_mode != FT_PIXEL_MODE_GRAY && bm->pixel_mode != FT_PIXEL_MODE_MONO)
		die("unexpected FreeType pixel mode %d", bm->pixel_mode);
	for (unsigned y = 0; y < bm->rows; y++) {
		const uint8_t *row = bm->buffer + (long)y * bm->pitch;
		int py = y0 + (int)y;

		if (py < 0 || py >= (int)h)
			continue;
		for (unsigned x = 0; x < bm->width; x++) {
			int px = x0 + (int)x;
			uint8_t a;

			if (px < 0 || px >= (int)w)
				continue;
			if (bm->pixel_mode == FT_PIXEL_MODE_MONO)
				a = (row[x >> 3] >> (7 - (x & 7))) & 1 ? 255 : 0;
			else
				a = row[x];
			if (a > cov[(size_t)py * w + px])
				cov[(size_t)py * w + px] = a;
		}
	}
}

/* Draws one cluster into a cells * cell_w by cell_h coverage map; returns
 * the index of the face that drew the base, or -1 for the box. */
static int ref_draw_cluster(struct ref *r, const struct cluster *c, uint8_t *cov)
{
	unsigned w = c->cells * r->cell_w, h = r->cell_h;
	int base_face = ref_face_for(r, c->ch[0], -1);
	FT_GlyphSlot slot;
	int base_advance;

	memset(cov, 0, (size_t)w * h);
	if (base_face < 0) {
		for (unsigned x = 1; x + 1 < w; x++)
			cov[1 * w + x] = cov[(size_t)(h - 2) * w + x] = 255;
		for (unsigned y = 1; y + 1 < h; y++)
			cov[(size_t)y * w + 1] = cov[(size_t)y * w + w - 2] = 255;
		return -1;
	}
	slot = ref_render_glyph(r, r->faces[base_face],
				FT_Get_Char_Index(r->faces[base_face], c->ch[0]));
	if (slot->advance.x & 63)
		fprintf(stderr, "ftref: warning: U+%04X advances %ld/64 pixels (not whole)\n",
			c->ch[0], (long)slot->advance.x);
	base_advance = (int)(slot->advance.x >> 6);
	ref_blit(slot, 0, (int)r->ascent, cov, w, h);
	for (size_t i = 1; i < c->len; i++) {
		int f = ref_face_for(r, c->ch[i], base_face);

		if (f < 0)
			continue;
		slot = ref_render_glyph(r, r->faces[f], FT_Get_Char_Index(r->faces[f], c->ch[i]));
		ref_blit(slot, slot->advance.x == 0 ? base_advance : 0, (int)r->ascent, cov, w, h);
	}
	return base_face;
}

/* Splits a UTF-8 line into clusters; returns their number (at most max). */
static size_t split_clusters(const char *text, struct cluster *out, size_t max, unsigned *ret_cols)
{
	mbstate_t st = {0};
	size_t n = 0, len = strlen(text);
	unsigned col = 0;

	while (len) {
		wchar_t wc;
		size_t k = mbrtowc(&wc, text, len, &st);
		int width;

		if (k == (size_t)-1 || k == (size_t)-2 || k == 0)
			die("invalid UTF-8 in %s", text);
		text += k;
		len -= k;
		width = wcwidth(wc);
		if (width == 0 && n > 0) {
			struct cluster *c = &out[n - 1];

			if (c->len == 1 + MAX_MARKS)
				die("too many combining marks");
			c->ch[c->len++] = (uint32_t)wc;
			continue;
		}
		if (width < 0)
			die("U+%04X has no width (wcwidth -1); is the locale UTF-8?", (unsigned)wc);
		if (width == 0)
			die("a line starts with the combining mark U+%04X", (unsigned)wc);
		if (n == max)
			die("line too long");
		out[n] = (struct cluster){
		    .ch = {(uint32_t)wc}, .len = 1, .col = col, .cells = (unsigned)width};
		col += (unsigned)width;
		n++;
	}
	*ret_cols = col;
	return n;
}

static int parse_rgb(const char *s, uint8_t rgb[3])
{
	char *end;
	unsigned long v = strtoul(s, &end, 16);

	if (*end || strlen(s) != 6)
		return -EINVAL;
	rgb[0] = (uint8_t)(v >> 16);
	rgb[1] = (uint8_t)(v >> 8);
	rgb[2] = (uint8_t)v;
	return 0;
}

static void write_file(const char *path, const char *header, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wbe");

	if (!f)
		die("cannot write %s: %s", path, strerror(errno));
	if (fputs(header, f) < 0 || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		die("cannot write %s: %s", path, strerror(errno));
}

static void usage(void)
{
	fputs("usage: ftref --font=FILE [--fallback=FILE]... [--size=POINTS] [--dpi=DPI] [--mono]\n"
	      "             [--fg=RRGGBB] [--bg=RRGGBB] [--cols=N] [--out=FILE.ppm]\n"
	      "             [--coverage=FILE.pgm] [--clusters] TEXT...\n"
	      "       ftref --font=FILE [--size=POINTS] [--dpi=DPI] [--mono] --metrics\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"font", required_argument, NULL, 'f'},
	    {"fallback", required_argument, NULL, 'F'},
	    {"size", required_argument, NULL, 's'},
	    {"dpi", required_argument, NULL, 'd'},
	    {"mono", no_argument, NULL, 'm'},
	    {"fg", required_argument, NULL, 'g'},
	    {"bg", required_argument, NULL, 'b'},
	    {"cols", required_argument, NULL, 'c'},
	    {"out", required_argument, NULL, 'o'},
	    {"coverage", required_argument, NULL, 'C'},
	    {"metrics", no_argument, NULL, 'M'},
	    {"clusters", no_argument, NULL, 'L'},
	    {NULL, 0, NULL, 0},
	};
	const char *main_font = NULL, *fallbacks[MAX_FONTS], *out = NULL, *cov_out = NULL;
	unsigned n_fallbacks = 0, cols = 0, rows;
	double size = 12, dpi = 96;
	uint8_t fg[3] = {0xaa, 0xaa, 0xaa}, bg[3] = {0, 0, 0};
	bool metrics = false, list = false;
	struct ref r = {0};
	int opt;

	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		die("no C.UTF-8 locale");
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			main_font = optarg;
			break;
		case 'F':
			if (n_fallbacks == MAX_FONTS - 1)
				die("too many fallbacks");
			fallbacks[n_fallbacks++] = optarg;
			break;
		case 's':
			size = strtod(optarg, NULL);
			break;
		case 'd':
			dpi = strtod(optarg, NULL);
			break;
		case 'm':
			r.mono = true;
			break;
		case 'g':
			if (parse_rgb(optarg, fg) < 0)
				die("--fg: expected RRGGBB");
			break;
		case 'b':
			if (parse_rgb(optarg, bg) < 0)
				die("--bg: expected RRGGBB");
			break;
		case 'c':
			cols = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'o':
			out = optarg;
			break;
		case 'C':
			cov_out = optarg;
			break;
		case 'M':
			metrics = true;
			break;
		case 'L':
			list = true;
			break;
		default:
			usage();
		}
	}
	if (!main_font || size <= 0 || dpi <= 0 || (!metrics && optind == argc))
		usage();

	if (FT_Init_FreeType(&r.lib))
		die("cannot initialise FreeType");
	r.load_flags = FT_LOAD_DEFAULT | (r.mono ? FT_LOAD_TARGET_MONO : FT_LOAD_TARGET_NORMAL);
	r.render_mode = r.mono ? FT_RENDER_MODE_MONO : FT_RENDER_MODE_NORMAL;
	ref_open_face(&r, main_font, size, dpi);
	for (unsigned i = 0; i < n_fallbacks; i++)
		ref_open_face(&r, fallbacks[i], size, dpi);
	ref_metrics(&r);
	if (metrics) {
		printf("cell %u %u ascent %u descent %u ppem %u\n", r.cell_w, r.cell_h, r.ascent,
		       r.descent, r.faces[0]->size->metrics.y_ppem);
		return 0;
	}

	/* Lay out every row first: the picture is as wide as the widest. */
	rows = (unsigned)(argc - optind);
	struct cluster *clusters = xcalloc((size_t)rows * 512, sizeof(*clusters));
	size_t *n_clusters = xcalloc(rows, sizeof(*n_clusters));
	for (unsigned row = 0; row < rows; row++) {
		unsigned width;

		n_clusters[row] =
		    split_clusters(argv[optind + row], &clusters[(size_t)row * 512], 512, &width);
		if (width > cols)
			cols = width;
	}

	unsigned w = cols * r.cell_w, h = rows * r.cell_h;
	uint8_t *cov = xcalloc((size_t)w * h, 1);
	uint8_t *cell = xcalloc((size_t)2 * r.cell_w * r.cell_h, 1);
	for (unsigned row = 0; row < rows; row++) {
		for (size_t i = 0; i < n_clusters[row]; i++) {
			const struct cluster *c = &clusters[(size_t)row * 512 + i];
			unsigned cw = c->cells * r.cell_w;
			int face;

			if (c->col + c->cells > cols)
				die("row %u is wider than --cols=%u", row, cols);
			face = ref_draw_cluster(&r, c, cell);
			for (unsigned y = 0; y < r.cell_h; y++)
				memcpy(cov + ((size_t)row * r.cell_h + y) * w +
					   (size_t)c->col * r.cell_w,
				       cell + (size_t)y * cw, cw);
			if (list) {
				printf("cluster row %u col %u cells %u", row, c->col, c->cells);
				for (size_t k = 0; k < c->len; k++)
					printf(" U+%04X", c->ch[k]);
				if (face < 0)
					printf(" font box\n");
				else if (face == 0)
					printf(" font main %s\n", r.paths[0]);
				else
					printf(" font fallback%d %s\n", face, r.paths[face]);
			}
		}
	}

	if (cov_out) {
		char header[64];

		snprintf(header, sizeof(header), "P5\n%u %u\n255\n", w, h);
		write_file(cov_out, header, cov, (size_t)w * h);
	}
	if (out) {
		char header[64];
		uint8_t *rgb = xcalloc((size_t)w * h, 3);

		for (size_t i = 0; i < (size_t)w * h; i++)
			for (int k = 0; k < 3; k++)
				rgb[i * 3 + k] =
				    (uint8_t)((bg[k] * (255 - cov[i]) + fg[k] * cov[i] + 127) /
					      255);
		snprintf(header, sizeof(header), "P6\n%u %u\n255\n", w, h);
		write_file(out, header, rgb, (size_t)w * h * 3);
		free(rgb);
	}
	printf("cell %u %u ascent %u descent %u picture %u %u\n", r.cell_w, r.cell_h, r.ascent,
	       r.descent, w, h);

	free(cell);
	free(cov);
	free(n_clusters);
	free(clusters);
	for (unsigned i = 0; i < r.n_faces; i++)
		FT_Done_Face(r.faces[i]);
	FT_Done_FreeType(r.lib);
	return 0;
}
