/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cirrus: the BitBLT engine of the Cirrus Logic GD543x/GD5446 ("Alpine"),
 * the card QEMU emulates with -vga cirrus and cirrusfb drives.
 *
 * The engine copies or fills a rectangle of VRAM described by a handful of
 * graphics-controller (GR) registers: width - 1 in bytes (GR20/21, 13 bits),
 * height - 1 in lines (GR22/23), destination and source pitch (GR24-27,
 * 13 bits), destination and source address (GR28-2A, GR2C-2E: 22 bits,
 * VRAM-absolute), mode (GR30), raster operation (GR32), mode extensions
 * (GR33, GD5446) and start/status (GR31: write 0x02 to start; 0x04 then
 * 0x00 resets). It knows nothing about pixels beyond the mode's depth bits:
 * a copy is a byte copy, so x and widths are multiplied by bytes per pixel
 * here, and pitch is the framebuffer's line_length for both sides.
 *
 * Overlap: the engine walks a rectangle either forwards (top line first,
 * left to right) or backwards (mode 0x01: both addresses name the *last*
 * byte of the rectangle and it walks up and to the left). A copy whose
 * destination lies before its source in memory (copy up, or left on the
 * same lines) is safe forwards, anything else backwards, as cirrusfb does.
 *
 * Limits: the width and pitch fields have 13 bits, so line_length must be
 * below 8192 (cirrusfb's visible modes stay under 4800 bytes; a wider
 * virtual screen gets -ENOTSUP), which also keeps any row of a rectangle
 * within one blit of at most 8192 bytes (QEMU drops wider ones). Height:
 * QEMU keeps 13 bits, but how many GR23 has on each real chip is not
 * confirmed here, so tall operations are cut into bands of CIRRUS_MAX_LINES
 * (11 bits), issued top-down for forward blits and bottom-up for backward
 * ones: a band never overwrites lines that a later band has yet to read.
 * Addresses have 22 bits: nothing beyond 4 MiB (or smem_len) is touched; such
 * a request is refused with -EINVAL.
 *
 * Depths: 8, 15/16 and 24 bpp, the ones cirrusfb sets, are tested in QEMU;
 * 32 bpp (mode bits 0x30, fourth colour byte in GR14/15) follows the
 * register facts only, as cirrusfb refuses the depth.
 *
 * Fill: cirrusfb fills with an 8x8 colour-expanded pattern (GR30 0xc0 plus
 * the depth bits) whose foreground and background colours are equal, so the
 * pattern's bits never matter; that works on every GD543x. The GD5446 also
 * has a true solid fill (GR33 bit 2 with the same mode) that fetches no
 * pattern at all: it is used there, with the equal-colour setup kept so the
 * two paths program the same registers. The colour goes into the foreground
 * (GR01/11/13/15) and background (GR00/10/12/14) registers, one byte per
 * byte of the pixel. GR00/GR01 double as VGA set/reset registers; cirrusfb
 * overwrites them the same way in its own fills.
 *
 * Register path. Two routes, tried in this order:
 *  1. PCI BAR1 (/sys/.../resource1), where the chip mirrors the BitBLT
 *     registers at 0x100 + a fixed offset. Debian's kernel
 *     (CONFIG_IO_STRICT_DEVMEM) refuses to map a BAR that cirrusfb holds
 *     unless booted with iomem=relaxed, and a real chip decodes it only with
 *     MMIO enabled in SR17, so the route is checked by writing and reading
 *     back a register before it is trusted.
 *  2. The VGA graphics-controller ports 0x3ce/0x3cf, after ioperm(). Each
 *     register is written with one 16-bit OUT (index in the low byte, value
 *     in the high one) so that nothing can slip between index and value.
 * Both need CAP_SYS_RAWIO and both are closed under kernel lockdown. The
 * log says which one is in use.
 *
 * Sharing: the kernel owns the same registers. consoled keeps its VT in
 * KD_GRAPHICS, where fbcon does not draw, so cirrusfb does not blit while
 * this plugin does; a tool that blits with fbcon active (blitcheck) can
 * race with fbcon's cursor.
 *
 * Sync: GR31 bit 0 is "busy" and bit 1 "start" (QEMU clears both when a
 * blit ends; cirrusfb's sync polls them), and cirrusfb's WaitBLT polls bit
 * 3; idle here means all three clear. QEMU finishes a blit inside the start
 * write, so there the engine is always idle; real chips need the poll, also
 * before registers are reprogrammed for the next operation.
 */
#include <consoled/backend.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define CIRRUS_PCI_VENDOR 0x1013

/* VGA graphics controller: index and data ports; ioperm covers 0x3c0-0x3df */
#define VGA_PORT_BASE 0x3c0
#define VGA_PORT_COUNT 32
#define VGA_GFX_INDEX 0x3ce
#define VGA_GFX_DATA 0x3cf

/* GR registers of the BitBLT engine */
#define GR_BG0 0x00 /* background colour, byte 0 (also VGA set/reset) */
#define GR_FG0 0x01 /* foreground colour, byte 0 (also VGA enable set/reset) */
#define GR_BG1 0x10
#define GR_FG1 0x11
#define GR_BG2 0x12
#define GR_FG2 0x13
#define GR_BG3 0x14
#define GR_FG3 0x15
#define GR_WIDTH_LO 0x20
#define GR_WIDTH_HI 0x21
#define GR_HEIGHT_LO 0x22
#define GR_HEIGHT_HI 0x23
#define GR_DST_PITCH_LO 0x24
#define GR_DST_PITCH_HI 0x25
#define GR_SRC_PITCH_LO 0x26
#define GR_SRC_PITCH_HI 0x27
#define GR_DST_ADDR_LO 0x28
#define GR_DST_ADDR_MID 0x29
#define GR_DST_ADDR_HI 0x2a
#define GR_SRC_ADDR_LO 0x2c
#define GR_SRC_ADDR_MID 0x2d
#define GR_SRC_ADDR_HI 0x2e
#define GR_MODE 0x30
#define GR_STATUS 0x31
#define GR_ROP 0x32
#define GR_MODE_EXT 0x33

/* GR30 */
#define MODE_BACKWARDS 0x01
#define MODE_DEPTH_8 0x00
#define MODE_DEPTH_16 0x10
#define MODE_DEPTH_24 0x20
#define MODE_DEPTH_32 0x30
#define MODE_PATTERN 0x40
#define MODE_COLOR_EXPAND 0x80
/* GR31 */
#define STATUS_BUSY 0x01
#define STATUS_START 0x02
#define STATUS_RESET 0x04
#define STATUS_PROGRESS 0x08
#define STATUS_BUSY_MASK (STATUS_BUSY | STATUS_START | STATUS_PROGRESS)
/* GR32 */
#define ROP_SRC 0x0d
/* GR33 (GD5446) */
#define MODE_EXT_SOLID_FILL 0x04

/* BAR1: the BitBLT registers start at 0x100; see cirrus_mmio_offset() */
#define MMIO_BLT_BASE 0x100
#define MMIO_MAP_LEN 0x1000

/* Engine limits (see the header comment) */
#define CIRRUS_MAX_PITCH 8191u
#define CIRRUS_MAX_LINES 2048u
#define CIRRUS_ADDR_SPACE (4u << 20)

/* How long an operation waits for the previous one before giving up, and
 * how long a poll spins before it starts sleeping between reads. */
#define CIRRUS_IDLE_TIMEOUT_USEC 100000u
#define CIRRUS_SPIN_USEC 50u
#define CIRRUS_POLL_SLEEP_NSEC 20000L

struct cirrus {
	struct consoled_backend base; /* first: consoled hands it back to us */
	const struct consoled_host *host;
	bool simulate_hang; /* CONSOLED_BACKEND_TEST_HANG */
	bool solid_fill;    /* GD5446: GR33 solid fill */

	/* register path: mmio when BAR1 answered, else the ports */
	volatile uint8_t *mmio_map;
	bool ports;

	/* the mode */
	uint32_t bytes_per_pixel;
	uint32_t line_length;
	uint32_t line_pixels; /* pixels that fit in a line */
	uint32_t vram_size;   /* bytes the engine may address */
	uint8_t depth_mode;   /* GR30 depth bits */
};

#define cirrus_log(c, prio, ...) (c)->host->log((c)->host->userdata, (prio), __VA_ARGS__)

static struct cirrus *to_cirrus(struct consoled_backend *b)
{
	return (struct cirrus *)b;
}

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Where BAR1 mirrors a GR register (QEMU's CIRRUS_MMIO_* layout, which
 * follows the chip): the colours come first, byte by byte, then GR20-GR33
 * in order from 0x08, and the status register at 0x40. */
static unsigned cirrus_mmio_offset(uint8_t gr)
{
	switch (gr) {
	case GR_BG0:
		return 0x00;
	case GR_BG1:
		return 0x01;
	case GR_BG2:
		return 0x02;
	case GR_BG3:
		return 0x03;
	case GR_FG0:
		return 0x04;
	case GR_FG1:
		return 0x05;
	case GR_FG2:
		return 0x06;
	case GR_FG3:
		return 0x07;
	case GR_STATUS:
		return 0x40;
	default:
		return (unsigned)gr - 0x18u; /* GR20-GR33 */
	}
}

static void cirrus_write(struct cirrus *c, uint8_t gr, uint8_t value)
{
	if (c->mmio_map)
		c->mmio_map[MMIO_BLT_BASE + cirrus_mmio_offset(gr)] = value;
	else
		outw((uint16_t)(value << 8 | gr), VGA_GFX_INDEX);
}

static uint8_t cirrus_read(struct cirrus *c, uint8_t gr)
{
	if (c->mmio_map)
		return c->mmio_map[MMIO_BLT_BASE + cirrus_mmio_offset(gr)];
	outb(gr, VGA_GFX_INDEX);
	return inb(VGA_GFX_DATA);
}

/* Polls GR31 until the engine is idle, at most timeout_usec; returns
 * whether it went idle and the last status. With simulate_hang (sync()
 * under the test switch) it never does. */
static bool cirrus_poll_idle(struct cirrus *c, uint32_t timeout_usec, bool simulate_hang,
			     uint8_t *ret_status)
{
	uint64_t start = now_usec(), elapsed;
	uint8_t status;

	for (;;) {
		status = cirrus_read(c, GR_STATUS);
		if (!(status & STATUS_BUSY_MASK) && !simulate_hang)
			break;
		elapsed = now_usec() - start;
		if (elapsed >= timeout_usec) {
			*ret_status = status;
			return false;
		}
		/* a blit takes microseconds; past that, don't hog a CPU */
		if (elapsed >= CIRRUS_SPIN_USEC) {
			struct timespec ts = {0, CIRRUS_POLL_SLEEP_NSEC};

			nanosleep(&ts, NULL);
		}
	}
	*ret_status = status;
	return true;
}

static int cirrus_wait_idle(struct cirrus *c, uint32_t timeout_usec, bool simulate_hang,
			    const char *what)
{
	uint8_t status;

	if (cirrus_poll_idle(c, timeout_usec, simulate_hang, &status))
		return 0;
	cirrus_log(c, LOG_ERR, "BitBLT engine still busy after %u us (%s, GR31=%#04x%s)",
		   timeout_usec, what, status, simulate_hang ? ", simulated hang" : "");
	return -ETIMEDOUT;
}

/* Programs and starts one blit. dst and src are VRAM addresses (of the last
 * byte for backward blits), width in bytes, lines in lines. */
static int cirrus_start(struct cirrus *c, uint32_t dst, uint32_t src, uint32_t width,
			uint32_t lines, uint8_t mode, uint8_t mode_ext)
{
	uint32_t w = width - 1, h = lines - 1, pitch = c->line_length;
	int r;

	/* the registers belong to the running blit until it is done */
	r = cirrus_wait_idle(c, CIRRUS_IDLE_TIMEOUT_USEC, false, "before a blit");
	if (r < 0)
		return r;

	cirrus_write(c, GR_WIDTH_LO, (uint8_t)w);
	cirrus_write(c, GR_WIDTH_HI, (uint8_t)(w >> 8));
	cirrus_write(c, GR_HEIGHT_LO, (uint8_t)h);
	cirrus_write(c, GR_HEIGHT_HI, (uint8_t)(h >> 8));
	/* the kernel may have used the engine while our VT was away: the
	 * pitches are written every time rather than cached */
	cirrus_write(c, GR_DST_PITCH_LO, (uint8_t)pitch);
	cirrus_write(c, GR_DST_PITCH_HI, (uint8_t)(pitch >> 8));
	cirrus_write(c, GR_SRC_PITCH_LO, (uint8_t)pitch);
	cirrus_write(c, GR_SRC_PITCH_HI, (uint8_t)(pitch >> 8));
	cirrus_write(c, GR_DST_ADDR_LO, (uint8_t)dst);
	cirrus_write(c, GR_DST_ADDR_MID, (uint8_t)(dst >> 8));
	cirrus_write(c, GR_DST_ADDR_HI, (uint8_t)(dst >> 16));
	cirrus_write(c, GR_SRC_ADDR_LO, (uint8_t)src);
	cirrus_write(c, GR_SRC_ADDR_MID, (uint8_t)(src >> 8));
	cirrus_write(c, GR_SRC_ADDR_HI, (uint8_t)(src >> 16));
	cirrus_write(c, GR_MODE, mode);
	cirrus_write(c, GR_ROP, ROP_SRC);
	/* GR33 exists with this meaning on the GD5446 only; older chips keep
	 * whatever the BIOS left there, as under cirrusfb */
	if (c->solid_fill)
		cirrus_write(c, GR_MODE_EXT, mode_ext);
	cirrus_write(c, GR_STATUS, STATUS_START);
	return 0;
}

/* Is the w x h rectangle at (x, y) inside the memory the engine may touch? */
static int cirrus_check_rect(struct cirrus *c, const char *what, uint32_t x, uint32_t y, uint32_t w,
			     uint32_t h)
{
	uint64_t end =
	    ((uint64_t)y + h - 1) * c->line_length + ((uint64_t)x + w) * c->bytes_per_pixel;

	if ((uint64_t)x + w > c->line_pixels || end > c->vram_size) {
		cirrus_log(c, LOG_ERR, "%s of %ux%u at %u,%u is outside the %u bytes of VRAM", what,
			   w, h, x, y, c->vram_size);
		return -EINVAL;
	}
	return 0;
}

static int cirrus_copy(struct consoled_backend *b, uint32_t sx, uint32_t sy, uint32_t dx,
		       uint32_t dy, uint32_t w, uint32_t h)
{
	struct cirrus *c = to_cirrus(b);
	uint32_t row_bytes = w * c->bytes_per_pixel, ll = c->line_length;
	bool backwards;
	int r;

	if (w == 0 || h == 0 || (sx == dx && sy == dy))
		return 0;
	r = cirrus_check_rect(c, "copy source", sx, sy, w, h);
	if (r < 0)
		return r;
	r = cirrus_check_rect(c, "copy destination", dx, dy, w, h);
	if (r < 0)
		return r;

	/* rows never straddle lines, so comparing (y, x) compares addresses */
	backwards = dy > sy || (dy == sy && dx > sx);

	for (uint32_t done = 0; done < h;) {
		uint32_t lines = h - done < CIRRUS_MAX_LINES ? h - done : CIRRUS_MAX_LINES;
		/* forward bands from the top, backward ones from the bottom */
		uint32_t first = backwards ? h - done - lines : done;
		uint32_t src = (sy + first) * ll + sx * c->bytes_per_pixel;
		uint32_t dst = (dy + first) * ll + dx * c->bytes_per_pixel;

		if (backwards) {
			src += (lines - 1) * ll + row_bytes - 1;
			dst += (lines - 1) * ll + row_bytes - 1;
		}
		r = cirrus_start(c, dst, src, row_bytes, lines, backwards ? MODE_BACKWARDS : 0, 0);
		if (r < 0)
			return r;
		done += lines;
	}
	return 0;
}

static int cirrus_fill(struct consoled_backend *b, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
		       uint32_t pixel)
{
	static const uint8_t fg[4] = {GR_FG0, GR_FG1, GR_FG2, GR_FG3};
	static const uint8_t bg[4] = {GR_BG0, GR_BG1, GR_BG2, GR_BG3};
	struct cirrus *c = to_cirrus(b);
	uint8_t mode = MODE_COLOR_EXPAND | MODE_PATTERN | c->depth_mode;
	int r;

	if (w == 0 || h == 0)
		return 0;
	r = cirrus_check_rect(c, "fill", x, y, w, h);
	if (r < 0)
		return r;

	/* the colour registers may still feed a running fill */
	r = cirrus_wait_idle(c, CIRRUS_IDLE_TIMEOUT_USEC, false, "before a fill");
	if (r < 0)
		return r;
	for (uint32_t i = 0; i < c->bytes_per_pixel; i++) {
		cirrus_write(c, fg[i], (uint8_t)(pixel >> (8 * i)));
		cirrus_write(c, bg[i], (uint8_t)(pixel >> (8 * i)));
	}

	for (uint32_t done = 0; done < h;) {
		uint32_t lines = h - done < CIRRUS_MAX_LINES ? h - done : CIRRUS_MAX_LINES;
		uint32_t dst = (y + done) * c->line_length + x * c->bytes_per_pixel;

		/* source 0: the pattern address, unread by a solid fill and
		 * irrelevant to an equal-colour expansion */
		r = cirrus_start(c, dst, 0, w * c->bytes_per_pixel, lines, mode,
				 MODE_EXT_SOLID_FILL);
		if (r < 0)
			return r;
		done += lines;
	}
	return 0;
}

static int cirrus_sync(struct consoled_backend *b, uint32_t timeout_usec)
{
	struct cirrus *c = to_cirrus(b);

	return cirrus_wait_idle(c, timeout_usec, c->simulate_hang, "sync");
}

static int cirrus_reset(struct consoled_backend *b)
{
	struct cirrus *c = to_cirrus(b);

	/* the engine resets on the falling edge of GR31 bit 2 */
	cirrus_write(c, GR_STATUS, STATUS_RESET);
	cirrus_write(c, GR_STATUS, 0);
	return cirrus_wait_idle(c, CIRRUS_IDLE_TIMEOUT_USEC, false, "after a reset");
}

/* Takes over the mode: the depth's mode bits and the geometry limits; on
 * -ENOTSUP the previous mode stays. */
static int cirrus_set_mode(struct cirrus *c, const struct consoled_fb_info *fb)
{
	uint8_t depth_mode;

	switch (fb->bits_per_pixel) {
	case 8:
		depth_mode = MODE_DEPTH_8;
		break;
	case 15:
	case 16:
		depth_mode = MODE_DEPTH_16;
		break;
	case 24:
		depth_mode = MODE_DEPTH_24;
		break;
	case 32:
		depth_mode = MODE_DEPTH_32;
		break;
	default:
		cirrus_log(c, LOG_WARNING, "No BitBLT at %u bits per pixel", fb->bits_per_pixel);
		return -ENOTSUP;
	}
	if (fb->line_length == 0 || fb->line_length > CIRRUS_MAX_PITCH) {
		cirrus_log(c, LOG_WARNING, "Line length %u is beyond the BitBLT pitch (%u)",
			   fb->line_length, CIRRUS_MAX_PITCH);
		return -ENOTSUP;
	}
	c->depth_mode = depth_mode;
	c->bytes_per_pixel = (fb->bits_per_pixel + 7) / 8;
	c->line_length = fb->line_length;
	c->line_pixels = fb->line_length / c->bytes_per_pixel;
	/* cirrusfb maps VRAM from offset 0, so framebuffer offsets are VRAM
	 * addresses; the engine reaches the first 4 MiB */
	c->vram_size = fb->smem_len < CIRRUS_ADDR_SPACE ? fb->smem_len : CIRRUS_ADDR_SPACE;
	return 0;
}

static int cirrus_mode_changed(struct consoled_backend *b, const struct consoled_fb_info *fb)
{
	struct cirrus *c = to_cirrus(b);
	int r;

	r = cirrus_wait_idle(c, CIRRUS_IDLE_TIMEOUT_USEC, false, "before a mode change");
	if (r < 0)
		return r;
	return cirrus_set_mode(c, fb);
}

/* Does the register path answer? Writes two patterns to the destination
 * pitch (a plain read/write register that every blit rewrites) and reads
 * them back, once a blit the kernel may have left running is done (a path
 * that does not answer reads as busy: the wait is bounded and silent). */
static bool cirrus_registers_answer(struct cirrus *c)
{
	uint8_t saved, status;
	bool ok = true;

	(void)cirrus_poll_idle(c, CIRRUS_IDLE_TIMEOUT_USEC, false, &status);
	saved = cirrus_read(c, GR_DST_PITCH_LO);

	cirrus_write(c, GR_DST_PITCH_LO, 0x5a);
	ok = ok && cirrus_read(c, GR_DST_PITCH_LO) == 0x5a;
	cirrus_write(c, GR_DST_PITCH_LO, 0xa5);
	ok = ok && cirrus_read(c, GR_DST_PITCH_LO) == 0xa5;
	cirrus_write(c, GR_DST_PITCH_LO, saved);
	return ok;
}

/* Route 1: the BitBLT registers in PCI BAR1. Non-fatal: on failure the
 * ports are used. */
static void cirrus_map_bar1(struct cirrus *c, const struct consoled_fb_info *fb)
{
	char path[96];
	struct stat st;
	void *p;
	int fd;

	if (fb->pci_vendor == 0 || fstat(fb->fd, &st) < 0 || !S_ISCHR(st.st_mode))
		return;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/resource1", major(st.st_rdev),
		 minor(st.st_rdev));
	fd = open(path, O_RDWR | O_CLOEXEC | O_SYNC);
	if (fd < 0) {
		cirrus_log(c, LOG_DEBUG, "Cannot open %s: %m; using the VGA ports", path);
		return;
	}
	if (fstat(fd, &st) < 0 || st.st_size < MMIO_MAP_LEN) {
		cirrus_log(c, LOG_DEBUG, "%s is not a register window; using the VGA ports", path);
		close(fd);
		return;
	}
	p = mmap(NULL, MMIO_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		/* EINVAL while cirrusfb holds the BAR, unless iomem=relaxed */
		cirrus_log(c, LOG_DEBUG,
			   "Cannot map BAR1 (%s): %m (a kernel with CONFIG_IO_STRICT_DEVMEM "
			   "allows it with iomem=relaxed); using the VGA ports",
			   path);
		close(fd);
		return;
	}
	close(fd);
	c->mmio_map = p;
	if (!cirrus_registers_answer(c)) {
		cirrus_log(c, LOG_DEBUG,
			   "The BitBLT registers do not answer in BAR1 (MMIO off in SR17?); "
			   "using the VGA ports");
		munmap(p, MMIO_MAP_LEN);
		c->mmio_map = NULL;
	}
}

