/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fontset against FreeType itself: the geometry and pixels of fontset.h
 * are recomputed here with plain FreeType calls. Needs the fonts of Debian's
 * fonts-dejavu-core and fonts-unifont (tests/deps.sh); skips without them.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdbool.h>
#include <unistd.h>
#include <zlib.h>

#include <fontconfig/fontconfig.h>
#include <ft2build.h>
#include FT_FREETYPE_H

#include "../../fonts/font.h"
#include "../../fonts/fontset-internal.h"
#include "../../fonts/fontset.h"
#include "tests.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif
#ifdef HAVE_ASAN
/* from <sanitizer/allocator_interface.h>, which gcc does not install */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#define DEJAVU "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define UNIFONT "/usr/share/fonts/opentype/unifont/unifont.otf"

static FT_Library ft;

static struct fontset *open_fs(const char *file, const char *name, double size, bool mono)
{
	struct fontset_config cfg = {
	    .file = file, .name = name, .size = size, .dpi = 96, .mono = mono};
	struct fontset *fs = NULL;

	CHECK(fontset_new(&cfg, &fs) == 0);
	if (!fs)
		abort();
	return fs;
}

struct ref {
	FT_Face face;
	unsigned cell_w, cell_h;
	int ascent;
};

/* The geometry of fontset.h, step by step. */
static void ref_open(struct ref *r, const char *path, double points, FT_Int32 flags)
{
	CHECK(FT_New_Face(ft, path, 0, &r->face) == 0);
	CHECK(FT_Set_Char_Size(r->face, 0, (FT_F26Dot6)(points * 64 + 0.5), 96, 96) == 0);
	CHECK(FT_Load_Char(r->face, 'M', flags) == 0);
	r->cell_w = (unsigned)((r->face->glyph->advance.x + 32) >> 6);
	r->ascent = (int)((r->face->size->metrics.ascender + 63) >> 6);
	r->cell_h = (unsigned)(r->ascent + ((-r->face->size->metrics.descender + 63) >> 6));
}

/* One glyph drawn by the rules of fontset.h into a cells-wide map. */
static uint8_t *ref_render(const struct ref *r, uint32_t c, unsigned cells)
{
	unsigned w = cells * r->cell_w;
	uint8_t *px = calloc((size_t)w * r->cell_h, 1);
	FT_GlyphSlot g = r->face->glyph;

	CHECK(FT_Load_Char(r->face, c, FT_LOAD_DEFAULT | FT_LOAD_TARGET_NORMAL) == 0);
	CHECK(FT_Render_Glyph(g, FT_RENDER_MODE_NORMAL) == 0);
	for (unsigned y = 0; y < g->bitmap.rows; y++)
		for (unsigned x = 0; x < g->bitmap.width; x++) {
			int dx = g->bitmap_left + (int)x, dy = r->ascent - g->bitmap_top + (int)y;
			if (dx >= 0 && dy >= 0 && dx < (int)w && dy < (int)r->cell_h)
				px[dy * w + dx] = g->bitmap.buffer[y * g->bitmap.pitch + x];
		}
	return px;
}

static unsigned count_set(const uint8_t *p, size_t n)
{
	unsigned k = 0;

	for (size_t i = 0; i < n; i++)
		k += p[i] != 0;
	return k;
}

/* The replacement box of fontset.h. */
static uint8_t *make_box(unsigned w, unsigned h)
{
	uint8_t *b = calloc((size_t)w * h, 1);

	for (unsigned y = 1; y + 1 < h; y++)
		for (unsigned x = 1; x + 1 < w; x++)
			if (x == 1 || y == 1 || x == w - 2 || y == h - 2)
				b[y * w + x] = 255;
	return b;
}

static const uint8_t *render1(struct fontset *fs, uint32_t c, unsigned cells, unsigned style)
{
	return fontset_render(fs, &c, 1, cells, style);
}

static size_t cov_size(const struct fontset *fs, unsigned cells)
{
	return (size_t)cells * fontset_cell_width(fs) * fontset_cell_height(fs);
}

