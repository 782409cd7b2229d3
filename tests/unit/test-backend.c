/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plugin loader (daemon/devices/backend.c): its checks of the directory and of
 * each plugin file, and the ATI plugins once the scroller has grown the
 * virtual screen. The real plugins are loaded by the real loader, on a fake
 * device whose registers are RAM (test-backend-fake.h), and the real scroller
 * drives them; only the two fbdev ioctls the scroller uses are a fake driver
 * here (fbdev_set_virtual, fbdev_pan: linked in with -Wl,--wrap).
 *
 * Runs as root (the loader wants root-owned plugins); skipped otherwise.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <consoled/backend.h>

#include "../../daemon/devices/backend.h"
#include "../../daemon/screen/move.h"
#include "../../daemon/screen/scroll.h"
#include "../../daemon/util/util.h"
#include "test-backend-fake.h"
#include "tests.h"

/* The fake fbdev driver: any virtual height VRAM holds, no wrap (its
 * ywrapstep is 0), pans within the virtual screen. */
int __wrap_fbdev_set_virtual(struct fbdev *fb, unsigned yres_virtual, unsigned vmode);
int __wrap_fbdev_pan(struct fbdev *fb, unsigned yoffset);

int __wrap_fbdev_set_virtual(struct fbdev *fb, unsigned yres_virtual, unsigned vmode)
{
	if (yres_virtual < fb->var.yres || yres_virtual > fb->fix.smem_len / fb->line_length ||
	    (vmode & FB_VMODE_YWRAP))
		return -EINVAL;
	fb->var.yres_virtual = yres_virtual;
	fb->var.vmode = vmode;
	fb->var.yoffset = 0;
	return 0;
}

int __wrap_fbdev_pan(struct fbdev *fb, unsigned yoffset)
{
	if (yoffset + fb->var.yres > fb->var.yres_virtual)
		return -EINVAL;
	fb->var.yoffset = yoffset;
	return 0;
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void test_dir_checks(void)
{
	char tmpl[] = "/tmp/consoled-test-backendXXXXXX", link[64];
	const char *d = make_dir(tmpl);
	int fd;

	fd = backend_open_dir(d);
	CHECK(fd >= 0);
	close_fd(fd);

	CHECK(chmod(d, 0775) == 0);
	fd = backend_open_dir(d);
	CHECK(fd == -EPERM); /* group-writable */
	close_fd(fd);
	CHECK(chmod(d, 0757) == 0);
	fd = backend_open_dir(d);
	CHECK(fd == -EPERM); /* writable by others */
	close_fd(fd);
	CHECK(chmod(d, 01777) == 0);
	fd = backend_open_dir(d);
	CHECK(fd == -EPERM); /* /tmp-like */
	close_fd(fd);
	CHECK(chmod(d, 0755) == 0);
	CHECK(chown(d, 1, 0) == 0);
	fd = backend_open_dir(d);
	CHECK(fd == -EPERM); /* not root's */
	close_fd(fd);
	CHECK(chown(d, 0, 0) == 0);

	snprintf(link, sizeof(link), "%s.link", tmpl);
	CHECK(symlink(d, link) == 0);
	fd = backend_open_dir(link);
	CHECK(fd == -ELOOP); /* the directory itself is a symbolic link */
	close_fd(fd);
	unlink(link);

	fd = backend_open_dir(d);
	CHECK(fd >= 0);
	close_fd(fd);
	remove_dir(d);
}

static void test_file_checks(void)
{
	char tmpl[] = "/tmp/consoled-test-backendXXXXXX", path[128], moved[80];
	const char *d = make_dir(tmpl);
	struct stat good, st;
	int dfd, fd;

	dfd = backend_open_dir(d);
	CHECK(dfd >= 0);
	CHECK(install_plugin(d, "rage128", "good.so") == 0);
	snprintf(path, sizeof(path), "%s/good.so", d);

	fd = backend_open_file(dfd, d, "good.so");
	CHECK(fd >= 0);
	close_fd(fd);

	CHECK(chmod(path, 0775) == 0);
	fd = backend_open_file(dfd, d, "good.so");
	CHECK(fd == -EPERM);
	close_fd(fd);
	CHECK(chmod(path, 0757) == 0);
	fd = backend_open_file(dfd, d, "good.so");
	CHECK(fd == -EPERM);
	close_fd(fd);
	CHECK(chmod(path, 0755) == 0);
	CHECK(chown(path, 1, 0) == 0);
	fd = backend_open_file(dfd, d, "good.so");
	CHECK(fd == -EPERM); /* not root's */
	close_fd(fd);
	CHECK(chown(path, 0, 0) == 0 && chmod(path, 0755) == 0);

	/* A symbolic link, even to a good plugin in the same directory. */
	CHECK(symlinkat("good.so", dfd, "link.so") == 0);
	fd = backend_open_file(dfd, d, "link.so");
	CHECK(fd == -ELOOP);
	close_fd(fd);
	/* Not regular files; the FIFO must not block the open. */
	CHECK(mkfifoat(dfd, "fifo.so", 0644) == 0);
	fd = backend_open_file(dfd, d, "fifo.so");
	CHECK(fd == -EPERM);
	close_fd(fd);
	CHECK(mkdirat(dfd, "dir.so", 0755) == 0);
	fd = backend_open_file(dfd, d, "dir.so");
	CHECK(fd == -EPERM);
	close_fd(fd);

	/* Plugins open relative to the checked directory: moving it away and
	 * putting another one (anyone's) at its path changes nothing. */
	CHECK(stat(path, &good) == 0);
	snprintf(moved, sizeof(moved), "%s.moved", d);
	CHECK(rename(d, moved) == 0);
	CHECK(mkdir(d, 0777) == 0 && chmod(d, 0777) == 0);
	CHECK(install_plugin(d, "radeon", "good.so") == 0);
	fd = backend_open_file(dfd, d, "good.so");
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == good.st_ino &&
	      st.st_dev == good.st_dev);
	close_fd(fd);

	close_fd(dfd);
	remove_dir(d);
	remove_dir(moved);
}

