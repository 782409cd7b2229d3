/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What consoled trusts of a framebuffer driver's numbers: where the pixels
 * are in a mapping of the device (a smem_start that is not page-aligned),
 * and which geometries it refuses (a virtual screen larger than video
 * memory, offsets past the screen or the line). fbdev_map() runs for real
 * on a memfd standing in for the device: fbdev mmap() maps from the page
 * that holds smem_start, so file offset 0 is that page.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../daemon/devices/fbdev.h"
#include "../../daemon/util/log.h"
#include "../../daemon/util/util.h"
#include "tests.h"

/* A fake driver for fbdev_set_virtual() (-Wl,--wrap=ioctl, meson.build):
 * the mode ioctls on fake_fd read and set fake_var and fake_fix, as a
 * driver that takes every mode; other descriptors reach the kernel. (On
 * 32-bit glibc with _TIME_BITS=64, ioctl() is another symbol: fake_calls
 * stays 0 and the tests that need the fake say they are skipped.) */
int __real_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...);
static int fake_fd = -1;
static unsigned fake_calls;
static struct fb_var_screeninfo fake_var;
static struct fb_fix_screeninfo fake_fix;

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != fake_fd)
		return __real_ioctl(fd, req, arg);
	fake_calls++;
	switch (req) {
	case FBIOGET_VSCREENINFO:
		*(struct fb_var_screeninfo *)arg = fake_var;
		return 0;
	case FBIOPUT_VSCREENINFO:
		fake_var = *(const struct fb_var_screeninfo *)arg;
		return 0;
	case FBIOGET_FSCREENINFO:
		*(struct fb_fix_screeninfo *)arg = fake_fix;
		return 0;
	default:
		errno = ENOTTY;
		return -1;
	}
}

static void test_layout(void)
{
	struct fbdev_map_layout l;

	/* Page-aligned: the pixels start the mapping. */
	CHECK(fbdev_map_layout(0xe0000000, 3 * 4096, 4096, &l) == 0);
	CHECK_EQ_U(l.offset, 0);
	CHECK_EQ_U(l.length, 3 * 4096);
	CHECK(fbdev_map_layout(0xe0000000, 4097, 4096, &l) == 0);
	CHECK_EQ_U(l.offset, 0);
	CHECK_EQ_U(l.length, 2 * 4096);

	/* Not page-aligned: the first pixel is the start's offset into its
	 * page, and the mapping reaches over the last pixel. */
	CHECK(fbdev_map_layout(0xe0000123, 3 * 4096, 4096, &l) == 0);
	CHECK_EQ_U(l.offset, 0x123);
	CHECK_EQ_U(l.length, 4 * 4096);
	CHECK(fbdev_map_layout(0xe0000ffc, 4, 4096, &l) == 0);
	CHECK_EQ_U(l.offset, 0xffc);
	CHECK_EQ_U(l.length, 4096);
	CHECK(fbdev_map_layout(0xe0000ffc, 5, 4096, &l) == 0);
	CHECK_EQ_U(l.length, 2 * 4096);
	/* Above 4 GiB, and with 64 KiB pages. */
	CHECK(fbdev_map_layout(0x4000000123ull, 1000, 4096, &l) == 0);
	CHECK_EQ_U(l.offset, 0x123);
	CHECK_EQ_U(l.length, 4096);
	CHECK(fbdev_map_layout(0xe0012345, 0x10000, 0x10000, &l) == 0);
	CHECK_EQ_U(l.offset, 0x2345);
	CHECK_EQ_U(l.length, 0x20000);
	/* The largest smem_len: its mapping is 4 GiB, more than a 32-bit
	 * size_t holds (refused there). */
	if (SIZE_MAX > UINT32_MAX) {
		CHECK(fbdev_map_layout(0xe0000001, UINT32_MAX, 4096, &l) == 0);
		CHECK_EQ_U(l.offset, 1);
		CHECK_EQ_U(l.length, 0x100000000ull);
	} else {
		l = (struct fbdev_map_layout){7, 7};
		CHECK(fbdev_map_layout(0xe0000001, UINT32_MAX, 4096, &l) == -EINVAL);
		CHECK(l.offset == 7 && l.length == 7);
		/* the largest that fits: 4 GiB less a page */
		CHECK(fbdev_map_layout(0xe0000000, UINT32_MAX - 4095, 4096, &l) == 0);
		CHECK_EQ_U(l.length, UINT32_MAX - 4095);
	}

	/* No memory, a page size that is no power of two: refused, *ret untouched. */
	l = (struct fbdev_map_layout){7, 7};
	CHECK(fbdev_map_layout(0xe0000000, 0, 4096, &l) == -EINVAL);
	CHECK(fbdev_map_layout(0xe0000000, 4096, 0, &l) == -EINVAL);
	CHECK(fbdev_map_layout(0xe0000000, 4096, 3000, &l) == -EINVAL);
	CHECK(l.offset == 7 && l.length == 7);
}