static void cirrus_release(struct cirrus *c)
{
	if (c->mmio_map)
		munmap((void *)c->mmio_map, MMIO_MAP_LEN);
	if (c->ports)
		ioperm(VGA_PORT_BASE, VGA_PORT_COUNT, 0);
	free(c);
}

static void cirrus_destroy(struct consoled_backend *b)
{
	struct cirrus *c = to_cirrus(b);

	/* nothing may still write into VRAM the daemon is about to reuse */
	(void)cirrus_wait_idle(c, CIRRUS_IDLE_TIMEOUT_USEC, false, "at exit");
	cirrus_release(c);
}

/* Its own register mapping goes and the ports are given back (ioperm()
 * changes only this process's permissions): nothing reaches the card. */
static void cirrus_forget(struct consoled_backend *b)
{
	cirrus_release(to_cirrus(b));
}

static const struct consoled_backend_ops cirrus_ops = {
    .struct_size = sizeof(struct consoled_backend_ops),
    .copy = cirrus_copy,
    .fill = cirrus_fill,
    .sync = cirrus_sync,
    .destroy = cirrus_destroy,
    .reset = cirrus_reset,
    .mode_changed = cirrus_mode_changed,
    .forget = cirrus_forget,
};

static bool cirrus_pci_device_has_blt(uint16_t device)
{
	switch (device) {
	case 0x00a0: /* GD5430 */
	case 0x00a8: /* GD5434 */
	case 0x00ac: /* GD5436 */
	case 0x00b8: /* GD5446 */
		return true;
	default:
		return false;
	}
}