/* backend_load() by name from dir: its name, or NULL if nothing loaded. */
static const char *load_name(struct fake_fb *f, const char *dir, const char *name)
{
	static char loaded[32];
	struct backend_config cfg = {.name = name, .dir = dir};
	struct backend *b = NULL;

	(void)backend_load(&f->fb, &cfg, &b);
	if (!b)
		return NULL;
	snprintf(loaded, sizeof(loaded), "%s", backend_name(b));
	backend_free(b);
	return loaded;
}

/* The checks hold in backend_load(): only a good plugin in a good
 * directory is loaded. */
static void test_load_checks(void)
{
	char tmpl[] = "/tmp/consoled-test-backendXXXXXX";
	char other_tmpl[] = "/tmp/consoled-test-otherXXXXXX";
	char path[128], target[128];
	const char *d = make_dir(tmpl), *other = make_dir(other_tmpl), *name;
	struct fake_fb f;

	CHECK(fake_fb_init(&f, "ATY Rage128") == 0);
	CHECK(install_plugin(d, "rage128", "rage128.so") == 0);
	snprintf(path, sizeof(path), "%s/rage128.so", d);

	name = load_name(&f, d, "rage128");
	CHECK(name && strcmp(name, "rage128") == 0);

	CHECK(chmod(d, 0775) == 0);
	CHECK(load_name(&f, d, "rage128") == NULL); /* group-writable directory */
	CHECK(chmod(d, 0755) == 0);
	CHECK(chmod(path, 0775) == 0);
	CHECK(load_name(&f, d, "rage128") == NULL); /* group-writable plugin */
	CHECK(chmod(path, 0755) == 0 && chown(path, 1, 0) == 0);
	CHECK(load_name(&f, d, "rage128") == NULL); /* plugin not root's */
	CHECK(chown(path, 0, 0) == 0 && chmod(path, 0755) == 0);

	/* A symbolic link to a good plugin elsewhere. */
	snprintf(target, sizeof(target), "%s/rage128.so", other);
	CHECK(rename(path, target) == 0);
	CHECK(symlink(target, path) == 0);
	CHECK(load_name(&f, d, "rage128") == NULL);
	CHECK(load_name(&f, other, "rage128") != NULL); /* the plugin itself is good */

	fake_fb_done(&f);
	remove_dir(d);
	remove_dir(other);
}

/* A DRM driver's fbdev emulation gets no blitter, by name or by probe:
 * the engine draws where the driver's scanout is, not into the buffer the
 * driver copies from. The radeon plugin's probe takes any id starting with
 * "ATI Radeon", so only the DRM rule keeps it off "ATI Radeondrmfb". */