/* 640x480 at 4 bytes a pixel, line length 2560, room for `lines` lines. */
static void mode(struct fb_fix_screeninfo *fix, struct fb_var_screeninfo *var, unsigned lines)
{
	*fix = (struct fb_fix_screeninfo){.line_length = 2560, .smem_len = 2560 * lines};
	*var = (struct fb_var_screeninfo){
	    .xres = 640,
	    .yres = 480,
	    .xres_virtual = 640,
	    .yres_virtual = 480,
	    .bits_per_pixel = 32,
	};
}

/* fbdev_check_geometry() on fix/var: 0 or -EINVAL with a reason that
 * contains `why` (NULL: must pass). */
static void check_geometry(const struct fb_fix_screeninfo *fix, const struct fb_var_screeninfo *var,
			   const char *why, unsigned line_length, int line)
{
	const char *reason = NULL;
	unsigned len = 12345;
	int r = fbdev_check_geometry(fix, var, 4, &len, &reason);

	if (why ? (r != -EINVAL || !reason || !strstr(reason, why)) : r != 0) {
		fprintf(stderr, "%s:%d: geometry check: %d (%s), expected %s\n", __FILE__, line, r,
			reason ? reason : "no reason", why ? why : "success");
		tests_failed = 1;
	}
	CHECK_EQ_U(len, line_length);
}

static void test_geometry(void)
{
	struct fb_fix_screeninfo fix;
	struct fb_var_screeninfo var;

	mode(&fix, &var, 480);
	check_geometry(&fix, &var, NULL, 2560, __LINE__);

	/* A virtual screen taller than memory: refused, whether it wraps or
	 * not and wherever the window is. */
	mode(&fix, &var, 1000);
	var.yres_virtual = 1000;
	check_geometry(&fix, &var, NULL, 2560, __LINE__);
	var.yres_virtual = 1001;
	check_geometry(&fix, &var, "virtual screen does not fit in video memory", 2560, __LINE__);
	var.yres_virtual = 4096;
	var.vmode = FB_VMODE_YWRAP;
	check_geometry(&fix, &var, "virtual screen does not fit in video memory", 2560, __LINE__);
	var.yres_virtual = 1000;
	check_geometry(&fix, &var, NULL, 2560, __LINE__);
	var.yres_virtual = UINT32_MAX;
	var.vmode = 0;
	check_geometry(&fix, &var, "virtual screen does not fit in video memory", 2560, __LINE__);

	/* Pan offsets: the window inside the virtual screen; it wraps only
	 * with FB_VMODE_YWRAP. */
	mode(&fix, &var, 1000);
	var.yres_virtual = 1000;
	var.yoffset = 520;
	check_geometry(&fix, &var, NULL, 2560, __LINE__);
	var.yoffset = 999;
	check_geometry(&fix, &var, "visible window does not fit", 2560, __LINE__);
	var.vmode = FB_VMODE_YWRAP;
	check_geometry(&fix, &var, NULL, 2560, __LINE__);
	var.yoffset = 1000;
	check_geometry(&fix, &var, "pan offset is past the virtual screen", 2560, __LINE__);
	var.yoffset = UINT32_MAX;
	var.vmode = 0;
	check_geometry(&fix, &var, "pan offset is past the virtual screen", 2560, __LINE__);

	/* Horizontal: the visible width and its offset inside a line, with
	 * no wrap-around in 32 bits. */
	mode(&fix, &var, 480);
	var.xres_virtual = 800;
	fix.line_length = 3200;
	fix.smem_len = 3200 * 480;
	var.xoffset = 160;
	check_geometry(&fix, &var, NULL, 3200, __LINE__);
	var.xoffset = 161;
	check_geometry(&fix, &var, "visible width does not fit in a line", 3200, __LINE__);
	var.xoffset = UINT32_MAX - 639;
	check_geometry(&fix, &var, "visible width does not fit in a line", 3200, __LINE__);

	/* A driver that reports no line length: xres_virtual's pixels. */
	mode(&fix, &var, 480);
	fix.line_length = 0;
	check_geometry(&fix, &var, NULL, 2560, __LINE__);
	var.yres_virtual = 481;
	check_geometry(&fix, &var, "virtual screen does not fit in video memory", 2560, __LINE__);
	var.yres_virtual = 480;
	var.xres_virtual = 0x40000000; /* x 4 bytes: 2^32, more than any line */
	check_geometry(&fix, &var, "no line length", 0, __LINE__);

	/* Nothing to show, a virtual screen shorter than the window. */
	mode(&fix, &var, 480);
	var.xres = 0;
	check_geometry(&fix, &var, "no visible screen", 2560, __LINE__);
	mode(&fix, &var, 480);
	var.yres_virtual = 479;
	check_geometry(&fix, &var, "shorter than the visible one", 2560, __LINE__);
	mode(&fix, &var, 480);
	fix.smem_len = 2560 * 480 - 1;
	check_geometry(&fix, &var, "virtual screen does not fit in video memory", 2560, __LINE__);
}

