/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fontset: one main font (PSF, FreeType or the built-in PSF), the faces
 * of its family for bold and italic, fallback faces for characters the main
 * font lacks, and a bounded cache of coverage maps. The geometry contract is
 * in fontset.h; what this file adds:
 *
 *  - Fonts are opened lazily where that is cheap to defer: fontconfig and
 *    FreeType are only started for a PSF main font when a character needs a
 *    fallback, and the bold and italic faces only when first drawn.
 *  - Fallback: fontconfig's sorted list of fonts for the main pattern
 *    (FcFontSort, taken once) is walked in order for the first font whose
 *    charset has the character and whose cmap really maps it. Walking the
 *    list instead of asking FcFontMatch per character keeps the choice
 *    independent of what was drawn before and costs no fontconfig matching
 *    per character. Answers, negative ones included, are remembered in a
 *    small direct-mapped table; at most FALLBACK_FACES faces are open, the
 *    least recently used one is closed for a new one.
 *  - A name whose family no installed font has falls back to "monospace"
 *    (fontconfig would answer with its default, often proportional, font);
 *    a size in the name ("Mono-14") counts when none is configured.
 *  - Bold and italic: fontconfig is asked for the main family at bold
 *    weight or italic slant, and the answer is judged by the font's own
 *    weight and slant (FcFontList), since fontconfig's 90-synthetic.conf
 *    labels a regular face bold or oblique when it means to fake it. No
 *    bold face: FT_GlyphSlot_Embolden on the regular one (also for fallback
 *    glyphs in bold); no italic face: upright.
 *  - A combining mark comes from the font that drew its base if that font
 *    has it, else from the main font, else from a fallback; a mark no font
 *    has is dropped, never boxed. The base's advance (for marks without
 *    one) is advance.x >> 6, whole pixels for hinted glyphs.
 *  - A fallback face under a FreeType main font is set to the main font's
 *    size and draws on its baseline. Under a PSF main font (no size, no
 *    baseline) it gets the largest pixel size whose ascent + descent fits
 *    the cell height and is centred vertically.
 *  - Underline: FreeType main fonts use the face's underline position (the
 *    centre of the stroke) and thickness scaled by y_scale and rounded,
 *    thickness at least 1; the stroke is moved up into the cell if it would
 *    leave it. PSF fonts use fbcon's monochrome underline: the bottom row,
 *    the bottom two for fonts 10 or more rows high.
 *  - Strikethrough: FreeType main fonts use the OS/2 table's strikeout
 *    position and size (else the underline's thickness at 3/10 of the
 *    ascent); PSF fonts a line h/16 rows thick (at least 1) at row 9/16 of
 *    the cell. fbcon has none: the renderer asks for it with any font.
 *  - The coverage cache is 4-way set associative with LRU replacement and a
 *    byte budget: the number of entries follows from the cell size and is
 *    fixed until the size changes. Clusters longer than CLUSTER_MAX code
 *    points are drawn and keyed as their first CLUSTER_MAX.
 *
 * This is the one file in fonts/ that logs: psf.c returns reasons.
 */
#define LOG_MODULE "font"
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <fontconfig/fontconfig.h>
#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_BITMAP_H
#include FT_SYNTHESIS_H
#include FT_TRUETYPE_TABLES_H

#include "../daemon/util/log.h"
#include "../daemon/util/util.h"
#include "font.h"
#include "fontset-internal.h"
#include "fontset.h"

#define DEFAULT_NAME "monospace"
#define DEFAULT_SIZE 12.0
#define DEFAULT_DPI 96.0

#define CELL_MIN 4u
#define CELL_MAX 256u

#define CLUSTER_MAX 4 /* base + 3 marks */
#define CACHE_WAYS 4u
#define CACHE_BUDGET (4u << 20) /* bytes of coverage maps */
#define CACHE_MIN_ENTRIES 64u
#define CACHE_MAX_ENTRIES 2048u

#define FALLBACK_FACES 8
#define CHAR_CACHE_SIZE 1024u /* power of two */

/* A cluster's glyphs can open fallback faces while its base's face is in
 * use; eviction is LRU, so the base's face stays open if the cluster cannot
 * bring in FALLBACK_FACES others. */
_Static_assert(CLUSTER_MAX < FALLBACK_FACES, "a cluster could evict its own base's face");

enum provider {
	PROVIDER_PSF,
	PROVIDER_FREETYPE,
};

/* A face of the main family: [0] regular, then by FONT_STYLE_BOLD|ITALIC. */
struct style_face {
	FT_Face face; /* NULL until resolved; may alias another style's face */
	bool resolved;
	bool owned;	 /* this slot opened the face and closes it */
	bool synth_bold; /* embolden glyphs of `face` */
};

struct fallback {
	FT_Face face; /* NULL: free slot */
	int font;     /* index in fs->sorted */
	int baseline; /* row of the baseline in the cell */
	uint64_t last_use;
};

struct char_answer {
	uint32_t key;	 /* code point + 1; 0: empty */
	int8_t fallback; /* slot in fs->fallbacks, -1: no font has it */
};

struct cache_entry {
	uint32_t ch[CLUSTER_MAX];
	uint8_t len; /* 0: empty */
	uint8_t style;
	uint8_t cells;
	/* Its coverage map in fs->pixels, given out in the order entries are
	 * first filled: the maps of the glyphs in use lie together, so they
	 * touch as few pages as they fill, not one page each wherever the
	 * hash put their entry. */
	uint16_t block;
	uint64_t last_use;
};

struct fontset {
	enum provider provider;
	struct font *psf;
	char *file; /* main font file, NULL for the built-in font */
	char *family;

	FT_Library ft;
	bool ft_failed;
	FcConfig *fc;
	bool fc_failed;
	FcPattern *pattern; /* substituted request, for styles and fallbacks */

	struct style_face styles[4];
	int file_index; /* face index of the main font in its file */
	double size, dpi;
	bool mono;
	FT_Int32 load_flags;
	FT_Render_Mode render_mode;
	unsigned cell_w, cell_h;
	int ascent;
	int ul_top, ul_thick;
	int st_top, st_thick; /* the strikethrough stroke */