static int cirrus_probe(const struct consoled_fb_info *fb)
{
	if (fb->pci_vendor == CIRRUS_PCI_VENDOR)
		return cirrus_pci_device_has_blt(fb->pci_device) ? 100 : 0;
	/* no PCI identity: trust cirrusfb's ids, except the Laguna's
	 * different engine */
	if (fb->pci_vendor == 0 && strncmp(fb->id, "CL ", 3) == 0 &&
	    strncmp(fb->id, "CL Laguna", 9) != 0)
		return 50;
	return 0;
}

static int cirrus_create(const struct consoled_fb_info *fb, const struct consoled_host *host,
			 struct consoled_backend **ret)
{
	bool has_test_flags;
	struct cirrus *c;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->base.ops = &cirrus_ops;
	c->host = host;
	has_test_flags = host->struct_size >=
			 offsetof(struct consoled_host, test_flags) + sizeof(host->test_flags);
	c->simulate_hang = has_test_flags && (host->test_flags & CONSOLED_BACKEND_TEST_HANG);
	c->solid_fill = fb->pci_vendor == CIRRUS_PCI_VENDOR && fb->pci_device == 0x00b8;

	r = cirrus_set_mode(c, fb);
	if (r < 0)
		goto err;

	cirrus_map_bar1(c, fb);
	if (!c->mmio_map) {
		if (ioperm(VGA_PORT_BASE, VGA_PORT_COUNT, 1) < 0) {
			r = -errno;
			cirrus_log(c, LOG_ERR, "Cannot reach the VGA ports (ioperm): %m");
			goto err;
		}
		c->ports = true;
		if (!cirrus_registers_answer(c)) {
			cirrus_log(c, LOG_ERR,
				   "The BitBLT registers do not answer at the VGA ports "
				   "(is this card the VGA device?)");
			r = -ENODEV;
			goto err;
		}
	}