/* fbdev_check() on a 32 bpp truecolour mode: the format, the line length,
 * and a refusal that names the numbers. */
static void test_check(void)
{
	struct fbdev fb = {.path = (char *)"/dev/fbX"};
	char log[2048] = "";
	FILE *f = tmpfile();
	int saved;
	size_t n;

	fb.fix = (struct fb_fix_screeninfo){.id = "testfb",
					    .type = FB_TYPE_PACKED_PIXELS,
					    .visual = FB_VISUAL_TRUECOLOR,
					    .line_length = 2560,
					    .smem_len = 2560 * 1000};
	fb.var = (struct fb_var_screeninfo){.xres = 640,
					    .yres = 480,
					    .xres_virtual = 640,
					    .yres_virtual = 1000,
					    .bits_per_pixel = 32,
					    .red = {16, 8, 0},
					    .green = {8, 8, 0},
					    .blue = {0, 8, 0}};
	CHECK(fbdev_check(&fb) == 0);
	CHECK_EQ_U(fb.format.bytes_per_pixel, 4);
	CHECK_EQ_U(fb.line_length, 2560);

	fb.var.yres_virtual = 1001;
	if (!f)
		abort();
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fileno(f), STDERR_FILENO);
	CHECK(fbdev_check(&fb) == -EINVAL);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(log, 1, sizeof(log) - 1, f);
	log[n] = '\0';
	fclose(f);
	fputs(log, stderr);
	CHECK(strstr(log, "/dev/fbX (testfb) has an inconsistent geometry, the virtual screen "
			  "does not fit in video memory: 640x480 at +0+0, virtual 640x1001, 4 "
			  "bytes a pixel, line length 2560, 1001 lines need 2562560 bytes, "
			  "2560000 bytes of memory") != NULL);
}

/* fbdev_map() on a memfd of 4 pages whose byte i is (i * 7) & 0xff. */
static void check_map(uint64_t smem_start, uint32_t smem_len, size_t want_offset,
		      size_t want_length)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t size = 4 * (size_t)page;
	struct fbdev *fb = xcalloc(1, sizeof(*fb));
	uint8_t *data = xmalloc(size);
	bool same = true;

	for (size_t i = 0; i < size; i++)
		data[i] = (uint8_t)(i * 7);
	fb->path = xstrdup("memfd");
	fb->fd = memfd_create("test-fbdev", MFD_CLOEXEC);
	CHECK(fb->fd >= 0 && write(fb->fd, data, size) == (ssize_t)size);
	fb->fix.smem_start = smem_start;
	fb->fix.smem_len = smem_len;

	CHECK(fbdev_map(fb) == 0);
	CHECK(fb->map_base != NULL);
	CHECK_EQ_U(fb->map_length, want_length);
	CHECK(fb->map == (uint8_t *)fb->map_base + want_offset);
	CHECK_EQ_U(fb->map_size, smem_len);
	/* The pixels are the device's bytes from smem_start on, the last
	 * one included. */
	if (fb->map)
		for (size_t i = 0; i < smem_len; i++)
			same &= fb->map[i] == data[want_offset + i];
	CHECK(same);

	/* Mapping again (a mode change that moved memory) replaces it. */
	CHECK(fbdev_map(fb) == 0);
	CHECK(fb->map == (uint8_t *)fb->map_base + want_offset);
	CHECK(fb->map && fb->map[0] == data[want_offset]);
	fbdev_free(fb);
	free(data);
}

/* With a geometry, only the virtual screen is mapped (line length x
 * yres_virtual), not all of video memory: a card's 3.75 GiB here, more than
 * a 32-bit process can map at all (mmap() fails there), a memfd of 4 pages
 * standing in for it. The tallest virtual screen the scroller may ask for
 * stays inside FBDEV_MAP_MAX (256 MiB on a 32-bit machine). */