	FcFontSet *sorted;
	uint8_t *sorted_bad; /* per sorted font: cannot be used at this size */
	bool sorted_tried;
	struct fallback fallbacks[FALLBACK_FACES];
	struct char_answer chars[CHAR_CACHE_SIZE];
	unsigned long fc_lookups;

	struct cache_entry *entries;
	uint8_t *pixels;
	size_t slot_bytes;
	unsigned sets;	      /* power of two */
	unsigned blocks_used; /* coverage maps given to entries */
	uint64_t tick;
};

struct canvas {
	uint8_t *px;
	int w, h; /* w is also the stride */
	bool mono;
};

/* Where a glyph comes from. */
struct glyph_src {
	bool psf;
	unsigned psf_glyph;
	FT_Face face;
	FT_UInt index;
	bool embolden;
	int baseline;
};

static FT_F26Dot6 points_to_26_6(double points)
{
	return (FT_F26Dot6)(points * 64.0 + 0.5);
}

static FT_UInt dpi_to_uint(double dpi)
{
	return (FT_UInt)(dpi + 0.5);
}

static const char *ft_strerror(FT_Error e)
{
	const char *s = FT_Error_String(e);
	return s ? s : "not a font FreeType can read, or a damaged one";
}

/* ---- PSF ---------------------------------------------------------------- */

static void psf_draw(const struct font *f, struct canvas *cv, unsigned glyph)
{
	const uint8_t *bits = font_glyph(f, glyph);

	for (unsigned y = 0; y < f->height && (int)y < cv->h; y++)
		for (unsigned x = 0; x < f->width && (int)x < cv->w; x++)
			if (bits[y * f->stride + x / 8] & (0x80 >> (x % 8)))
				cv->px[(size_t)y * cv->w + x] = 255;
}

/* ---- drawing ------------------------------------------------------------ */

static void canvas_max(struct canvas *cv, int x, int y, unsigned v)
{
	uint8_t *p;

	if (x < 0 || y < 0 || x >= cv->w || y >= cv->h)
		return;
	if (cv->mono)
		v = v >= 128 ? 255 : 0;
	p = &cv->px[(size_t)y * cv->w + x];
	if (v > *p)
		*p = (uint8_t)v;
}

static void canvas_blit(FT_Library lib, struct canvas *cv, const FT_Bitmap *bm, int x0, int y0)
{
	const FT_Bitmap *src = bm;
	FT_Bitmap conv;
	unsigned maxv = 255;

	FT_Bitmap_Init(&conv);
	switch (bm->pixel_mode) {
	case FT_PIXEL_MODE_MONO:
	case FT_PIXEL_MODE_GRAY:
	case FT_PIXEL_MODE_BGRA:
		break;
	default:
		/* 2- and 4-bit grey from embedded bitmaps; LCD never occurs
		 * with FT_RENDER_MODE_NORMAL or _MONO. */
		if (FT_Bitmap_Convert(lib, bm, &conv, 1) != 0)
			goto out;
		src = &conv;
		break;
	}
	if (src->pixel_mode == FT_PIXEL_MODE_GRAY && src->num_grays > 1)
		maxv = src->num_grays - 1;

	for (unsigned row = 0; row < src->rows; row++) {
		const uint8_t *line = src->buffer;
		int y = y0 + (int)row;

		if (y < 0 || y >= cv->h)
			continue;
		if (src->pitch < 0)
			line -= (ptrdiff_t)src->pitch * (ptrdiff_t)(src->rows - 1);
		line += (ptrdiff_t)row * src->pitch;
		for (unsigned col = 0; col < src->width; col++) {
			unsigned v;

			switch (src->pixel_mode) {
			case FT_PIXEL_MODE_MONO:
				v = line[col / 8] & (0x80 >> (col % 8)) ? 255 : 0;
				break;
			case FT_PIXEL_MODE_BGRA:
				v = line[col * 4 + 3];
				break;
			default:
				v = maxv == 255 ? line[col] : line[col] * 255u / maxv;
				break;
			}
			if (v)
				canvas_max(cv, x0 + (int)col, y, v);
		}
	}
out:
	FT_Bitmap_Done(lib, &conv);
}

/* Loads and draws one FreeType glyph. The origin is x = 0, or `zero_adv_x`
 * for a glyph with no advance (a combining mark), on row src->baseline.
 * Returns the advance in pixels, or -1 when the glyph cannot be drawn. */
static int ft_draw(struct fontset *fs, struct canvas *cv, const struct glyph_src *src,
		   int zero_adv_x)
{
	FT_GlyphSlot slot;
	int x, adv;

	if (FT_Load_Glyph(src->face, src->index, fs->load_flags) != 0)
		return -1;
	slot = src->face->glyph;
	x = slot->advance.x == 0 ? zero_adv_x : 0;
	if (src->embolden)
		FT_GlyphSlot_Embolden(slot);
	adv = (int)(slot->advance.x >> 6); /* whole pixels when hinted */
	if (slot->format != FT_GLYPH_FORMAT_BITMAP && FT_Render_Glyph(slot, fs->render_mode) != 0)
		return -1;
	canvas_blit(fs->ft, cv, &slot->bitmap, x + slot->bitmap_left,
		    src->baseline - slot->bitmap_top);
	return adv;
}

static void draw_box(struct canvas *cv)
{
	if (cv->w < 3 || cv->h < 3) {
		memset(cv->px, 255, (size_t)cv->w * cv->h);
		return;
	}
	for (int x = 1; x < cv->w - 1; x++) {
		cv->px[(size_t)1 * cv->w + x] = 255;
		cv->px[(size_t)(cv->h - 2) * cv->w + x] = 255;
	}
	for (int y = 1; y < cv->h - 1; y++) {
		cv->px[(size_t)y * cv->w + 1] = 255;
		cv->px[(size_t)y * cv->w + cv->w - 2] = 255;
	}
}

static void draw_underline(const struct fontset *fs, struct canvas *cv)
{
	int top, thick;

	if (fs->provider == PROVIDER_PSF) {
		thick = MIN(cv->h < 10 ? 1 : 2, cv->h);
		top = cv->h - thick;
	} else {
		thick = MIN(fs->ul_thick, cv->h);
		top = fs->ul_top;
		if (top + thick > cv->h)
			top = cv->h - thick;
		if (top < 0)
			top = 0;
	}
	memset(cv->px + (size_t)top * cv->w, 255, (size_t)thick * cv->w);
}