/* Whether any installed font has the code point, by fontconfig. */
static bool any_font_has(uint32_t c)
{
	FcPattern *p = FcPatternCreate();
	FcCharSet *cs = FcCharSetCreate();
	FcObjectSet *os = FcObjectSetBuild(FC_FILE, NULL);
	FcFontSet *l;
	bool found;

	FcCharSetAddChar(cs, c);
	FcPatternAddCharSet(p, FC_CHARSET, cs);
	l = FcFontList(NULL, p, os);
	found = l && l->nfont > 0;
	if (l)
		FcFontSetDestroy(l);
	FcObjectSetDestroy(os);
	FcCharSetDestroy(cs);
	FcPatternDestroy(p);
	return found;
}

static char *write_temp(const void *data, size_t n, bool gz)
{
	char *path = strdup("/tmp/consoled-fontset-XXXXXX");
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (gz) {
		gzFile g = gzdopen(fd, "wb");
		CHECK(gzwrite(g, data, (unsigned)n) == (int)n);
		gzclose(g);
	} else {
		CHECK(write(fd, data, n) == (ssize_t)n);
		close(fd);
	}
	return path;
}

static void remove_temp(char *path)
{
	unlink(path);
	free(path);
}

static void *read_all(const char *path, size_t *ret_n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	buf[n] = 0;
	*ret_n = (size_t)n;
	return buf;
}

/* Runs fontset_new with stderr captured; returns what was logged. */
static char *open_logged(const struct fontset_config *cfg, struct fontset **ret)
{
	char path[] = "/tmp/consoled-fontset-log-XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	size_t n;
	char *log;

	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	CHECK(fontset_new(cfg, ret) == 0);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd);
	log = read_all(path, &n);
	unlink(path);
	fputs(log, stderr);
	return log;
}

static void test_geometry(void)
{
	struct ref ref;
	struct fontset *fs = open_fs(DEJAVU, NULL, 12, false), *byname;
	struct fontset_stats st;

	ref_open(&ref, DEJAVU, 12, FT_LOAD_DEFAULT);
	fprintf(stderr, "DejaVu Sans Mono 12pt/96dpi: cell %ux%u, ascent %d\n",
		fontset_cell_width(fs), fontset_cell_height(fs), ref.ascent);
	CHECK_EQ_U(fontset_cell_width(fs), ref.cell_w);
	CHECK_EQ_U(fontset_cell_height(fs), ref.cell_h);
	CHECK(ref.cell_w >= 8 && ref.cell_w <= 12 && ref.cell_h >= 16 && ref.cell_h <= 22);
	CHECK(fontset_scalable(fs));
	CHECK(fontset_size(fs) == 12);
	CHECK(fontset_has_glyph(fs, 'A'));
	CHECK(!fontset_has_glyph(fs, 0x4e2d));

	/* by name, the same face */
	byname = open_fs(NULL, "DejaVu Sans Mono", 12, false);
	fontset_get_stats(byname, &st);
	CHECK(st.main_file && strcmp(st.main_file, DEJAVU) == 0);
	CHECK_EQ_U(fontset_cell_width(byname), ref.cell_w);
	CHECK_EQ_U(fontset_cell_height(byname), ref.cell_h);
	fontset_free(byname);

	/* a size in the pattern counts when none is configured */
	byname = open_fs(NULL, "DejaVu Sans Mono-24", 0, false);
	CHECK(fontset_size(byname) == 24);
	fontset_free(byname);

	/* which sizes give a console-like cell (informative) */
	for (double pt = 8; pt <= 14; pt += 1) {
		struct ref r;
		ref_open(&r, DEJAVU, pt, FT_LOAD_DEFAULT);
		fprintf(stderr, "  %.0fpt: %ux%u\n", pt, r.cell_w, r.cell_h);
		FT_Done_Face(r.face);
	}
	FT_Done_Face(ref.face);
	fontset_free(fs);
}