static void test_map_virtual(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct fbdev *fb = xcalloc(1, sizeof(*fb));
	unsigned lines;

	fb->path = xstrdup("memfd");
	fb->fd = memfd_create("test-fbdev", MFD_CLOEXEC);
	CHECK(fb->fd >= 0 && ftruncate(fb->fd, 4 * page) == 0);
	fb->fix.smem_start = 0xe0000000;
	fb->fix.smem_len = 0xf0000000u;
	fb->line_length = (unsigned)page / 2;
	fb->var.yres = 3;
	fb->var.yres_virtual = 4;
	CHECK_EQ_U(fbdev_map_bytes(fb), 2 * (uint64_t)page);
	CHECK(fbdev_map(fb) == 0);
	CHECK_EQ_U(fb->map_size, 2 * (size_t)page);
	CHECK_EQ_U(fb->map_length, 2 * (size_t)page);
	if (fb->map)
		memset(fb->map, 0x5a, fb->map_size);

	/* a virtual screen past video memory (never checked): all of it */
	fb->var.yres_virtual = UINT32_MAX;
	CHECK_EQ_U(fbdev_map_bytes(fb), 0xf0000000u);

	fb->line_length = 8192;
	lines = fbdev_max_virtual_lines(fb);
	CHECK((uint64_t)lines * fb->line_length <= FBDEV_MAP_MAX);
	CHECK((uint64_t)lines * fb->line_length <= fb->fix.smem_len);
	if (SIZE_MAX <= UINT32_MAX)
		CHECK_EQ_U(lines, (256u << 20) / 8192 - 1);
	else
		CHECK_EQ_U(lines, 0xf0000000u / 8192);
	fb->line_length = 0;
	CHECK_EQ_U(fbdev_max_virtual_lines(fb), 0);
	fbdev_free(fb);
}

/* A 32 bpp mode on a memfd of 8 pages standing in for video memory: lines
 * of half a page, 3 visible, 4 virtual (2 pages mapped). */
static struct fbdev *fake_device(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct fbdev *fb = xcalloc(1, sizeof(*fb));

	fb->path = xstrdup("memfd");
	fb->fd = memfd_create("test-fbdev", MFD_CLOEXEC);
	CHECK(fb->fd >= 0 && ftruncate(fb->fd, 8 * page) == 0);
	fake_fix = (struct fb_fix_screeninfo){.id = "testfb",
					      .smem_start = 0xe0000000,
					      .smem_len = 8 * (uint32_t)page,
					      .type = FB_TYPE_PACKED_PIXELS,
					      .visual = FB_VISUAL_TRUECOLOR,
					      .line_length = (uint32_t)page / 2};
	fake_var = (struct fb_var_screeninfo){.xres = (uint32_t)page / 8,
					      .yres = 3,
					      .xres_virtual = (uint32_t)page / 8,
					      .yres_virtual = 4,
					      .bits_per_pixel = 32,
					      .red = {16, 8, 0},
					      .green = {8, 8, 0},
					      .blue = {0, 8, 0}};
	fb->fix = fake_fix;
	fb->var = fake_var;
	fake_fd = fb->fd;
	CHECK(fbdev_check(fb) == 0);
	CHECK(fbdev_map(fb) == 0);
	CHECK_EQ_U(fb->map_size, 2 * (size_t)page);
	return fb;
}

/* The descriptor becomes a read-only one of the same memory: a shared
 * writable mmap() fails (EACCES), as one past a 32-bit address space does
 * (ENOMEM); the fake driver follows it. */
static void fail_mmap(struct fbdev *fb)
{
	char path[64];
	int ro;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fb->fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(ro >= 0);
	close(fb->fd);
	fb->fd = fake_fd = ro;
}

/* A taller virtual screen whose mapping fails: the old mode is back and
 * the old mapping stays, with its size (no NULL map, no stale map_size for
 * fbdev_line() or the exit wipe). A shorter one needs no mmap(): it works
 * where mmap() would fail, and what was drawn past it is cleared. A mode
 * another program set that cannot be mapped gives way to consoled's. */