static void test_drm_emulation(void)
{
	char tmpl[] = "/tmp/consoled-test-backendXXXXXX";
	const char *d = make_dir(tmpl), *name;
	struct fake_fb f;

	CHECK(install_plugin(d, "radeon", "radeon.so") == 0);
	CHECK(fake_fb_init(&f, "ATI Radeon") == 0);
	CHECK(!backend_fb_is_drm(&f.fb));
	name = load_name(&f, d, "radeon");
	CHECK(name && strcmp(name, "radeon") == 0);
	name = load_name(&f, d, NULL);
	CHECK(name && strcmp(name, "radeon") == 0);

	snprintf(f.fb.fix.id, sizeof(f.fb.fix.id), "%s", "ATI Radeondrmfb");
	CHECK(backend_fb_is_drm(&f.fb));
	CHECK(load_name(&f, d, "radeon") == NULL);
	CHECK(load_name(&f, d, NULL) == NULL);

	snprintf(f.fb.fix.id, sizeof(f.fb.fix.id), "%s", "bochs-drmdrmfb");
	CHECK(backend_fb_is_drm(&f.fb));
	snprintf(f.fb.fix.id, sizeof(f.fb.fix.id), "%s", "CL GD5446");
	CHECK(!backend_fb_is_drm(&f.fb));
	fake_fb_done(&f);
	remove_dir(d);
}

/* Another object already loaded under the /proc/self/fd/N names of the fd
 * numbers the loader is given next (as an earlier plugin, still loaded,
 * would be) must not come back in place of the plugin being loaded: the
 * dynamic loader returns an object loaded under the same name. */
static void test_fd_names(void)
{
	char tmpl[] = "/tmp/consoled-test-backendXXXXXX";
	char other_tmpl[] = "/tmp/consoled-test-otherXXXXXX";
	char path[128], proc[32];
	const char *d = make_dir(tmpl), *other = make_dir(other_tmpl), *name;
	int fds[8];
	void *dls[8];
	struct fake_fb f;

	CHECK(install_plugin(d, "radeon", "radeon.so") == 0);
	CHECK(install_plugin(other, "rage128", "rage128.so") == 0);
	snprintf(path, sizeof(path), "%s/rage128.so", other);
	for (size_t i = 0; i < 8; i++) {
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fds[i]);
		dls[i] = dlopen(proc, RTLD_NOW | RTLD_LOCAL);
		CHECK(dls[i] != NULL);
	}
	for (size_t i = 0; i < 8; i++)
		close(fds[i]);

	CHECK(fake_fb_init(&f, "ATI Radeon") == 0);
	name = load_name(&f, d, "radeon");
	CHECK(name && strcmp(name, "radeon") == 0);

	for (size_t i = 0; i < 8; i++)
		if (dls[i])
			dlclose(dls[i]);
	fake_fb_done(&f);
	remove_dir(d);
	remove_dir(other);
}

/* Where the last operation's source or destination starts, in lines,
 * decoded from the registers as each chip encodes it. */
struct chip {
	const char *plugin, *id;
	uint32_t (*line)(const struct fake_fb *f, bool src);
};

#define ATI_SRC_Y_X 0x1434
#define ATI_DST_Y_X 0x1438
#define ATI_DST_HEIGHT_WIDTH 0x143c
#define ATI_DP_BRUSH_FRGD_CLR 0x147c

static uint32_t rage128_line(const struct fake_fb *f, bool src)
{
	/* SRC_OFFSET / DST_OFFSET in bytes, SRC_PITCH / DST_PITCH in 8 pixels */
	uint32_t offset = fake_reg(f, src ? 0x15ac : 0x1404);
	uint32_t pitch = fake_reg(f, src ? 0x15b0 : 0x1408) * 8 * FAKE_BPP;

	CHECK_EQ_U(pitch, FAKE_PITCH);
	return offset / FAKE_PITCH + (fake_reg(f, src ? ATI_SRC_Y_X : ATI_DST_Y_X) >> 16);
}

static uint32_t radeon_line(const struct fake_fb *f, bool src)
{
	/* SRC_/DST_PITCH_OFFSET: pitch / 64 in bits 22-31, offset / 1024
	 * below (VRAM at 0: MC_FB_LOCATION reads 0) */
	uint32_t v = fake_reg(f, src ? 0x1428 : 0x142c);

	CHECK_EQ_U((v >> 22) * 64, FAKE_PITCH);
	return (v & 0x3fffff) * 1024 / FAKE_PITCH +
	       (fake_reg(f, src ? ATI_SRC_Y_X : ATI_DST_Y_X) >> 16);
}

/* A full-screen scroll by the scroller's window, as a frame plans and moves
 * it (plan.c, move.c): true when the rows moved with nothing to redraw. */
static bool move_screen_done(struct fbdev *fb, struct scroller *s, int shift,
			     struct scroll_counters *c)
{
	struct move_target t = {.fb = fb, .backend = scroller_backend(s)};
	struct move_report rep;
	struct window_move m;