static void draw_strike(const struct fontset *fs, struct canvas *cv)
{
	int top, thick;

	if (fs->provider == PROVIDER_PSF) {
		/* through the middle of lower case letters: row 9 of 16 */
		thick = MAX(cv->h / 16, 1);
		top = cv->h * 9 / 16 - thick / 2;
	} else {
		thick = fs->st_thick;
		top = fs->st_top;
	}
	thick = MIN(MAX(thick, 1), cv->h);
	top = MIN(MAX(top, 0), cv->h - thick);
	memset(cv->px + (size_t)top * cv->w, 255, (size_t)thick * cv->w);
}

/* ---- FreeType and fontconfig -------------------------------------------- */

static int ft_ensure(struct fontset *fs)
{
	if (fs->ft)
		return 0;
	if (fs->ft_failed)
		return -ENOENT;
	if (FT_Init_FreeType(&fs->ft) != 0) {
		fs->ft = NULL;
		fs->ft_failed = true;
		log_warning("Cannot initialise FreeType; only bitmap fonts are available.");
		return -ENOENT;
	}
	return 0;
}

static int fc_ensure(struct fontset *fs)
{
	if (fs->fc)
		return 0;
	if (fs->fc_failed)
		return -ENOENT;
	fs->fc = FcInitLoadConfigAndFonts();
	if (!fs->fc) {
		fs->fc_failed = true;
		log_warning("Cannot load the fontconfig configuration; no fonts by name or "
			    "fallback fonts.");
		return -ENOENT;
	}
	return 0;
}

/* A request pattern for `name` at the fontset's size, substituted as
 * FcFontMatch wants it. With no size configured, a size in the pattern
 * ("Mono-14") is taken as the fontset's size. */
static FcPattern *fc_pattern(struct fontset *fs, const char *name, bool size_given)
{
	FcPattern *p = FcNameParse((const FcChar8 *)name);
	double d;

	if (!p)
		return NULL;
	if (!size_given && FcPatternGetDouble(p, FC_SIZE, 0, &d) == FcResultMatch && d > 0)
		fs->size = d;
	FcPatternDel(p, FC_SIZE);
	FcPatternDel(p, FC_PIXEL_SIZE);
	FcPatternDel(p, FC_DPI);
	FcPatternAddDouble(p, FC_SIZE, fs->size);
	FcPatternAddDouble(p, FC_DPI, fs->dpi);
	FcConfigSubstitute(fs->fc, p, FcMatchPattern);
	FcDefaultSubstitute(p);
	return p;
}

/* Sets a face of the main family to the fontset's size. */
static int ft_set_size(struct fontset *fs, FT_Face face, double points)
{
	FT_UInt dpi = dpi_to_uint(fs->dpi);

	return FT_Set_Char_Size(face, 0, points_to_26_6(points), dpi, dpi) == 0 ? 0 : -EINVAL;
}

struct geometry {
	unsigned cell_w, cell_h;
	int ascent;
	int ul_top, ul_thick;
	int st_top, st_thick;
};

static int div64_round(FT_Pos v)
{
	return (int)(v >= 0 ? (v + 32) / 64 : -((-v + 32) / 64));
}

/* The geometry of fontset.h for a face already set to its size. */
static int ft_geometry(const struct fontset *fs, FT_Face face, struct geometry *ret)
{
	const FT_Size_Metrics *m = &face->size->metrics;
	const TT_OS2 *os2 = FT_IS_SFNT(face) ? FT_Get_Sfnt_Table(face, FT_SFNT_OS2) : NULL;
	FT_Pos cw;
	int ascent, descent, pos, thick, st_pos, st_thick;

	if (FT_Load_Char(face, 'M', fs->load_flags) != 0)
		return -EINVAL;
	cw = (face->glyph->advance.x + 32) >> 6;
	ascent = (int)((m->ascender + 63) >> 6);
	descent = (int)((-m->descender + 63) >> 6);
	if (cw < 1)
		cw = 1;
	if (cw < (FT_Pos)CELL_MIN || cw > (FT_Pos)CELL_MAX || ascent + descent < (int)CELL_MIN ||
	    ascent + descent > (int)CELL_MAX)
		return -ERANGE;

	if (FT_IS_SCALABLE(face) && face->underline_thickness > 0) {
		pos = div64_round(FT_MulFix(face->underline_position, m->y_scale));
		thick = div64_round(FT_MulFix(face->underline_thickness, m->y_scale));
	} else {
		pos = -1;
		thick = 1;
	}
	if (thick < 1)
		thick = 1;
	/* The strikethrough: the font's (OS/2 yStrikeout*: the stroke's top
	 * above the baseline), else the underline's thickness at 3/10 of the
	 * ascent, around the middle of lower case letters. */
	if (os2 && os2->version != 0xffff && os2->yStrikeoutSize > 0) {
		st_pos = div64_round(FT_MulFix(os2->yStrikeoutPosition, m->y_scale));
		st_thick = div64_round(FT_MulFix(os2->yStrikeoutSize, m->y_scale));
	} else {
		st_thick = thick;
		st_pos = ascent * 3 / 10 + st_thick / 2;
	}
	if (st_thick < 1)
		st_thick = 1;
	*ret = (struct geometry){
	    .cell_w = (unsigned)cw,
	    .cell_h = (unsigned)(ascent + descent),
	    .ascent = ascent,
	    .ul_top = ascent - pos - thick / 2,
	    .ul_thick = thick,
	    .st_top = ascent - st_pos,
	    .st_thick = st_thick,
	};
	return 0;
}

static void fontset_apply_geometry(struct fontset *fs, const struct geometry *g)
{
	fs->cell_w = g->cell_w;
	fs->cell_h = g->cell_h;
	fs->ascent = g->ascent;
	fs->ul_top = g->ul_top;
	fs->ul_thick = g->ul_thick;
	fs->st_top = g->st_top;
	fs->st_thick = g->st_thick;
}