static void test_remap_failure(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct fbdev *fb = fake_device();
	uint8_t *map = fb->map;
	int r;

	/* grown for real: 8 lines, 4 pages */
	r = fbdev_set_virtual(fb, 8, 0);
	if (fake_calls == 0) {
		fprintf(stderr, "ioctl() not wrapped on this ABI: remap tests skipped\n");
		fbdev_free(fb);
		return;
	}
	CHECK(r == 0);
	CHECK_EQ_U(fb->map_size, 4 * page);
	CHECK(fb->map != NULL);
	if (!fb->map) {
		fbdev_free(fb);
		return;
	}
	memset(fb->map, 0x5a, fb->map_size);

	fail_mmap(fb);
	map = fb->map;
	r = fbdev_set_virtual(fb, 16, 0);
	CHECK(r < 0);
	CHECK(fb->map == map);
	CHECK_EQ_U(fb->map_size, 4 * page);
	CHECK_EQ_U(fb->map_length, 4 * page);
	CHECK_EQ_U(fb->var.yres_virtual, 8);
	CHECK_EQ_U(fake_var.yres_virtual, 8);
	if (fb->map)
		CHECK(fb->map[fb->map_size - 1] == 0x5a);

	/* shorter, with mmap() still failing: the tail is cleared and unmapped */
	r = fbdev_set_virtual(fb, 4, 0);
	CHECK(r == 0);
	CHECK(fb->map == map);
	CHECK_EQ_U(fb->map_size, 2 * page);
	CHECK_EQ_U(fb->map_length, 2 * page);
	CHECK_EQ_U(fake_var.yres_virtual, 4);
	if (fb->map) {
		uint8_t b[2];

		CHECK(fb->map[fb->map_size - 1] == 0x5a);
		CHECK(pread(fb->fd, b, 2, (off_t)(2 * page)) == 2 && b[0] == 0 && b[1] == 0);
		CHECK(pread(fb->fd, b, 1, (off_t)(4 * page - 1)) == 1 && b[0] == 0);
	}

	/* Another program's mode whose mapping fails: consoled's is back. */
	struct fb_var_screeninfo tall = fake_var;
	tall.yres_virtual = 16;
	fake_var = tall;
	CHECK(fbdev_adopt(fb, &tall) == 1);
	CHECK(fb->map == map);
	CHECK_EQ_U(fb->map_size, 2 * page);
	CHECK_EQ_U(fb->var.yres_virtual, 4);
	CHECK_EQ_U(fake_var.yres_virtual, 4);
	fbdev_free(fb);
	fake_fd = -1;
}

/* A virtual screen past FBDEV_MAP_MAX (only possible on a 32-bit machine,
 * where it is 256 MiB): refused, as consoled maps all of it. */
static void test_map_max(void)
{
	struct fb_fix_screeninfo fix = {.line_length = 8192, .smem_len = 0xf0000000u};
	struct fb_var_screeninfo var = {
	    .xres = 2048, .yres = 1080, .xres_virtual = 2048, .yres_virtual = 0xf0000000u / 8192};
	unsigned line;
	const char *why = NULL;
	int r = fbdev_check_geometry(&fix, &var, 4, &line, &why);

	if (SIZE_MAX <= UINT32_MAX) {
		CHECK(r == -EINVAL);
		CHECK(why && strstr(why, "larger than consoled maps"));
		var.yres_virtual = (uint32_t)(FBDEV_MAP_MAX / 8192);
		CHECK(fbdev_check_geometry(&fix, &var, 4, &line, &why) == 0);
	} else
		CHECK(r == 0);
}

/* The wipe past the mapping: every byte of smem_len that consoled does not
 * map is zeroed (pwrite() on the device), the mapped ones are not touched
 * (render_wipe_vram() draws the background there). */
static void test_wipe_unmapped(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct fbdev *fb = fake_device();
	uint8_t *all = xcalloc(1, 8 * page);
	size_t i, nonzero = 0;

	memset(all, 0x5a, 8 * page);
	CHECK(pwrite(fb->fd, all, 8 * page, 0) == (ssize_t)(8 * page));
	CHECK(fbdev_wipe_unmapped(fb) == 0);
	CHECK(pread(fb->fd, all, 8 * page, 0) == (ssize_t)(8 * page));
	for (i = 2 * page; i < 8 * page; i++)
		nonzero += all[i] != 0;
	CHECK_EQ_U(nonzero, 0);
	CHECK(all[0] == 0x5a && all[2 * page - 1] == 0x5a);
	free(all);
	fbdev_free(fb);
	fake_fd = -1;
}

static void test_map(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	check_map(0xe0000000, (uint32_t)(2 * page), 0, 2 * page);
	check_map(0xe0000000 + 0x123, (uint32_t)(2 * page), 0x123, 3 * page);
	check_map(0xe0000000 + page - 4, (uint32_t)(3 * page + 4), page - 4, 4 * page);
}

int main(void)
{
	log_set_max_level(LOG_DEBUG);
	RUN(test_layout);
	RUN(test_geometry);
	RUN(test_check);
	RUN(test_map);
	RUN(test_map_virtual);
	RUN(test_remap_failure);
	RUN(test_map_max);
	RUN(test_wipe_unmapped);
	return TESTS_RESULT();
}