static void test_ascii(void)
{
	struct ref ref;
	struct fontset *fs = open_fs(DEJAVU, NULL, 12, false);
	const char *s = "AMgjy|_@W";

	ref_open(&ref, DEJAVU, 12, FT_LOAD_DEFAULT);
	for (const char *p = s; *p; p++) {
		const uint8_t *cov = render1(fs, (uint8_t)*p, 1, 0);
		uint8_t *want = ref_render(&ref, (uint8_t)*p, 1);

		CHECK(count_set(cov, cov_size(fs, 1)) > 4);
		if (memcmp(cov, want, cov_size(fs, 1)) != 0) {
			fprintf(stderr, "'%c' differs from the reference\n", *p);
			CHECK(false);
		}
		free(want);
	}
	/* 'A' stays inside the cell: some row and column are left blank */
	const uint8_t *a = render1(fs, 'A', 1, 0);
	CHECK(count_set(a, fontset_cell_width(fs)) == 0); /* top row */
	CHECK_EQ_U(count_set(render1(fs, ' ', 1, 0), cov_size(fs, 1)), 0);
	FT_Done_Face(ref.face);
	fontset_free(fs);
}

static void test_fallback(void)
{
	struct fontset *fs = open_fs(DEJAVU, NULL, 12, false);
	unsigned w = fontset_cell_width(fs), h = fontset_cell_height(fs);
	uint8_t *box2 = make_box(2 * w, h), *box1 = make_box(w, h);
	const uint8_t *cov;
	unsigned right = 0;

	/* U+4E2D is in unifont only */
	cov = render1(fs, 0x4e2d, 2, 0);
	CHECK(count_set(cov, cov_size(fs, 2)) > 10);
	CHECK(memcmp(cov, box2, cov_size(fs, 2)) != 0);
	for (unsigned y = 0; y < h; y++)
		right += count_set(cov + y * 2 * w + w, w);
	CHECK(right > 5); /* drawn over both cells */

	/* unifont's glyph at the main font's size on the main baseline */
	struct ref u, d;
	ref_open(&d, DEJAVU, 12, FT_LOAD_DEFAULT);
	ref_open(&u, UNIFONT, 12, FT_LOAD_DEFAULT);
	u.cell_w = d.cell_w;
	u.cell_h = d.cell_h;
	u.ascent = d.ascent;
	uint8_t *want = ref_render(&u, 0x4e2d, 2);
	CHECK(memcmp(render1(fs, 0x4e2d, 2, 0), want, cov_size(fs, 2)) == 0);
	free(want);
	FT_Done_Face(u.face);
	FT_Done_Face(d.face);

	/* a code point no font has: the box, answered once by fontconfig */
	uint32_t none = 0;
	const uint32_t candidates[] = {0x10fffd, 0x50000, 0xe0fff, 0x3fffd};
	for (size_t i = 0; i < ELEMENTSOF(candidates) && !none; i++)
		if (!any_font_has(candidates[i]))
			none = candidates[i];
	CHECK(none != 0);
	CHECK(memcmp(render1(fs, none, 1, 0), box1, cov_size(fs, 1)) == 0);
	CHECK(memcmp(render1(fs, none, 2, 0), box2, cov_size(fs, 2)) == 0);

	struct fontset_stats st1, st2;
	fontset_get_stats(fs, &st1);
	for (unsigned i = 0; i < 100; i++)
		render1(fs, none, 1, i % 2 ? FONT_STYLE_BOLD : FONT_STYLE_UNDERLINE);
	fontset_get_stats(fs, &st2);
	CHECK_EQ_U(st2.fc_lookups, st1.fc_lookups);

	/* a fallback under a PSF main font fits the PSF cell */
	char *psf = write_temp(font_builtin_psf, font_builtin_psf_size, false);
	struct fontset *p = open_fs(psf, NULL, 0, false);
	CHECK_EQ_U(fontset_cell_width(p), 8);
	CHECK_EQ_U(fontset_cell_height(p), 16);
	/* A PSF font's own glyphs need neither fontconfig nor FreeType: their
	 * configuration and cache are loaded at the first missing glyph. */
	struct fontset_stats pst;
	render1(p, 'A', 1, 0);
	render1(p, 'A', 1, FONT_STYLE_BOLD | FONT_STYLE_ITALIC);
	CHECK(fontset_has_glyph(p, 0xe9));
	fontset_get_stats(p, &pst);
	CHECK(!pst.fc_loaded);
	CHECK(!pst.ft_loaded);
	cov = render1(p, 0x4e2d, 2, 0);
	fontset_get_stats(p, &pst);
	CHECK(pst.fc_loaded);
	CHECK(pst.ft_loaded);
	uint8_t *pbox = make_box(16, 16);
	CHECK(count_set(cov, 2 * 8 * 16) > 10);
	CHECK(memcmp(cov, pbox, 2 * 8 * 16) != 0);
	/* a code point no font has: the PSF's own substitute, as fbcon shows it */
	struct font *bf = NULL;
	CHECK(font_load_builtin(&bf) == 0);
	const uint8_t *sub = font_glyph(bf, font_lookup(bf, none));
	cov = render1(p, none, 2, 0);
	CHECK(memcmp(cov, pbox, 2 * 8 * 16) != 0);
	for (unsigned y = 0; y < 16; y++)
		for (unsigned x = 0; x < 16; x++) {
			bool on = x < 8 && (sub[y] & (0x80 >> x));
			CHECK_EQ_U(cov[y * 16 + x], on ? 255 : 0);
		}
	font_free(bf);
	free(pbox);
	fontset_free(p);
	remove_temp(psf);

	free(box1);
	free(box2);
	fontset_free(fs);
}