/* Opens a FreeType main font; on failure *ret_reason says why. */
static int ft_open_main(struct fontset *fs, const char *path, int index, const char **ret_reason)
{
	struct geometry g;
	FT_Face face;
	FT_Error e;
	int r;

	if (ft_ensure(fs) < 0) {
		*ret_reason = "FreeType is not available";
		return -ENOENT;
	}
	e = FT_New_Face(fs->ft, path, index, &face);
	if (e != 0) {
		*ret_reason = ft_strerror(e);
		return -EINVAL;
	}
	if (ft_set_size(fs, face, fs->size) < 0) {
		FT_Done_Face(face);
		*ret_reason = "the font has no glyphs at this size";
		return -EINVAL;
	}
	r = ft_geometry(fs, face, &g);
	if (r < 0) {
		FT_Done_Face(face);
		*ret_reason = r == -ERANGE ? "its cell at this size is under 4 or over 256 pixels"
					   : "its glyphs cannot be loaded";
		return r;
	}
	fs->provider = PROVIDER_FREETYPE;
	fs->styles[0] = (struct style_face){.face = face, .resolved = true, .owned = true};
	fs->file = xstrdup(path);
	fs->file_index = index;
	if (!fs->family && face->family_name)
		fs->family = xstrdup(face->family_name);
	fontset_apply_geometry(fs, &g);
	return 0;
}

/* Reads the first bytes of a file (through gzip, as psf.c does). */
static int file_sniff(const char *path, uint8_t *buf, size_t size, size_t *ret_n,
		      const char **ret_reason)
{
	struct stat st;
	gzFile gz;
	int fd, n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*ret_reason = strerror(errno);
		return -errno;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		*ret_reason = "not a regular file";
		return -EINVAL;
	}
	gz = gzdopen(fd, "rb");
	if (!gz) {
		close(fd);
		*ret_reason = "cannot read the file";
		return -ENOMEM;
	}
	n = gzread(gz, buf, (unsigned)size);
	gzclose(gz);
	if (n < 0) {
		*ret_reason = "cannot decompress the file";
		return -EINVAL;
	}
	*ret_n = (size_t)n;
	return 0;
}

static bool is_psf_magic(const uint8_t *p, size_t n)
{
	return (n >= 2 && p[0] == 0x36 && p[1] == 0x04) ||
	       (n >= 4 && p[0] == 0x72 && p[1] == 0xb5 && p[2] == 0x4a && p[3] == 0x86);
}

static int open_file(struct fontset *fs, const char *path, const char **ret_reason)
{
	uint8_t head[4];
	size_t n = 0;
	int r;

	r = file_sniff(path, head, sizeof(head), &n, ret_reason);
	if (r < 0)
		return r;
	if (is_psf_magic(head, n)) {
		r = font_load_psf_file(path, &fs->psf, ret_reason);
		if (r < 0) {
			if (r != -EINVAL || !*ret_reason)
				*ret_reason = strerror(-r);
			return r;
		}
		fs->provider = PROVIDER_PSF;
		fs->file = xstrdup(path);
		fs->cell_w = fs->psf->width;
		fs->cell_h = fs->psf->height;
		log_info("Font %s: PSF, %u glyphs of %ux%u.", path, fs->psf->glyph_count,
			 fs->cell_w, fs->cell_h);
		return 0;
	}
	r = ft_open_main(fs, path, 0, ret_reason);
	if (r < 0)
		return r;
	log_info("Font %s: %s, %.1f pt at %.0f dpi, cell %ux%u.", path,
		 fs->family ? fs->family : "(no family name)", fs->size, fs->dpi, fs->cell_w,
		 fs->cell_h);
	return 0;
}

static bool fc_generic_family(const char *f)
{
	static const char *const generic[] = {"monospace", "mono",	"sans-serif", "sans",
					      "serif",	   "system-ui", "emoji",      "math",
					      "fangsong",  "cursive",	"fantasy"};

	for (size_t i = 0; i < ELEMENTSOF(generic); i++)
		if (strcasecmp(f, generic[i]) == 0)
			return true;
	return false;
}

/* Whether the pattern names a family that no installed font has (fontconfig
 * would still match something, usually a proportional default). */
static bool fc_family_missing(struct fontset *fs, const char *name)
{
	FcPattern *p = FcNameParse((const FcChar8 *)name), *q;
	FcObjectSet *os;
	FcFontSet *list;
	FcChar8 *fam;
	bool missing = false;

	if (!p)
		return false;
	if (FcPatternGetString(p, FC_FAMILY, 0, &fam) == FcResultMatch &&
	    !fc_generic_family((const char *)fam)) {
		q = FcPatternCreate();
		FcPatternAddString(q, FC_FAMILY, fam);
		os = FcObjectSetBuild(FC_FAMILY, NULL);
		list = FcFontList(fs->fc, q, os);
		missing = !list || list->nfont == 0;
		if (list)
			FcFontSetDestroy(list);
		FcObjectSetDestroy(os);
		FcPatternDestroy(q);
	}
	FcPatternDestroy(p);
	return missing;
}

static int open_by_name(struct fontset *fs, const char *name, bool size_given)
{
	FcPattern *p, *match;
	FcResult res;
	FcChar8 *file, *fam;
	const char *reason;
	int index = 0, r;
	/* the default name's failure is followed by the built-in font's line */
	const char *next =
	    strcmp(name, DEFAULT_NAME) != 0 ? "; falling back to '" DEFAULT_NAME "'" : "";

	if (fc_ensure(fs) < 0) {
		log_warning("Cannot look font '%s' up without fontconfig%s.", name, next);
		return -ENOENT;
	}
	if (*next && fc_family_missing(fs, name)) {
		log_warning("Font '%s' is not installed%s.", name, next);
		return -ENOENT;
	}
	p = fc_pattern(fs, name, size_given);
	if (!p) {
		log_warning("Cannot parse the font name '%s'%s.", name, next);
		return -EINVAL;
	}
	match = FcFontMatch(fs->fc, p, &res);
	if (!match || FcPatternGetString(match, FC_FILE, 0, &file) != FcResultMatch) {
		log_warning("No font matches '%s'%s.", name, next);
		if (match)
			FcPatternDestroy(match);
		FcPatternDestroy(p);
		return -ENOENT;
	}
	FcPatternGetInteger(match, FC_INDEX, 0, &index);
	if (FcPatternGetString(match, FC_FAMILY, 0, &fam) == FcResultMatch)
		fs->family = xstrdup((const char *)fam);
	r = ft_open_main(fs, (const char *)file, index, &reason);
	if (r < 0) {
		log_warning("Cannot use font %s (matched by '%s'): %s%s.", file, name, reason,
			    next);
		free(fs->family);
		fs->family = NULL;
		FcPatternDestroy(match);
		FcPatternDestroy(p);
		return r;
	}
	log_info("Font '%s': %s (%s, index %d), %.1f pt at %.0f dpi, cell %ux%u.", name,
		 fs->family ? fs->family : "?", file, index, fs->size, fs->dpi, fs->cell_w,
		 fs->cell_h);
	FcPatternDestroy(match);
	fs->pattern = p;
	return 0;
}

