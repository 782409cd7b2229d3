/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * What the backend tests share: a fake ATI framebuffer and plugin
 * directories.
 *
 * The fake device is a memfd laid out as /dev/fbN of radeonfb or aty128fb:
 * smem_len bytes of "VRAM", then the register window at the next page, where
 * the daemon's own host_map_mmio() maps it (accel_flags is 0, so no ioctl).
 * The registers are RAM: the plugins' writes stay there to be read back, and
 * the status registers are preset to "64 FIFO slots free, not busy", so the
 * engine always answers as idle.
 *
 * Plugin directories are made under /tmp with copies of the plugins built in
 * this tree (PLUGIN_BUILD_DIR/NAME/NAME.so). The loader wants root-owned
 * files, so the tests run as root (they exit 77, skipped, otherwise).
 */
#include <endian.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../daemon/devices/fbdev.h"

#define FAKE_XRES 640u
#define FAKE_YRES 480u
#define FAKE_BPP 4u
#define FAKE_PITCH (FAKE_XRES * FAKE_BPP)
#define FAKE_VRAM (4u << 20)		    /* 1638 lines of 2560 bytes */
#define FAKE_MMIO_LEN 0x4000u		    /* radeonfb's window; aty128fb's is 8 KiB */
#define FAKE_LINES (FAKE_VRAM / FAKE_PITCH) /* the most the fake driver gives */

/* The status registers (GUI_STAT, RBBM_STATUS): free FIFO slots, bit 31 busy. */
#define FAKE_R128_GUI_STAT 0x1740u
#define FAKE_RADEON_RBBM_STATUS 0x0e40u

struct fake_fb {
	struct fbdev fb;
	volatile uint8_t *regs; /* the test's view of the register window */
	size_t regs_len;
};

static inline uint32_t fake_reg(const struct fake_fb *f, uint32_t reg)
{
	/* the chips' registers are little-endian, whatever the CPU's order */
	return le32toh(*(const volatile uint32_t *)(f->regs + reg));
}

static inline void fake_set_reg(struct fake_fb *f, uint32_t reg, uint32_t value)
{
	*(volatile uint32_t *)(f->regs + reg) = htole32(value);
}

/* A 640x480, 32 bpp framebuffer with a virtual screen as tall as the
 * visible one (the mode before consoled's scroller grows it). */
static inline int fake_fb_init(struct fake_fb *f, const char *id)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t mmio_off = (FAKE_VRAM + page - 1) & ~(page - 1);
	size_t map_len = (FAKE_MMIO_LEN + page - 1) & ~(page - 1);
	int fd;

	memset(f, 0, sizeof(*f));
	fd = memfd_create("fake-fb", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)(mmio_off + map_len)) < 0)
		return -1;
	f->fb.fd = fd;
	f->fb.path = (char *)"/dev/fake-fb";
	snprintf(f->fb.fix.id, sizeof(f->fb.fix.id), "%s", id);
	f->fb.fix.smem_start = 0xe0000000;
	f->fb.fix.smem_len = FAKE_VRAM;
	f->fb.fix.mmio_start = 0xfebf0000;
	f->fb.fix.mmio_len = FAKE_MMIO_LEN;
	f->fb.fix.line_length = FAKE_PITCH;
	f->fb.fix.visual = FB_VISUAL_TRUECOLOR;
	f->fb.fix.ypanstep = 1;
	f->fb.var.xres = f->fb.var.xres_virtual = FAKE_XRES;
	f->fb.var.yres = f->fb.var.yres_virtual = FAKE_YRES;
	f->fb.var.bits_per_pixel = 8 * FAKE_BPP;
	f->fb.saved_var = f->fb.var;
	f->fb.line_length = FAKE_PITCH;
	f->fb.format.bits_per_pixel = 8 * FAKE_BPP;
	f->fb.format.bytes_per_pixel = FAKE_BPP;
	f->regs = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)mmio_off);
	if (f->regs == MAP_FAILED)
		return -1;
	f->regs_len = map_len;
	/* Idle: every FIFO slot free, not busy (both chips' status registers). */
	fake_set_reg(f, FAKE_R128_GUI_STAT, 64);
	fake_set_reg(f, FAKE_RADEON_RBBM_STATUS, 64);
	return 0;
}

static inline void fake_fb_done(struct fake_fb *f)
{
	munmap((void *)f->regs, f->regs_len);
	close(f->fb.fd);
}

/* Copies a file with the given mode; 0 or -1. */
static inline int copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	ssize_t n = 0;
	int in, out;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	close(in);
	if (close(out) < 0 || n < 0 || chmod(to, mode) < 0)
		return -1;
	return 0;
}

/* Copies plugin `name` built in this tree into dir as `as`, mode 0755. */
static inline int install_plugin(const char *dir, const char *name, const char *as)
{
	char from[512], to[512];

	snprintf(from, sizeof(from), "%s/%s/%s.so", PLUGIN_BUILD_DIR, name, name);
	snprintf(to, sizeof(to), "%s/%s", dir, as);
	if (copy_file(from, to, 0755) < 0) {
		fprintf(stderr, "cannot copy %s to %s: %m\n", from, to);
		return -1;
	}
	return 0;
}

/* A fresh directory under /tmp, mode 0755 (the loader's rules). */
__attribute__((returns_nonnull)) static inline char *make_dir(char *tmpl)
{
	if (!mkdtemp(tmpl) || chmod(tmpl, 0755) < 0) {
		fprintf(stderr, "cannot make %s: %m\n", tmpl);
		exit(1);
	}
	return tmpl;
}

/* rm -r of the flat directories the tests make. */
static inline void remove_dir(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}