static void test_combining(void)
{
	struct fontset *fs = open_fs(DEJAVU, NULL, 12, false);
	size_t n = cov_size(fs, 1);
	uint8_t *e = malloc(n);
	const uint32_t seq[] = {'e', 0x301};
	const uint8_t *ea;
	bool contains = true;

	memcpy(e, render1(fs, 'e', 1, 0), n);
	ea = fontset_render(fs, seq, 2, 1, 0);
	CHECK(memcmp(e, ea, n) != 0);
	for (size_t i = 0; i < n; i++)
		contains &= ea[i] >= e[i];
	CHECK(contains);
	/* the accent sits above the e: pixels in rows where 'e' has none */
	unsigned top_e = 0, top_ea = 0;
	for (unsigned y = 0; y < fontset_cell_height(fs) / 2; y++) {
		top_e += count_set(e + y * fontset_cell_width(fs), fontset_cell_width(fs));
		top_ea += count_set(ea + y * fontset_cell_width(fs), fontset_cell_width(fs));
	}
	CHECK(top_ea > top_e);

	/* a mark nobody has is dropped, never a box */
	const uint32_t seq2[] = {'e', 0x10fffd};
	CHECK(memcmp(fontset_render(fs, seq2, 2, 1, 0), e, n) == 0);
	/* long clusters are cut, not refused */
	const uint32_t seq3[] = {'e', 0x301, 0x302, 0x303, 0x304, 0x305, 0x306, 0x307};
	CHECK(count_set(fontset_render(fs, seq3, ELEMENTSOF(seq3), 1, 0), n) > 0);
	free(e);
	fontset_free(fs);
}

/* The PSF provider draws struct font's bits. */
static void check_psf_bits(struct fontset *fs, const struct font *f)
{
	bool same = true;

	CHECK_EQ_U(fontset_cell_width(fs), f->width);
	CHECK_EQ_U(fontset_cell_height(fs), f->height);
	for (uint32_t c = 0x20; c < 0x250; c++) {
		const uint8_t *cov;
		const uint8_t *bits;

		if (!fontset_has_glyph(fs, c))
			continue;
		cov = render1(fs, c, 1, FONT_STYLE_BOLD); /* bold is ignored */
		bits = font_glyph(f, font_lookup(f, c));
		for (unsigned y = 0; y < f->height; y++)
			for (unsigned x = 0; x < f->width; x++) {
				bool on = bits[y * f->stride + x / 8] & (0x80 >> (x % 8));
				same &= cov[y * f->width + x] == (on ? 255 : 0);
			}
	}
	CHECK(same);
}