	if (!scroller_plan_window(s, shift, &m))
		return false;
	move_window(&t, &m, c, &rep);
	return !rep.pan_err && !rep.copy_failed && (!m.ret || m.ret_copy);
}

/* A scroller panning over a fake card (fix.id `id`) with `plugin` loaded
 * from d, test_flags its fault switch; NULL when either failed. */
static struct scroller *pan_over_plugin(struct fake_fb *f, const char *d, const char *plugin,
					const char *id, uint32_t test_flags, struct backend **ret)
{
	struct backend_config cfg = {.name = plugin, .dir = d, .test_flags = test_flags};
	struct scroller_config sc = {
	    .mode = SCROLL_MODE_PAN,
	    .calibrate = false,
	    .font_height = 16,
	    .text_rows = FAKE_YRES / 16,
	};
	struct scroller *s = NULL;
	char file[32];

	snprintf(file, sizeof(file), "%s.so", plugin);
	CHECK(install_plugin(d, plugin, file) == 0);
	CHECK(fake_fb_init(f, id) == 0);
	CHECK(backend_load(&f->fb, &cfg, ret) == 0);
	CHECK(*ret != NULL);
	if (!*ret)
		return NULL;
	sc.backend = *ret;
	CHECK(scroller_new(&f->fb, &sc, &s) == 0);
	CHECK(scroller_full_mode(s) == SCROLL_MODE_PAN);
	return s;
}

/* The scroller grows the virtual screen after the plugin was created; the
 * plugin must then take copies and fills below the old height (on a real
 * card: the pan window's return and region scrolls there). */

static void test_grown_screen(const struct chip *c)
{
	char tmpl[] = "/tmp/consoled-test-backendXXXXXX";
	const char *d = make_dir(tmpl);
	struct scroll_counters cnt = {0};
	unsigned pan_max = (FAKE_LINES - FAKE_YRES) / 16 * 16;
	struct backend *b = NULL;
	struct scroller *s;
	struct fake_fb f;

	fprintf(stderr, "-- %s\n", c->plugin);
	s = pan_over_plugin(&f, d, c->plugin, c->id, 0, &b);
	if (!s)
		goto out;
	CHECK_EQ_U(f.fb.var.yres_virtual, FAKE_LINES);

	/* Down to the end of the virtual screen, then one row more: the
	 * window returns to the top, and the rows that stay visible are
	 * copied there from below the old height first. */
	for (unsigned i = 0; i < pan_max / 16; i++)
		CHECK(move_screen_done(&f.fb, s, 1, &cnt));
	CHECK_EQ_U(f.fb.var.yoffset, pan_max);
	CHECK(move_screen_done(&f.fb, s, 1, &cnt)); /* not a redraw */
	CHECK_EQ_U(f.fb.var.yoffset, 0);
	CHECK_EQ_U(cnt.blits, 1);
	CHECK(backend_ok(b));
	CHECK_EQ_U(c->line(&f, true), pan_max + 16);
	CHECK_EQ_U(c->line(&f, false), 0);
	CHECK_EQ_U(fake_reg(&f, ATI_DST_HEIGHT_WIDTH), (FAKE_YRES - 16) << 16 | FAKE_XRES);

	/* A region copy wholly below the old height. */
	CHECK(backend_copy(b, 0, 1000, 0, 900, FAKE_XRES, 100) == 0);
	CHECK(backend_sync(b) == 0);
	CHECK_EQ_U(c->line(&f, true), 1000);
	CHECK_EQ_U(c->line(&f, false), 900);
	CHECK_EQ_U(fake_reg(&f, ATI_DST_HEIGHT_WIDTH), 100u << 16 | FAKE_XRES);

	/* A fill of the last lines of the grown screen. */
	CHECK(backend_fill(b, 0, FAKE_LINES - 10, FAKE_XRES, 10, 0x123456) == 0);
	CHECK(backend_sync(b) == 0);
	CHECK_EQ_U(c->line(&f, false), FAKE_LINES - 10);
	CHECK_EQ_U(fake_reg(&f, ATI_DST_HEIGHT_WIDTH), 10u << 16 | FAKE_XRES);
	CHECK_EQ_U(fake_reg(&f, ATI_DP_BRUSH_FRGD_CLR), 0x123456);

	/* Beyond the grown screen is still refused (and drops the plugin). */
	CHECK(backend_copy(b, 0, FAKE_LINES - 5, 0, 0, FAKE_XRES, 10) == -EINVAL);
	CHECK(!backend_ok(b));

	scroller_free(s);
	backend_free(b);
out:
	fake_fb_done(&f);
	remove_dir(d);
}