static int open_builtin(struct fontset *fs)
{
	int r = font_load_builtin(&fs->psf);

	if (r < 0)
		return r;
	fs->provider = PROVIDER_PSF;
	fs->cell_w = fs->psf->width;
	fs->cell_h = fs->psf->height;
	return 0;
}

/* ---- bold and italic faces ---------------------------------------------- */

static bool fc_same_family(FcPattern *p, const char *family)
{
	FcChar8 *f;

	for (int i = 0; FcPatternGetString(p, FC_FAMILY, i, &f) == FcResultMatch; i++)
		if (FcStrCmpIgnoreCase(f, (const FcChar8 *)family) == 0)
			return true;
	return false;
}

/* Asks fontconfig for the main family in a weight and slant; returns the
 * match if it is of the family, else NULL. */
static FcPattern *fc_match_style(struct fontset *fs, bool bold, bool italic)
{
	FcPattern *p, *match;
	FcResult res;

	if (!fs->family || fc_ensure(fs) < 0)
		return NULL;
	p = FcPatternCreate();
	FcPatternAddString(p, FC_FAMILY, (const FcChar8 *)fs->family);
	FcPatternAddInteger(p, FC_WEIGHT, bold ? FC_WEIGHT_BOLD : FC_WEIGHT_REGULAR);
	FcPatternAddInteger(p, FC_SLANT, italic ? FC_SLANT_ITALIC : FC_SLANT_ROMAN);
	FcPatternAddDouble(p, FC_SIZE, fs->size);
	FcPatternAddDouble(p, FC_DPI, fs->dpi);
	FcConfigSubstitute(fs->fc, p, FcMatchPattern);
	FcDefaultSubstitute(p);
	match = FcFontMatch(fs->fc, p, &res);
	FcPatternDestroy(p);
	if (match && !fc_same_family(match, fs->family)) {
		FcPatternDestroy(match);
		match = NULL;
	}
	return match;
}

/* Opens the face a match names, or reuses the regular face for the same
 * file and index. Returns NULL if it cannot be used. */
static FT_Face style_open(struct fontset *fs, FcPattern *match, bool *ret_owned)
{
	FcChar8 *file;
	int index = 0;
	FT_Face face;

	if (FcPatternGetString(match, FC_FILE, 0, &file) != FcResultMatch)
		return NULL;
	FcPatternGetInteger(match, FC_INDEX, 0, &index);
	if (index == fs->file_index && strcmp((const char *)file, fs->file) == 0) {
		*ret_owned = false;
		return fs->styles[0].face;
	}
	if (FT_New_Face(fs->ft, (const char *)file, index, &face) != 0)
		return NULL;
	if (ft_set_size(fs, face, fs->size) < 0) {
		FT_Done_Face(face);
		return NULL;
	}
	*ret_owned = true;
	return face;
}

/* The weight and slant of the font a match names, as the font is: the
 * match itself says bold and oblique where fontconfig's 90-synthetic.conf
 * asks for synthetic emboldening and slanting of a regular face. */
static void fc_font_style(struct fontset *fs, FcPattern *match, int *ret_weight, int *ret_slant)
{
	FcPattern *q = FcPatternCreate();
	FcObjectSet *os = FcObjectSetBuild(FC_WEIGHT, FC_SLANT, NULL);
	FcFontSet *list = NULL;
	FcChar8 *file;
	int index = 0;

	*ret_weight = FC_WEIGHT_REGULAR;
	*ret_slant = FC_SLANT_ROMAN;
	if (FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch) {
		FcPatternGetInteger(match, FC_INDEX, 0, &index);
		FcPatternAddString(q, FC_FILE, file);
		FcPatternAddInteger(q, FC_INDEX, index);
		list = FcFontList(fs->fc, q, os);
	}
	if (list && list->nfont > 0) {
		FcPatternGetInteger(list->fonts[0], FC_WEIGHT, 0, ret_weight);
		FcPatternGetInteger(list->fonts[0], FC_SLANT, 0, ret_slant);
	}
	if (list)
		FcFontSetDestroy(list);
	FcObjectSetDestroy(os);
	FcPatternDestroy(q);
}

static const struct style_face *style_face(struct fontset *fs, unsigned style)
{
	struct style_face *sf = &fs->styles[style & 3];
	bool bold = style & FONT_STYLE_BOLD, italic = style & FONT_STYLE_ITALIC;
	FcPattern *match;

	if (sf->resolved)
		return sf;
	sf->resolved = true;
	match = fc_match_style(fs, bold, italic);
	if (match) {
		int weight, slant;

		fc_font_style(fs, match, &weight, &slant);
		bool is_bold = weight >= FC_WEIGHT_DEMIBOLD;
		bool is_italic = slant != FC_SLANT_ROMAN;

		if (italic && !is_italic) {
			/* no italic face: upright, as for plain bold */
			FcPatternDestroy(match);
			*sf = *style_face(fs, style & ~(unsigned)FONT_STYLE_ITALIC);
			sf->owned = false;
			return sf;
		}
		sf->face = style_open(fs, match, &sf->owned);
		sf->synth_bold = bold && !is_bold;
		FcPatternDestroy(match);
	}
	if (!sf->face) {
		if (italic) {
			*sf = *style_face(fs, style & ~(unsigned)FONT_STYLE_ITALIC);
			sf->owned = false;
			return sf;
		}
		sf->face = fs->styles[0].face;
		sf->owned = false;
		sf->synth_bold = bold;
	}
	sf->resolved = true;
	return sf;
}