static void test_psf(void)
{
	struct font *f = NULL;
	char *plain = write_temp(font_builtin_psf, font_builtin_psf_size, false);
	char *gz = write_temp(font_builtin_psf, font_builtin_psf_size, true);
	struct fontset *fs;

	CHECK(font_load_builtin(&f) == 0);
	fs = open_fs(plain, NULL, 0, false);
	check_psf_bits(fs, f);
	CHECK(!fontset_scalable(fs));
	CHECK(fontset_has_glyph(fs, 'A'));
	CHECK(fontset_has_glyph(fs, 0xe9));
	CHECK(!fontset_has_glyph(fs, 0x4e2d));
	/* listed in the table with the glyph U+FFFD shares: the font has it */
	CHECK(fontset_has_glyph(fs, 0x2666));
	CHECK(!fontset_has_glyph(fs, 0x2603));
	CHECK(fontset_set_size(fs, 20) == -EOPNOTSUPP);
	CHECK_EQ_U(fontset_cell_height(fs), 16);
	/* fbcon's underline: the bottom two rows */
	const uint8_t *u = render1(fs, ' ', 1, FONT_STYLE_UNDERLINE);
	CHECK_EQ_U(count_set(u, 8 * 16), 16);
	CHECK_EQ_U(count_set(u + 14 * 8, 16), 16);
	fontset_free(fs);

	fs = open_fs(gz, NULL, 0, false);
	check_psf_bits(fs, f);
	fontset_free(fs);
	font_free(f);
	remove_temp(plain);
	remove_temp(gz);

	/* a real console font with a Unicode table, if console-setup is there */
	const char *path = "/usr/share/consolefonts/Lat2-Terminus16.psf.gz";
	if (access(path, R_OK) == 0) {
		CHECK(font_load_psf_file(path, &f, NULL) == 0);
		fs = open_fs(path, NULL, 0, false);
		check_psf_bits(fs, f);
		fontset_free(fs);
		font_free(f);
	}
}

static void check_fell_back(struct fontset *fs, const char *bad)
{
	struct fontset_stats st;

	fontset_get_stats(fs, &st);
	CHECK(fontset_scalable(fs)); /* monospace by name */
	CHECK(st.main_file && strcmp(st.main_file, bad) != 0);
	CHECK(count_set(render1(fs, 'A', 1, 0), cov_size(fs, 1)) > 4);
}

static void test_broken(void)
{
	size_t n;
	uint8_t *ttf = read_all(DEJAVU, &n), junk[4096];
	struct fontset_config cfg = {.size = 12, .dpi = 96};
	struct fontset *fs;
	char *log;

	/* truncated TTF, random bytes, a truncated PSF, a missing file */
	char *paths[3];
	paths[0] = write_temp(ttf, 2000, false);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 7919 >> 3 ^ i);
	paths[1] = write_temp(junk, sizeof(junk), false);
	paths[2] = write_temp(font_builtin_psf, 100, true);
	for (int i = 0; i < 3; i++) {
		cfg.file = paths[i];
		log = open_logged(&cfg, &fs);
		CHECK(strstr(log, paths[i]) && strstr(log, "falling back"));
		check_fell_back(fs, paths[i]);
		for (uint32_t c = 0x20; c < 0x80; c++)
			render1(fs, c, 1, 0);
		fontset_free(fs);
		free(log);
		remove_temp(paths[i]);
	}
	free(ttf);

	cfg.file = "/nonexistent/font.ttf";
	log = open_logged(&cfg, &fs);
	CHECK(strstr(log, "/nonexistent/font.ttf") && strstr(log, "No such file"));
	check_fell_back(fs, cfg.file);
	fontset_free(fs);
	free(log);

	/* an unknown family falls back to monospace, not a proportional font */
	cfg.file = NULL;
	cfg.name = "No Such Family Anywhere";
	log = open_logged(&cfg, &fs);
	CHECK(strstr(log, "No Such Family Anywhere") != NULL);
	check_fell_back(fs, "");
	fontset_free(fs);
	free(log);

	/* no fonts at all: the built-in font, and its substitute glyph for the
	 * rest (what the kernel console shows) */
	char conf[] = "<?xml version=\"1.0\"?><fontconfig><cachedir>/nonexistent</cachedir>"
		      "</fontconfig>";
	char *confpath = write_temp(conf, strlen(conf), false);
	setenv("FONTCONFIG_FILE", confpath, 1);
	cfg.file = "/nonexistent/font.ttf";
	cfg.name = NULL;
	log = open_logged(&cfg, &fs);
	CHECK(strstr(log, "built-in") != NULL);
	CHECK(!fontset_scalable(fs));
	CHECK_EQ_U(fontset_cell_width(fs), 8);
	CHECK_EQ_U(fontset_cell_height(fs), 16);
	struct font *bf = NULL;
	CHECK(font_load_builtin(&bf) == 0);
	const uint8_t *sub = font_glyph(bf, font_lookup(bf, 0x4e2d)),
		      *cov = render1(fs, 0x4e2d, 2, 0);
	for (unsigned y = 0; y < 16; y++)
		for (unsigned x = 0; x < 16; x++)
			CHECK_EQ_U(cov[y * 16 + x], x < 8 && (sub[y] & (0x80 >> x)) ? 255 : 0);
	font_free(bf);
	fontset_free(fs);
	free(log);
	unsetenv("FONTCONFIG_FILE");
	remove_temp(confpath);
}