static const struct chip chips[] = {
    {"rage128", "ATY Rage128", rage128_line},
    {"radeon", "ATI Radeon", radeon_line},
};

static void test_grown_screens(void)
{
	for (size_t i = 0; i < sizeof(chips) / sizeof(chips[0]); i++)
		test_grown_screen(&chips[i]);
}

/* The pan window's return with an engine that never goes idle: the copy
 * fails (backend.c drops nothing itself, it marks the plugin broken), the
 * window still goes to the other end, and the report says so, so that the
 * frame falls back to drawing everything (plan.c). */
static void test_window_return_hang(void)
{
	char tmpl[] = "/tmp/consoled-test-backendXXXXXX";
	const char *d = make_dir(tmpl);
	unsigned pan_max = (FAKE_LINES - FAKE_YRES) / 16 * 16;
	struct scroll_counters cnt = {0};
	struct frame_plan p = {.mode = SCROLL_MODE_PAN, .move = FRAME_MOVE_WINDOW};
	struct backend *b = NULL;
	struct move_report rep;
	struct move_target t;
	struct scroller *s;
	struct fake_fb f;

	s = pan_over_plugin(&f, d, "radeon", "ATI Radeon", CONSOLED_BACKEND_TEST_HANG, &b);
	if (!s)
		goto out;
	f.fb.var.yoffset = pan_max;
	CHECK(scroller_plan_window(s, 1, &p.window));
	CHECK(p.window.ret && p.window.ret_copy);
	CHECK_EQ_U(p.window.yoffset, 0);

	t = (struct move_target){.fb = &f.fb, .backend = b};
	move_run(&t, &p, &cnt, &rep);
	CHECK(rep.copy_failed);
	CHECK(rep.blitter_failed);
	CHECK(!backend_ok(b));
	CHECK(rep.pan_err == 0);
	CHECK_EQ_U(f.fb.var.yoffset, 0);
	CHECK_EQ_U(cnt.blits, 0);
	CHECK_EQ_U(cnt.pans, 1);

	frame_plan_fall_back(&p, &rep, SCROLL_MODE_REDRAW);
	CHECK(p.redraw_all);
	CHECK(p.move == FRAME_MOVE_NONE);
	CHECK(p.mode == SCROLL_MODE_PAN);

	scroller_drop_backend(s);
	CHECK(scroller_backend(s) == NULL);
	scroller_free(s);
	backend_free(b);
out:
	fake_fb_done(&f);
	remove_dir(d);
}

/* The device is gone (fbwatch.h): backend_abandon() runs nothing of the
 * plugin. With the engine "busy" for good, destroy() would wait for it (and
 * log that it leaves it busy) and backend_free() would take the plugin's
 * settle timeout (100 ms); abandoning takes no time at all. */
static void test_abandon(void)
{
	char tmpl[] = "/tmp/consoled-test-backendXXXXXX";
	const char *d = make_dir(tmpl);
	struct backend_config cfg = {.name = "radeon", .dir = d};
	struct backend *b = NULL;
	struct fake_fb f;
	uint64_t t0, t;

	CHECK(install_plugin(d, "radeon", "radeon.so") == 0);
	CHECK(fake_fb_init(&f, "ATI Radeon") == 0);
	CHECK(backend_load(&f.fb, &cfg, &b) == 0);
	CHECK(b != NULL);
	if (!b)
		goto out;
	CHECK(backend_copy(b, 0, 16, 0, 0, FAKE_XRES, 100) == 0); /* pending */
	fake_set_reg(&f, FAKE_RADEON_RBBM_STATUS, 1u << 31 | 64);
	t0 = now_usec();
	backend_abandon(b);
	t = now_usec() - t0;
	CHECK(t < 50 * USEC_PER_MSEC);
	fprintf(stderr, "backend_abandon() took %llu us\n", (unsigned long long)t);
out:
	fake_fb_done(&f);
	remove_dir(d);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test-backend: needs root (root-owned plugins); skipped\n");
		return 77;
	}
	/* A test build's fault switch would make every sync time out. */
	unsetenv("CONSOLED_TEST_BACKEND_HANG");
	RUN(test_dir_checks);
	RUN(test_file_checks);
	RUN(test_load_checks);
	RUN(test_fd_names);
	RUN(test_drm_emulation);
	RUN(test_grown_screens);
	RUN(test_window_return_hang);
	RUN(test_abandon);
	return TESTS_RESULT();
}
