/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rotation (rotate.h) against a straightforward reference: fbcon's placement
 * written out pixel by pixel (fbcon_cw.c, fbcon_ud.c, fbcon_ccw.c: the cell
 * of text row r, column c is at x = xres - (r + 1) * fh, y = c * fw when
 * turned clockwise, ...; fbcon_rotate.h turns each glyph bit exactly).
 */
#include <errno.h>
#include <stdlib.h>

#include "../../daemon/screen/rotate.h"
#include "../../daemon/util/util.h"
#include "tests.h"

/* Where logical pixel (x, y) of the turned screen shows on xres x yres. */
static void ref_place(enum rotation rot, unsigned xres, unsigned yres, unsigned x, unsigned y,
		      unsigned *px, unsigned *py)
{
	switch (rot) {
	case ROTATE_CW: /* fbcon_cw: row y runs down the glass from the right edge */
		*px = xres - 1 - y;
		*py = x;
		break;
	case ROTATE_UD:
		*px = xres - 1 - x;
		*py = yres - 1 - y;
		break;
	case ROTATE_CCW:
		*px = y;
		*py = yres - 1 - x;
		break;
	default:
		*px = x;
		*py = y;
		break;
	}
}

static void test_names(void)
{
	static const struct {
		const char *s;
		int want;
	} cases[] = {
	    {"0", ROTATE_UPRIGHT}, {"1", ROTATE_CW},   {"2", ROTATE_UD},    {"3", ROTATE_CCW},
	    {"90", ROTATE_CW},	   {"180", ROTATE_UD}, {"270", ROTATE_CCW}, {"4", -EINVAL},
	    {"-90", -EINVAL},	   {"", -EINVAL},      {"360", -EINVAL},    {"1 ", -EINVAL},
	    {"cw", -EINVAL},	   {"090", -EINVAL},
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		if (rotate_from_string(cases[i].s) != cases[i].want) {
			fprintf(stderr, "rotate_from_string(\"%s\") = %d, want %d\n", cases[i].s,
				rotate_from_string(cases[i].s), cases[i].want);
			CHECK(0);
		}
	CHECK_EQ_U(rotate_degrees(ROTATE_CCW), 270);
	CHECK(rotate_turn(ROTATE_UPRIGHT, -1) == ROTATE_CCW);
	CHECK(rotate_turn(ROTATE_CCW, 1) == ROTATE_UPRIGHT);
	CHECK(rotate_turn(ROTATE_CW, 5) == ROTATE_UD);
	CHECK(rotate_sideways(ROTATE_CW) && rotate_sideways(ROTATE_CCW));
	CHECK(!rotate_sideways(ROTATE_UD) && !rotate_sideways(ROTATE_UPRIGHT));
}

/* The cell rectangles of fbcon's putcs for a 7x13 font on a 101x67 screen
 * (margins everywhere), and the point mapping back. */
static void test_cells_and_points(void)
{
	const unsigned xres = 101, yres = 67, fw = 7, fh = 13;

	for (int rot = 0; rot < _ROTATE_MAX; rot++) {
		unsigned lw, lh;

		rotate_logical_size(rot, xres, yres, &lw, &lh);
		CHECK_EQ_U(lw, rotate_sideways(rot) ? yres : xres);
		for (unsigned r = 0; r < lh / fh; r++)
			for (unsigned c = 0; c < lw / fw; c++) {
				struct rotate_rect want,
				    got = rotate_rect_to_physical(
					rot, xres, yres,
					(struct rotate_rect){c * fw, r * fh, fw, fh});
				switch (rot) {
				case ROTATE_CW:
					want = (struct rotate_rect){xres - (r + 1) * fh, c * fw, fh,
								    fw};
					break;
				case ROTATE_UD:
					want = (struct rotate_rect){xres - (c + 1) * fw,
								    yres - (r + 1) * fh, fw, fh};
					break;
				case ROTATE_CCW:
					want = (struct rotate_rect){r * fh, yres - (c + 1) * fw, fh,
								    fw};
					break;
				default:
					want = (struct rotate_rect){c * fw, r * fh, fw, fh};
				}
				if (memcmp(&want, &got, sizeof(want)) != 0) {
					fprintf(stderr, "rotation %d cell %u,%u at %u,%u %ux%u\n",
						rot, c, r, got.x, got.y, got.w, got.h);
					CHECK(0);
					return;
				}
			}
		for (unsigned x = 0; x < lw; x++)
			for (unsigned y = 0; y < lh; y++) {
				unsigned px, py, bx, by;

				ref_place(rot, xres, yres, x, y, &px, &py);
				rotate_point_to_logical(rot, xres, yres, px, py, &bx, &by);
				if (bx != x || by != y) {
					fprintf(stderr, "rotation %d: %u,%u -> %u,%u -> %u,%u\n",
						rot, x, y, px, py, bx, by);
					CHECK(0);
					return;
				}
			}
	}
}

/* A block of logical pixels (every pixel its own value) turned with
 * rotate_pixels() to where rotate_rect_to_physical() puts it must be where
 * the reference puts each pixel, at every depth. */
static void test_pixels(void)
{
	const unsigned xres = 53, yres = 37;
	unsigned seed = 17;

	for (unsigned bpp = 1; bpp <= 4; bpp++)
		for (int rot = 0; rot < _ROTATE_MAX; rot++)
			for (unsigned n = 0; n < 40; n++) {
				unsigned lw, lh;

				rotate_logical_size(rot, xres, yres, &lw, &lh);
				unsigned w = 1 + (unsigned)rand_r(&seed) % lw;
				unsigned h = 1 + (unsigned)rand_r(&seed) % lh;
				unsigned x = (unsigned)rand_r(&seed) % (lw - w + 1);
				unsigned y = (unsigned)rand_r(&seed) % (lh - h + 1);
				size_t src_stride = (size_t)w * bpp + 3,
				       stride = (size_t)xres * bpp;
				uint8_t *src = calloc(h, src_stride),
					*screen = calloc(yres, stride);
				uint8_t *block = calloc((size_t)w * h, bpp);
				struct rotate_rect pr = rotate_rect_to_physical(
				    rot, xres, yres, (struct rotate_rect){x, y, w, h});

				for (size_t i = 0; i < (size_t)h * src_stride; i++)
					src[i] = (uint8_t)(i * 7 + 1);
				rotate_pixels(rot, src, src_stride, w, h, bpp, block,
					      (size_t)pr.w * bpp);
				for (unsigned j = 0; j < pr.h; j++)
					memcpy(screen + (pr.y + j) * stride + (size_t)pr.x * bpp,
					       block + (size_t)j * pr.w * bpp, (size_t)pr.w * bpp);
				for (unsigned j = 0; j < h; j++)
					for (unsigned i = 0; i < w; i++) {
						unsigned px, py;

						ref_place(rot, xres, yres, x + i, y + j, &px, &py);
						if (memcmp(screen + py * stride + (size_t)px * bpp,
							   src + j * src_stride + (size_t)i * bpp,
							   bpp) != 0) {
							fprintf(
							    stderr,
							    "bpp %u rotation %d block %u,%u %ux%u: "
							    "pixel %u,%u is not at %u,%u\n",
							    bpp, rot, x, y, w, h, i, j, px, py);
							CHECK(0);
							i = w;
							j = h;
							n = 40;
						}
					}
				free(src);
				free(screen);
				free(block);
			}
}

int main(void)
{
	RUN(test_names);
	RUN(test_cells_and_points);
	RUN(test_pixels);
	return TESTS_RESULT();
}