	/* take the engine idle, resetting it if something left it busy */
	if (cirrus_wait_idle(c, CIRRUS_IDLE_TIMEOUT_USEC, false, "at start") < 0) {
		r = cirrus_reset(&c->base);
		if (r < 0)
			goto err;
	}

	cirrus_log(c, LOG_INFO, "GD54xx BitBLT through %s%s, %u bpp, pitch %u, %u KiB",
		   c->mmio_map ? "PCI BAR1 MMIO" : "VGA ports 0x3ce/0x3cf",
		   c->solid_fill ? " (solid fill)" : "", fb->bits_per_pixel, c->line_length,
		   c->vram_size / 1024);
	*ret = &c->base;
	return 0;

err:
	cirrus_release(c);
	return r;
}

const struct consoled_backend_plugin consoled_backend_plugin = {
    .abi_major = CONSOLED_BACKEND_ABI_MAJOR,
    .abi_minor = CONSOLED_BACKEND_ABI_MINOR,
    .struct_size = sizeof(struct consoled_backend_plugin),
    .name = "cirrus",
    .version = "1",
    .description = "Cirrus Logic GD543x/GD5446 BitBLT (cirrusfb; QEMU -vga cirrus)",
    .probe = cirrus_probe,
    .create = cirrus_create,
};