static size_t allocated_bytes(void)
{
#ifdef HAVE_ASAN
	return __sanitizer_get_current_allocated_bytes();
#else
	return mallinfo2().uordblks;
#endif
}

static void test_bounded(void)
{
	struct fontset *fs = open_fs(DEJAVU, NULL, 12, false);
	struct fontset_stats st;
	size_t warm = 0;
	uint32_t c = 0x20;
	unsigned drawn = 0;

	for (; drawn < 70000; c++) {
		if (c >= 0xd800 && c < 0xe000)
			continue;
		render1(fs, c, c >= 0x2e80 && c < 0xa000 ? 2 : 1, drawn % 3 == 0);
		if (++drawn == 10000)
			warm = allocated_bytes();
	}
	fontset_get_stats(fs, &st);
	fprintf(stderr,
		"after %u code points (to U+%04X): %zu bytes more than at 10000; "
		"cache %zu/%zu entries, %zu bytes; %u fallback faces\n",
		drawn, c, allocated_bytes() - warm, st.cache_used, st.cache_capacity,
		st.cache_bytes, st.fallback_open);
	CHECK(allocated_bytes() < warm + (1u << 20));
	CHECK(st.cache_used <= st.cache_capacity && st.cache_capacity <= 4096);
	CHECK(st.cache_bytes <= (8u << 20));
	CHECK(st.fallback_open <= st.fallback_max);
	fontset_free(fs);
}

static void test_mono(void)
{
	struct fontset *fs = open_fs(DEJAVU, NULL, 12, true), *gray;
	const uint32_t chars[] = {'A', 'g', '@', 0x4e2d, 0x10fffd};
	const uint32_t seq[] = {'e', 0x301};
	bool only01 = true;
	unsigned between = 0;

	for (size_t i = 0; i < ELEMENTSOF(chars); i++) {
		const uint8_t *cov = render1(fs, chars[i], 2, FONT_STYLE_BOLD);
		CHECK(count_set(cov, cov_size(fs, 2)) > 4);
		for (size_t k = 0; k < cov_size(fs, 2); k++)
			only01 &= cov[k] == 0 || cov[k] == 255;
	}
	const uint8_t *cov = fontset_render(fs, seq, 2, 1, FONT_STYLE_UNDERLINE);
	for (size_t k = 0; k < cov_size(fs, 1); k++)
		only01 &= cov[k] == 0 || cov[k] == 255;
	CHECK(only01);

	/* without mono the same glyph has grey edges */
	gray = open_fs(DEJAVU, NULL, 12, false);
	cov = render1(gray, 'A', 1, 0);
	for (size_t k = 0; k < cov_size(gray, 1); k++)
		between += cov[k] != 0 && cov[k] != 255;
	CHECK(between > 0);
	fontset_free(gray);
	fontset_free(fs);
}

static void test_set_size(void)
{
	struct fontset *fs = open_fs(DEJAVU, NULL, 12, false);
	unsigned w = fontset_cell_width(fs), h = fontset_cell_height(fs);
	struct ref r;

	render1(fs, 'A', 1, 0);
	CHECK(fontset_set_size(fs, 24) == 0);
	CHECK(fontset_size(fs) == 24);
	ref_open(&r, DEJAVU, 24, FT_LOAD_DEFAULT);
	CHECK_EQ_U(fontset_cell_width(fs), r.cell_w);
	CHECK_EQ_U(fontset_cell_height(fs), r.cell_h);
	CHECK(fontset_cell_width(fs) > w && fontset_cell_height(fs) > h);
	uint8_t *want = ref_render(&r, 'A', 1);
	CHECK(memcmp(render1(fs, 'A', 1, 0), want, cov_size(fs, 1)) == 0);
	free(want);
	/* the fallback follows the size */
	CHECK(count_set(render1(fs, 0x4e2d, 2, 0), cov_size(fs, 2)) > 20);
	FT_Done_Face(r.face);

	w = fontset_cell_width(fs);
	h = fontset_cell_height(fs);
	CHECK(fontset_set_size(fs, 1) == -EINVAL);   /* cell under 4 pixels */
	CHECK(fontset_set_size(fs, 500) == -EINVAL); /* over 256 */
	CHECK(fontset_set_size(fs, -3) == -EINVAL);
	CHECK_EQ_U(fontset_cell_width(fs), w);
	CHECK_EQ_U(fontset_cell_height(fs), h);
	CHECK(fontset_size(fs) == 24);
	CHECK(count_set(render1(fs, 'B', 1, 0), cov_size(fs, 1)) > 4);
	fontset_free(fs);
}

