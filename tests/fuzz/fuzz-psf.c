/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the PSF parser (font_load_psf_buffer) and for what a
 * --font-file goes through after it: gzip'ed input through
 * font_load_psf_file, and a font that parses through the fontset's content
 * detection and PSF provider (lookups and coverage maps of the glyphs its
 * table claims). Whatever parses must answer every lookup with a glyph
 * inside the font; a malformed font must come with a reason.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../daemon/util/log.h"
#include "../../fonts/font.h"
#include "../../fonts/fontset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Code points that hit the interesting parts of a table: ASCII, the
 * fallback characters, a sequence start, the BMP's end, astral, too big. */
static const uint32_t probes[] = {0,	   ' ',	    '?',      'A',	0x7f,
				  0xe9,	   0x263a,  0xfffd,   0xfffe,	0xffff,
				  0x10000, 0x1f600, 0x10ffff, 0x110000, 0xffffffff};

static void check_font(const struct font *f)
{
	unsigned sum = 0;

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		unsigned g = font_lookup(f, probes[i]);
		const uint8_t *bits;

		if (g >= f->glyph_count)
			__builtin_trap();
		bits = font_glyph(f, g);
		for (unsigned k = 0; k < f->glyph_size; k++)
			sum += bits[k];
	}
	for (size_t i = 0; i < f->astral_count; i++)
		if (f->astral[i].glyph >= f->glyph_count)
			__builtin_trap();
	(void)sum;
}

/* The input as a file, for the paths that take a file name. */
static int memfd_path(const uint8_t *data, size_t size, char *path, size_t n)
{
	int fd = memfd_create("fuzz-psf", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	snprintf(path, n, "/proc/self/fd/%d", fd);
	return fd;
}

static void check_fontset(const char *path, const struct font *f)
{
	struct fontset_config cfg = {.file = path};
	struct fontset *fs;

	if (fontset_new(&cfg, &fs) < 0)
		__builtin_trap();
	if (fontset_cell_width(fs) != f->width || fontset_cell_height(fs) != f->height)
		__builtin_trap();
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		uint32_t seq[2] = {probes[i],
				   probes[(i + 3) % (sizeof(probes) / sizeof(probes[0]))]};

		/* only what the font has: anything else would ask fontconfig */
		if (!fontset_has_glyph(fs, seq[0]))
			continue;
		fontset_render(fs, seq, fontset_has_glyph(fs, seq[1]) ? 2 : 1, 2,
			       FONT_STYLE_UNDERLINE);
	}
	fontset_free(fs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct font *f = NULL;
	const char *reason = NULL;
	char path[64];
	bool gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
	int fd;

	log_set_max_level(LOG_ERR);
	if (font_load_psf_buffer(data, size, &f, &reason) == 0) {
		check_font(f);
	} else if (!reason) {
		__builtin_trap();
	}
	if (!f && !gz)
		return 0;

	fd = memfd_path(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	if (gz) {
		font_free(f);
		f = NULL;
		if (font_load_psf_file(path, &f, &reason) == 0)
			check_font(f);
	}
	if (f)
		check_fontset(path, f);
	font_free(f);
	close(fd);
	return 0;
}