/* ---- fallback faces ----------------------------------------------------- */

static void char_cache_forget(struct fontset *fs, int slot)
{
	for (unsigned i = 0; i < CHAR_CACHE_SIZE; i++)
		if (fs->chars[i].key && fs->chars[i].fallback == slot)
			fs->chars[i].key = 0;
}

/* Sizes a fallback face: the main size for a FreeType main font, else the
 * largest pixel size that fits the cell. */
static int fallback_size(struct fontset *fs, struct fallback *fb)
{
	FT_Face face = fb->face;

	if (fs->provider == PROVIDER_FREETYPE) {
		if (ft_set_size(fs, face, fs->size) < 0)
			return -EINVAL;
		fb->baseline = fs->ascent;
		return 0;
	}
	for (unsigned px = fs->cell_h; px >= 1; px--) {
		int a, d;

		if (FT_Set_Pixel_Sizes(face, 0, px) != 0)
			continue;
		a = (int)((face->size->metrics.ascender + 63) >> 6);
		d = (int)((-face->size->metrics.descender + 63) >> 6);
		if (a + d <= (int)fs->cell_h) {
			fb->baseline = ((int)fs->cell_h - (a + d)) / 2 + a;
			return 0;
		}
	}
	return -EINVAL;
}

static void fallback_close(struct fontset *fs, int slot)
{
	if (!fs->fallbacks[slot].face)
		return;
	FT_Done_Face(fs->fallbacks[slot].face);
	fs->fallbacks[slot].face = NULL;
	char_cache_forget(fs, slot);
}

/* Finds or opens the face of sorted font i; returns its slot or -1. */
static int fallback_open(struct fontset *fs, int i)
{
	struct fallback *fb;
	FcChar8 *file;
	int index = 0, slot = -1;

	for (int s = 0; s < FALLBACK_FACES; s++)
		if (fs->fallbacks[s].face && fs->fallbacks[s].font == i)
			return s;
	if (FcPatternGetString(fs->sorted->fonts[i], FC_FILE, 0, &file) != FcResultMatch)
		return -1;
	FcPatternGetInteger(fs->sorted->fonts[i], FC_INDEX, 0, &index);

	for (int s = 0; s < FALLBACK_FACES; s++) {
		if (!fs->fallbacks[s].face) {
			slot = s;
			break;
		}
		if (slot < 0 || fs->fallbacks[s].last_use < fs->fallbacks[slot].last_use)
			slot = s;
	}
	fallback_close(fs, slot);
	fb = &fs->fallbacks[slot];
	if (FT_New_Face(fs->ft, (const char *)file, index, &fb->face) != 0) {
		fb->face = NULL;
		return -1;
	}
	fb->font = i;
	if (fallback_size(fs, fb) < 0) {
		FT_Done_Face(fb->face);
		fb->face = NULL;
		return -1;
	}
	log_debug("Fallback font %s (index %d) opened.", file, index);
	return slot;
}

static void fallback_sort(struct fontset *fs)
{
	FcPattern *p = fs->pattern;
	FcResult res;

	fs->sorted_tried = true;
	if (ft_ensure(fs) < 0 || fc_ensure(fs) < 0)
		return;
	if (!p)
		p = fc_pattern(fs, DEFAULT_NAME, true);
	if (!p)
		return;
	fs->sorted = FcFontSort(fs->fc, p, FcTrue, NULL, &res);
	if (p != fs->pattern)
		FcPatternDestroy(p);
	if (!fs->sorted)
		return;
	if (fs->sorted->nfont == 0) {
		FcFontSetDestroy(fs->sorted);
		fs->sorted = NULL;
		return;
	}
	fs->sorted_bad = xcalloc((size_t)fs->sorted->nfont, 1);
}

static bool sorted_is_main(const struct fontset *fs, int i)
{
	FcChar8 *file;
	int index = 0;

	if (fs->provider != PROVIDER_FREETYPE ||
	    FcPatternGetString(fs->sorted->fonts[i], FC_FILE, 0, &file) != FcResultMatch)
		return false;
	FcPatternGetInteger(fs->sorted->fonts[i], FC_INDEX, 0, &index);
	return index == fs->file_index && strcmp((const char *)file, fs->file) == 0;
}

/* The fallback face for a code point the main font lacks, or NULL. */
static struct fallback *fallback_find(struct fontset *fs, uint32_t c)
{
	struct char_answer *a = &fs->chars[(c * 2654435761u >> 16) & (CHAR_CACHE_SIZE - 1)];
	int slot = -1;

	if (a->key == c + 1)
		goto done;
	if (!fs->sorted_tried)
		fallback_sort(fs);
	fs->fc_lookups++;
	for (int i = 0; fs->sorted && i < fs->sorted->nfont; i++) {
		FcCharSet *cs;

		if (fs->sorted_bad[i] ||
		    FcPatternGetCharSet(fs->sorted->fonts[i], FC_CHARSET, 0, &cs) !=
			FcResultMatch ||
		    !FcCharSetHasChar(cs, c) || sorted_is_main(fs, i))
			continue;
		slot = fallback_open(fs, i);
		if (slot < 0) {
			fs->sorted_bad[i] = 1;
			continue;
		}
		if (FT_Get_Char_Index(fs->fallbacks[slot].face, c) != 0)
			break;
		slot = -1;
	}
	a->key = c + 1;
	a->fallback = (int8_t)slot;
done:
	if (a->fallback < 0)
		return NULL;
	fs->fallbacks[a->fallback].last_use = ++fs->tick;
	return &fs->fallbacks[a->fallback];
}

/* ---- glyph lookup and rendering ----------------------------------------- */