static void test_styles(void)
{
	struct fontset *fs = open_fs(NULL, "DejaVu Sans Mono", 12, false);
	size_t n = cov_size(fs, 1);
	uint8_t *a = malloc(n);
	const uint8_t *cov;
	struct ref r;

	memcpy(a, render1(fs, 'A', 1, 0), n);
	/* DejaVu Sans Mono Bold is in fonts-dejavu-core */
	cov = render1(fs, 'A', 1, FONT_STYLE_BOLD);
	CHECK(memcmp(cov, a, n) != 0);
	CHECK(count_set(cov, n) >= count_set(a, n));
	/* italic: the oblique face if installed, else upright */
	cov = render1(fs, 'A', 1, FONT_STYLE_ITALIC);
	if (access("/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Oblique.ttf", R_OK) == 0)
		CHECK(memcmp(cov, a, n) != 0);
	else
		CHECK(memcmp(cov, a, n) == 0);
	CHECK(count_set(render1(fs, 'A', 1, FONT_STYLE_BOLD | FONT_STYLE_ITALIC), n) > 4);

	/* underline: a full row at the face's underline position */
	ref_open(&r, DEJAVU, 12, FT_LOAD_DEFAULT);
	FT_Pos pos = FT_MulFix(r.face->underline_position, r.face->size->metrics.y_scale);
	FT_Pos th = FT_MulFix(r.face->underline_thickness, r.face->size->metrics.y_scale);
	int pos_px = (int)(pos >= 0 ? (pos + 32) / 64 : -((-pos + 32) / 64));
	int th_px = (int)((th + 32) / 64);
	if (th_px < 1)
		th_px = 1;
	int row = r.ascent - pos_px - th_px / 2;
	unsigned w = fontset_cell_width(fs);
	cov = render1(fs, ' ', 1, FONT_STYLE_UNDERLINE);
	CHECK_EQ_U(count_set(cov, n), w * (unsigned)th_px);
	CHECK_EQ_U(count_set(cov + row * w, w), w);
	FT_Done_Face(r.face);

	/* synthetic bold when the family has no bold: unifont */
	struct fontset *u = open_fs(UNIFONT, NULL, 12, false);
	n = cov_size(u, 1);
	memcpy(a, render1(u, 'A', 1, 0), n);
	CHECK(count_set(render1(u, 'A', 1, FONT_STYLE_BOLD), n) > count_set(a, n));
	/* and upright for italic: no synthetic slant even where fontconfig offers one */
	CHECK(memcmp(render1(u, 'A', 1, FONT_STYLE_ITALIC), a, n) == 0);
	fontset_free(u);
	free(a);
	fontset_free(fs);
}

int main(void)
{
	if (access(DEJAVU, R_OK) != 0 || access(UNIFONT, R_OK) != 0) {
		fprintf(stderr, "fonts-dejavu-core and fonts-unifont are needed; skipping\n");
		return 77;
	}
	CHECK(FT_Init_FreeType(&ft) == 0);
	RUN(test_geometry);
	RUN(test_ascii);
	RUN(test_fallback);
	RUN(test_combining);
	RUN(test_psf);
	RUN(test_broken);
	RUN(test_bounded);
	RUN(test_mono);
	RUN(test_set_size);
	RUN(test_styles);
	FT_Done_FreeType(ft);
	FcFini();
	return TESTS_RESULT();
}