static bool glyph_find(struct fontset *fs, uint32_t c, unsigned style, struct glyph_src *ret)
{
	struct fallback *fb;
	FT_UInt index;

	if (fs->provider == PROVIDER_PSF) {
		if (font_find_glyph(fs->psf, c, &ret->psf_glyph)) {
			ret->psf = true;
			return true;
		}
	} else {
		const struct style_face *sf = style_face(fs, style);

		index = FT_Get_Char_Index(sf->face, c);
		if (index) {
			*ret = (struct glyph_src){.face = sf->face,
						  .index = index,
						  .embolden = sf->synth_bold,
						  .baseline = fs->ascent};
			return true;
		}
		/* the regular face may have what a style's face lacks */
		index = FT_Get_Char_Index(fs->styles[0].face, c);
		if (index) {
			*ret = (struct glyph_src){.face = fs->styles[0].face,
						  .index = index,
						  .embolden = style & FONT_STYLE_BOLD,
						  .baseline = fs->ascent};
			return true;
		}
	}
	fb = fallback_find(fs, c);
	if (!fb)
		return false;
	index = FT_Get_Char_Index(fb->face, c);
	*ret = (struct glyph_src){
	    .face = fb->face,
	    .index = index,
	    .embolden = fs->provider == PROVIDER_FREETYPE && (style & FONT_STYLE_BOLD),
	    .baseline = fb->baseline,
	};
	return index != 0;
}

/* Draws glyph `src` with its origin per fontset.h; returns its advance in
 * pixels or -1. */
static int glyph_draw(struct fontset *fs, struct canvas *cv, const struct glyph_src *src,
		      int zero_adv_x)
{
	if (src->psf) {
		psf_draw(fs->psf, cv, src->psf_glyph);
		return (int)fs->psf->width;
	}
	return ft_draw(fs, cv, src, zero_adv_x);
}

static void render_cluster(struct fontset *fs, struct canvas *cv, const uint32_t *ch, size_t len,
			   unsigned style)
{
	struct glyph_src src;
	int adv = -1;

	if (ch[0] == 0)
		goto marks_done; /* an empty cell */
	if (glyph_find(fs, ch[0], style, &src))
		adv = glyph_draw(fs, cv, &src, 0);
	if (adv < 0 && fs->psf) {
		/* No font has it: a PSF font shows its own substitute (U+FFFD's
		 * glyph, else '?'), as the kernel console does. */
		psf_draw(fs->psf, cv, font_lookup(fs->psf, ch[0]));
		goto marks_done;
	}
	if (adv < 0) {
		draw_box(cv);
		goto marks_done;
	}
	/* a mark comes from the base's font if it has it, else the usual search */
	for (size_t i = 1; i < len; i++) {
		struct glyph_src mark = src;

		if (src.psf || !(mark.index = FT_Get_Char_Index(src.face, ch[i]))) {
			if (!glyph_find(fs, ch[i], style, &mark))
				continue;
		}
		glyph_draw(fs, cv, &mark, adv);
	}
marks_done:
	if (style & FONT_STYLE_UNDERLINE)
		draw_underline(fs, cv);
	if (style & FONT_STYLE_STRIKE)
		draw_strike(fs, cv);
}

static uint32_t cache_hash(const uint32_t *ch, size_t len, unsigned style, unsigned cells)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h = (h ^ ch[i]) * 16777619u;
		h ^= h >> 15;
	}
	h = (h ^ (style << 2 | cells)) * 16777619u;
	return h ^ h >> 13;
}

const uint8_t *fontset_render(struct fontset *fs, const uint32_t *ch, size_t len, unsigned cells,
			      unsigned style)
{
	struct cache_entry *set, *victim = NULL;
	uint8_t *px;
	unsigned slot;
	struct canvas cv;

	if (len == 0) {
		static const uint32_t space = ' ';
		ch = &space;
		len = 1;
	}
	if (len > CLUSTER_MAX)
		len = CLUSTER_MAX;
	cells = cells >= 2 ? 2 : 1;
	style &= FONT_STYLE_BOLD | FONT_STYLE_ITALIC | FONT_STYLE_UNDERLINE | FONT_STYLE_STRIKE;
	if (fs->provider == PROVIDER_PSF)
		style &= FONT_STYLE_UNDERLINE | FONT_STYLE_STRIKE;

	slot = (cache_hash(ch, len, style, cells) & (fs->sets - 1)) * CACHE_WAYS;
	set = &fs->entries[slot];
	fs->tick++;
	for (unsigned w = 0; w < CACHE_WAYS; w++) {
		struct cache_entry *e = &set[w];

		if (e->len == len && e->style == style && e->cells == cells &&
		    memcmp(e->ch, ch, len * sizeof(*ch)) == 0) {
			e->last_use = fs->tick;
			return fs->pixels + (size_t)e->block * fs->slot_bytes;
		}
		if (!victim || (victim->len && (!e->len || e->last_use < victim->last_use)))
			victim = e;
	}

	if (!victim->len)
		victim->block = (uint16_t)fs->blocks_used++;
	px = fs->pixels + (size_t)victim->block * fs->slot_bytes;
	cv = (struct canvas){
	    .px = px, .w = (int)(cells * fs->cell_w), .h = (int)fs->cell_h, .mono = fs->mono};
	memset(px, 0, (size_t)cv.w * cv.h);
	render_cluster(fs, &cv, ch, len, style);

	memcpy(victim->ch, ch, len * sizeof(*ch));
	victim->len = (uint8_t)len;
	victim->style = (uint8_t)style;
	victim->cells = (uint8_t)cells;
	victim->last_use = fs->tick;
	return px;
}

/* ---- the fontset -------------------------------------------------------- */

/* (Re)allocates the coverage cache for the current cell size. */
static int cache_alloc(struct fontset *fs)
{
	size_t slot_bytes, n, entries = CACHE_MIN_ENTRIES, px_bytes;
	struct cache_entry *e;
	uint8_t *px;

	if (!size_mul3(2, fs->cell_w, fs->cell_h, &slot_bytes))
		return -ENOMEM;
	n = CACHE_BUDGET / slot_bytes;
	while (entries * 2 <= n && entries < CACHE_MAX_ENTRIES)
		entries *= 2;
	/* at least CACHE_MIN_ENTRIES cells, whatever their size */
	if (!size_mul3(entries, slot_bytes, 1, &px_bytes))
		return -ENOMEM;
	e = calloc(entries, sizeof(*e));
	px = malloc(px_bytes);
	if (!e || !px) {
		free(e);
		free(px);
		return -ENOMEM;
	}
	free(fs->entries);
	free(fs->pixels);
	fs->entries = e;
	fs->pixels = px;
	fs->slot_bytes = slot_bytes;
	fs->sets = (unsigned)(entries / CACHE_WAYS);
	fs->blocks_used = 0;
	return 0;
}

int fontset_new(const struct fontset_config *cfg, struct fontset **ret)
{
	struct fontset *fs = xcalloc(1, sizeof(*fs));
	const char *name = cfg->name && *cfg->name ? cfg->name : DEFAULT_NAME;
	bool size_given = cfg->size > 0;
	const char *reason = NULL;
	int r = -ENOENT;

	fs->size = size_given ? cfg->size : DEFAULT_SIZE;
	fs->dpi = cfg->dpi > 0 ? cfg->dpi : DEFAULT_DPI;
	fs->mono = cfg->mono;
	fs->load_flags =
	    FT_LOAD_DEFAULT | (cfg->mono ? FT_LOAD_TARGET_MONO : FT_LOAD_TARGET_NORMAL);
	fs->render_mode = cfg->mono ? FT_RENDER_MODE_MONO : FT_RENDER_MODE_NORMAL;

	if (cfg->file) {
		r = open_file(fs, cfg->file, &reason);
		if (r < 0)
			log_warning("Cannot use font file %s: %s; falling back to font '%s'.",
				    cfg->file, reason, name);
	}
	if (r < 0)
		r = open_by_name(fs, name, size_given);
	if (r < 0 && strcmp(name, DEFAULT_NAME) != 0) {
		fs->size = size_given ? cfg->size : DEFAULT_SIZE;
		r = open_by_name(fs, DEFAULT_NAME, true);
	}
	if (r < 0) {
		log_warning("No usable font found by name; falling back to the built-in font.");
		r = open_builtin(fs);
		if (r < 0) {
			fontset_free(fs);
			return r;
		}
	}
	r = cache_alloc(fs);
	if (r < 0) {
		fontset_free(fs);
		return r;
	}
	*ret = fs;
	return 0;
}

void fontset_free(struct fontset *fs)
{
	if (!fs)
		return;
	for (int s = 0; s < FALLBACK_FACES; s++)
		if (fs->fallbacks[s].face)
			FT_Done_Face(fs->fallbacks[s].face);
	for (int i = 3; i >= 0; i--)
		if (fs->styles[i].owned)
			FT_Done_Face(fs->styles[i].face);
	if (fs->ft)
		FT_Done_FreeType(fs->ft);
	if (fs->sorted)
		FcFontSetDestroy(fs->sorted);
	if (fs->pattern)
		FcPatternDestroy(fs->pattern);
	if (fs->fc)
		FcConfigDestroy(fs->fc);
	font_free(fs->psf);
	free(fs->sorted_bad);
	free(fs->entries);
	free(fs->pixels);
	free(fs->file);
	free(fs->family);
	free(fs);
}

unsigned fontset_cell_width(const struct fontset *fs)
{
	return fs->cell_w;
}

unsigned fontset_cell_height(const struct fontset *fs)
{
	return fs->cell_h;
}

bool fontset_scalable(const struct fontset *fs)
{
	return fs->provider == PROVIDER_FREETYPE;
}

double fontset_size(const struct fontset *fs)
{
	return fs->provider == PROVIDER_FREETYPE ? fs->size : 0;
}

/* Sets every open FreeType face to `points`; fallback faces that cannot
 * take the size are closed. */
static void faces_set_size(struct fontset *fs, double points)
{
	for (int i = 0; i < 4; i++)
		if (fs->styles[i].owned)
			ft_set_size(fs, fs->styles[i].face, points);
}

int fontset_set_size(struct fontset *fs, double points)
{
	struct geometry g;
	double old = fs->size;
	unsigned old_w = fs->cell_w, old_h = fs->cell_h;
	int r;

	if (fs->provider != PROVIDER_FREETYPE)
		return -EOPNOTSUPP;
	if (!(points > 0) || points > 10000)
		return -EINVAL;
	faces_set_size(fs, points);
	r = ft_geometry(fs, fs->styles[0].face, &g);
	if (r < 0) {
		faces_set_size(fs, old);
		return -EINVAL;
	}
	fs->size = points;
	fontset_apply_geometry(fs, &g);
	r = cache_alloc(fs);
	if (r < 0) {
		fs->size = old;
		faces_set_size(fs, old);
		ft_geometry(fs, fs->styles[0].face, &g);
		fontset_apply_geometry(fs, &g);
		fs->cell_w = old_w;
		fs->cell_h = old_h;
		return r;
	}
	for (int s = 0; s < FALLBACK_FACES; s++)
		if (fs->fallbacks[s].face && fallback_size(fs, &fs->fallbacks[s]) < 0)
			fallback_close(fs, s);
	if (fs->sorted_bad)
		memset(fs->sorted_bad, 0, (size_t)fs->sorted->nfont);
	/* negative answers may change at a new size (bitmap-only fonts) */
	for (unsigned i = 0; i < CHAR_CACHE_SIZE; i++)
		if (fs->chars[i].fallback < 0)
			fs->chars[i].key = 0;
	return 0;
}

bool fontset_has_glyph(const struct fontset *fs, uint32_t ucs4)
{
	unsigned g;

	if (fs->provider == PROVIDER_PSF)
		return font_find_glyph(fs->psf, ucs4, &g);
	return FT_Get_Char_Index(fs->styles[0].face, ucs4) != 0;
}

void fontset_get_stats(const struct fontset *fs, struct fontset_stats *ret)
{
	size_t entries = (size_t)fs->sets * CACHE_WAYS, used = 0;
	unsigned open = 0;

	for (size_t i = 0; i < entries; i++)
		if (fs->entries[i].len)
			used++;
	for (int s = 0; s < FALLBACK_FACES; s++)
		if (fs->fallbacks[s].face)
			open++;
	*ret = (struct fontset_stats){
	    .cache_capacity = entries,
	    .cache_used = used,
	    .cache_bytes = entries * (sizeof(struct cache_entry) + fs->slot_bytes),
	    .fallback_open = open,
	    .fallback_max = FALLBACK_FACES,
	    .char_capacity = CHAR_CACHE_SIZE,
	    .fc_lookups = fs->fc_lookups,
	    .fc_loaded = fs->fc != NULL,
	    .ft_loaded = fs->ft != NULL,
	    .main_file = fs->file,
	};
}
