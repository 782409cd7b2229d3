/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "backend"
#include <consoled/backend.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "backend.h"
#include "../util/log.h"
#include "../util/util.h"

/* A sync longer than this is a hung engine. */
#define BACKEND_SYNC_TIMEOUT_USEC (100 * USEC_PER_MSEC)

struct backend {
	void *dl;
	const struct consoled_backend_plugin *plugin;
	struct consoled_backend *impl;
	struct consoled_host host;
	struct fbdev *fb;
	void *mmio_map;
	size_t mmio_map_len;
	bool pending; /* operations issued since the last sync */
	bool broken;
};

const char *backend_dir(void)
{
#ifdef CONSOLED_TEST_HOOKS
	/* Test builds only (meson -Dtest-hooks=true): plugins from a build tree. */
	const char *d = getenv("CONSOLED_BACKEND_DIR");

	if (d && *d)
		return d;
#endif
	return BACKEND_DIR;
}

/* The test suite's fault switch (consoled(8), ENVIRONMENT); test builds only. */
static uint32_t backend_env_test_flags(void)
{
#ifdef CONSOLED_TEST_HOOKS
	if (getenv("CONSOLED_TEST_BACKEND_HANG"))
		return CONSOLED_BACKEND_TEST_HANG;
#endif
	return 0;
}

static unsigned read_sysfs_hex(const struct fbdev *fb, const char *attr)
{
	char path[160], buf[32];
	struct stat st;

	if (fstat(fb->fd, &st) < 0)
		return 0;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/%s", major(st.st_rdev),
		 minor(st.st_rdev), attr);
	if (read_small_file(path, buf, sizeof(buf)) < 0)
		return 0;
	return (unsigned)strtoul(buf, NULL, 16);
}

bool backend_fb_is_drm(const struct fbdev *fb)
{
	static const char suffix[] = "drmfb";
	char id[sizeof(fb->fix.id) + 1] = {0}, path[160];
	struct stat st;
	size_t n;

	memcpy(id, fb->fix.id, sizeof(fb->fix.id));
	n = strlen(id);
	if (n >= sizeof(suffix) - 1 && strcmp(id + n - (sizeof(suffix) - 1), suffix) == 0)
		return true;
	/* A long driver name cuts the id short: the device of a DRM
	 * driver's framebuffer has the driver's card (drm/cardN) beside it. */
	if (fstat(fb->fd, &st) < 0 || !S_ISCHR(st.st_mode))
		return false;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/drm", major(st.st_rdev),
		 minor(st.st_rdev));
	return access(path, F_OK) == 0;
}

static void backend_fb_info(const struct fbdev *fb, struct consoled_fb_info *info)
{
	memset(info, 0, sizeof(*info));
	info->struct_size = sizeof(*info);
	info->path = fb->path;
	info->fd = fb->fd;
	memcpy(info->id, fb->fix.id, sizeof(fb->fix.id));
	info->id[sizeof(info->id) - 1] = '\0';
	info->accel = fb->fix.accel;
	info->pci_vendor = (uint16_t)read_sysfs_hex(fb, "vendor");
	info->pci_device = (uint16_t)read_sysfs_hex(fb, "device");
	info->pci_subsystem_vendor = (uint16_t)read_sysfs_hex(fb, "subsystem_vendor");
	info->pci_subsystem_device = (uint16_t)read_sysfs_hex(fb, "subsystem_device");
	info->smem_start = fb->fix.smem_start;
	info->smem_len = fb->fix.smem_len;
	info->mmio_start = fb->fix.mmio_start;
	info->mmio_len = fb->fix.mmio_len;
	info->xres = fb->var.xres;
	info->yres = fb->var.yres;
	info->xres_virtual = fb->var.xres_virtual;
	info->yres_virtual = fb->var.yres_virtual;
	info->bits_per_pixel = fb->var.bits_per_pixel;
	info->line_length = fb->line_length;
}

__attribute__((format(printf, 3, 4))) static void host_log(void *userdata, int priority,
							   const char *format, ...)
{
	struct backend *b = userdata;
	char buf[512];
	va_list ap;

	va_start(ap, format);
	vsnprintf(buf, sizeof(buf), format, ap);
	va_end(ap);
	log_internal(priority, 0, b->plugin ? b->plugin->name : "backend", "%s", buf);
}

static volatile void *host_map_mmio(void *userdata, size_t *ret_len)
{
	struct backend *b = userdata;
	struct fbdev *fb = b->fb;
	long page = sysconf(_SC_PAGESIZE);
	size_t page_off, len;
	uint64_t off;
	void *p;

	if (fb->fix.mmio_len == 0) {
		errno = ENODEV;
		return NULL;
	}
	if (b->mmio_map) {
		*ret_len = fb->fix.mmio_len;
		return (uint8_t *)b->mmio_map + (fb->fix.mmio_start & (uint64_t)(page - 1));
	}
	/* The kernel maps the registers only while accel_flags is 0; it
	 * stays 0 in consoled's mode, which fbdev_reacquire() puts back. */
	if (fb->var.accel_flags) {
		struct fb_var_screeninfo v = fb->var;

		v.accel_flags = 0;
		v.activate = FB_ACTIVATE_NOW;
		if (ioctl(fb->fd, FBIOPUT_VSCREENINFO, &v) < 0 ||
		    ioctl(fb->fd, FBIOGET_VSCREENINFO, &fb->var) < 0)
			return NULL;
	}
	page_off = fb->fix.mmio_start & (uint64_t)(page - 1);
	/* in 64 bits: a smem_len near 4 GiB overflows a 32-bit size_t here */
	off =
	    ((fb->fix.smem_start & (uint64_t)(page - 1)) + fb->fix.smem_len + (uint64_t)page - 1) &
	    ~((uint64_t)page - 1);
	len = (page_off + fb->fix.mmio_len + (size_t)page - 1) & ~((size_t)page - 1);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fb->fd, (off_t)off);
	if (p == MAP_FAILED)
		return NULL;
	b->mmio_map = p;
	b->mmio_map_len = len;
	*ret_len = fb->fix.mmio_len;
	return (uint8_t *)p + page_off;
}

/* Only root wrote it and only root can change it. */
static bool backend_root_only(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int backend_open_dir(const char *path)
{
	struct stat st;
	int fd, r;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT)
			return log_debug_errno(r, "No backend directory %s: %m", path);
		/* O_NOFOLLOW | O_DIRECTORY on a symbolic link: ENOTDIR or ELOOP */
		if ((r == -ENOTDIR || r == -ELOOP) && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			return log_warning_errno(ELOOP,
						 "Not loading plugins from %s: it is a symbolic "
						 "link",
						 path);
		return log_warning_errno(r, "Not loading plugins from %s: %m", path);
	}
	if (fstat(fd, &st) < 0) {
		r = log_warning_errno(errno, "Not loading plugins from %s: %m", path);
		close(fd);
		return r;
	}
	if (!backend_root_only(&st)) {
		log_warning("Not loading plugins from %s: the directory must be owned by root and "
			    "not writable by group or others (owner %u, mode %04o)",
			    path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	return fd;
}

int backend_open_file(int dir_fd, const char *dir, const char *name)
{
	struct stat st;
	int fd, r;

	/* O_NONBLOCK: a FIFO must not block the open; it is refused below. */
	fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		if (r == -ELOOP)
			return log_warning_errno(r, "Skipping plugin %s/%s: it is a symbolic link",
						 dir, name);
		return log_warning_errno(r, "Skipping plugin %s/%s: %m", dir, name);
	}
	if (fstat(fd, &st) < 0) {
		r = log_warning_errno(errno, "Skipping plugin %s/%s: %m", dir, name);
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		log_warning("Skipping plugin %s/%s: not a regular file", dir, name);
		close(fd);
		return -EPERM;
	}
	if (!backend_root_only(&st)) {
		log_warning("Skipping plugin %s/%s: it must be owned by root and not writable by "
			    "group or others (owner %u, mode %04o)",
			    dir, name, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	return fd;
}

/*
 * dlopen()s the file open at *fd through /proc/self/fd/N, so the file loaded
 * is the one checked, whatever happens to its name meanwhile. The dynamic
 * loader first looks for an object already loaded under the same name and
 * returns that one: an earlier plugin loaded through the same fd number (one
 * still open, like the best match so far, or one that cannot be unloaded)
 * would come back instead of this file. So no number is used twice: the fd
 * moves to a number above every one used before (they start high, above
 * the few fds consoled keeps, and a run loads a handful of plugins).
 */
static void *backend_dlopen_fd(int *fd)
{
	static int next = 100;
	char path[64];
	int nfd;

	nfd = fcntl(*fd, F_DUPFD_CLOEXEC, next);
	if (nfd < 0)
		return NULL;
	close(*fd);
	*fd = nfd;
	next = nfd + 1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", nfd);
	return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

/* Loads plugin `name` of the checked directory dir_fd after the file and ABI
 * checks; NULL if it is skipped (logged). */
static void *backend_open(int dir_fd, const char *dir, const char *name,
			  const struct consoled_backend_plugin **ret)
{
	const struct consoled_backend_plugin *p;
	void *dl;
	int fd;

	fd = backend_open_file(dir_fd, dir, name);
	if (fd < 0)
		return NULL;
	errno = 0;
	(void)dlerror();
	dl = backend_dlopen_fd(&fd);
	if (!dl) {
		const char *e = dlerror();

		if (e)
			log_warning("Skipping plugin %s/%s: %s", dir, name, e);
		else
			log_warning_errno(errno, "Skipping plugin %s/%s: no file descriptor: %m",
					  dir, name);
		close(fd);
		return NULL;
	}
	close(fd);
	p = dlsym(dl, CONSOLED_BACKEND_PLUGIN_SYMBOL);
	if (!p) {
		log_warning("Skipping plugin %s/%s: no %s symbol", dir, name,
			    CONSOLED_BACKEND_PLUGIN_SYMBOL);
		dlclose(dl);
		return NULL;
	}
	if (p->abi_major != CONSOLED_BACKEND_ABI_MAJOR) {
		log_warning("Skipping plugin %s/%s: built for backend ABI %u, consoled has ABI %u",
			    dir, name, p->abi_major, CONSOLED_BACKEND_ABI_MAJOR);
		dlclose(dl);
		return NULL;
	}
	if (p->struct_size < offsetof(struct consoled_backend_plugin, create) + sizeof(p->create) ||
	    !p->name || !p->probe || !p->create) {
		log_warning("Skipping plugin %s/%s: incomplete plugin description", dir, name);
		dlclose(dl);
		return NULL;
	}
	*ret = p;
	return dl;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The checked plugin directory and its plugin file names, sorted. */
struct plugin_dir {
	const char *path;
	int fd;	   /* -1: no (usable) directory */
	int error; /* why not */
	char **names;
	size_t n;
};

static void plugin_dir_scan(struct plugin_dir *pd, const char *path)
{
	struct dirent *de;
	DIR *d;
	int fd;

	*pd = (struct plugin_dir){.path = path, .fd = -1};
	fd = backend_open_dir(path);
	if (fd < 0) {
		pd->error = fd;
		return;
	}
	pd->fd = fd;
	/* readdir() on a second fd of the same open directory: the checked
	 * one, not whatever the path names by now. */
	fd = fcntl(pd->fd, F_DUPFD_CLOEXEC, 0);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		pd->error =
		    log_warning_errno(errno, "Cannot read the backend directory %s: %m", path);
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len < 4 || strcmp(de->d_name + len - 3, ".so") != 0)
			continue;
		pd->names = xrealloc(pd->names, (pd->n + 1) * sizeof(char *));
		pd->names[pd->n++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (pd->n)
		qsort(pd->names, pd->n, sizeof(char *), cmp_names);
}

static void plugin_dir_done(struct plugin_dir *pd)
{
	for (size_t i = 0; i < pd->n; i++)
		free(pd->names[i]);
	free(pd->names);
	if (pd->fd >= 0)
		close(pd->fd);
	pd->names = NULL;
	pd->n = 0;
	pd->fd = -1;
}

int backend_load(struct fbdev *fb, const struct backend_config *cfg, struct backend **ret)
{
	struct consoled_fb_info info;
	struct plugin_dir pd;
	void *best_dl = NULL;
	const struct consoled_backend_plugin *best = NULL;
	int best_score = 0, r;
	bool named = cfg->name && strcmp(cfg->name, "auto") != 0;
	struct backend *b;

	*ret = NULL;
	if (cfg->name && strcmp(cfg->name, "none") == 0) {
		log_info("No blitter backend (--backend=none)");
		return 0;
	}

	/* A DRM driver's fbdev emulation: the mapping is a buffer the driver
	 * copies to the screen (its own scanout is elsewhere in video
	 * memory), so an engine's copies and fills would miss what is shown
	 * and leave stale pixels there. */
	if (backend_fb_is_drm(fb)) {
		if (named)
			return log_warning_errno(ENODEV,
						 "%s (%s) is a DRM driver's fbdev emulation: no "
						 "blitter works on it, not even '%s'; scrolling "
						 "without one",
						 fb->path, fb->fix.id, cfg->name);
		log_info("No blitter backend for %s (%s): a DRM driver's fbdev emulation", fb->path,
			 fb->fix.id);
		return 0;
	}

	backend_fb_info(fb, &info);
	plugin_dir_scan(&pd, cfg->dir ? cfg->dir : backend_dir());
	for (size_t i = 0; i < pd.n; i++) {
		const struct consoled_backend_plugin *p;
		void *dl = backend_open(pd.fd, pd.path, pd.names[i], &p);
		int score;

		if (!dl)
			continue;
		if (named && strcmp(p->name, cfg->name) != 0) {
			dlclose(dl);
			continue;
		}
		score = p->probe(&info);
		log_debug("Plugin %s (%s/%s): probe score %d", p->name, pd.path, pd.names[i],
			  score);
		if (score > best_score) {
			if (best_dl)
				dlclose(best_dl);
			best_dl = dl;
			best = p;
			best_score = score;
		} else
			dlclose(dl);
	}
	plugin_dir_done(&pd);
	if (!best) {
		if (named)
			return log_warning_errno(
			    ENOENT,
			    "Backend '%s' not found in %s or it does not drive "
			    "%s (%s); scrolling without a blitter",
			    cfg->name, pd.path, fb->path, fb->fix.id);
		log_info("No blitter backend for %s (%s)", fb->path, fb->fix.id);
		return 0;
	}

	b = xcalloc(1, sizeof(*b));
	b->dl = best_dl;
	b->plugin = best;
	b->fb = fb;
	b->host = (struct consoled_host){
	    .struct_size = sizeof(b->host),
	    .log = host_log,
	    .map_mmio = host_map_mmio,
	    .test_flags = cfg->test_flags | backend_env_test_flags(),
	    .userdata = b,
	};
	r = best->create(&info, &b->host, &b->impl);
	if (r < 0 || !b->impl || !b->impl->ops || !b->impl->ops->copy || !b->impl->ops->fill ||
	    !b->impl->ops->sync || !b->impl->ops->destroy) {
		log_warning_errno(
		    r < 0 ? r : EINVAL,
		    "Backend %s could not take the engine of %s: %m; scrolling without "
		    "a blitter",
		    best->name, fb->path);
		if (r >= 0 && b->impl && b->impl->ops && b->impl->ops->destroy)
			b->impl->ops->destroy(b->impl);
		b->impl = NULL;
		backend_free(b);
		return named ? -ENODEV : 0;
	}
	log_info("Blitter backend %s %s for %s (%s)", best->name,
		 best->version ? best->version : "", fb->path, fb->fix.id);
	*ret = b;
	return 0;
}

void backend_free(struct backend *b)
{
	if (!b)
		return;
	if (b->impl)
		b->impl->ops->destroy(b->impl);
	if (b->mmio_map)
		munmap(b->mmio_map, b->mmio_map_len);
	if (b->dl)
		dlclose(b->dl);
	free(b);
}

void backend_abandon(struct backend *b)
{
	if (!b)
		return;
	const struct consoled_backend_ops *o = b->impl->ops;

	if (o->struct_size >= offsetof(struct consoled_backend_ops, forget) + sizeof(o->forget) &&
	    o->forget) {
		o->forget(b->impl);
		log_info("Blitter backend %s let go with its device, without a last sync",
			 b->plugin->name);
	} else
		log_info("Blitter backend %s abandoned with its device, without a last sync (its "
			 "state is not freed: it has no forget())",
			 b->plugin->name);
	if (b->mmio_map)
		munmap(b->mmio_map, b->mmio_map_len);
	free(b);
}

void backend_list(struct fbdev *fb, FILE *out)
{
	struct consoled_fb_info info;
	struct plugin_dir pd;
	bool drm = fb && backend_fb_is_drm(fb);

	if (fb)
		backend_fb_info(fb, &info);
	plugin_dir_scan(&pd, backend_dir());
	fprintf(out, "Backend directory: %s%s\n", pd.path,
		pd.error && pd.error != -ENOENT ? " (refused, see the log)" : "");
	for (size_t i = 0; i < pd.n; i++) {
		const struct consoled_backend_plugin *p;
		void *dl = backend_open(pd.fd, pd.path, pd.names[i], &p);
		int score;

		if (!dl) {
			fprintf(out, "%s/%s: skipped (see the log)\n", pd.path, pd.names[i]);
			continue;
		}
		score = fb && !drm ? p->probe(&info) : 0;
		fprintf(out, "%-10s %-8s ABI %u.%u  %s  %s/%s\n", p->name,
			p->version ? p->version : "-", p->abi_major, p->abi_minor,
			!fb	    ? "(no framebuffer)"
			: drm	    ? "not used (DRM fbdev emulation)"
			: score > 0 ? "matches"
				    : "does not match",
			pd.path, pd.names[i]);
		if (p->description)
			fprintf(out, "           %s\n", p->description);
		dlclose(dl);
	}
	if (pd.n == 0)
		fprintf(out, "No plugins.\n");
	plugin_dir_done(&pd);
}

const char *backend_name(const struct backend *b)
{
	return b->plugin->name;
}

bool backend_ok(const struct backend *b)
{
	return b && !b->broken;
}

/* Drops the backend after an error: resets the engine where it can. */
static int backend_fail(struct backend *b, int r, const char *what)
{
	const struct consoled_backend_ops *o = b->impl->ops;

	if (b->broken)
		return r;
	b->broken = true;
	log_error_errno(r,
			"Blitter backend %s failed (%s): %m; dropping it, drawing in software "
			"and redrawing the screen",
			b->plugin->name, what);
	if (o->struct_size >= offsetof(struct consoled_backend_ops, reset) + sizeof(o->reset) &&
	    o->reset && o->reset(b->impl) < 0)
		log_warning("Blitter backend %s: engine reset failed", b->plugin->name);
	return r;
}

int backend_copy(struct backend *b, uint32_t sx, uint32_t sy, uint32_t dx, uint32_t dy, uint32_t w,
		 uint32_t h)
{
	int r;

	if (b->broken)
		return -EIO;
	r = b->impl->ops->copy(b->impl, sx, sy, dx, dy, w, h);
	if (r < 0)
		return backend_fail(b, r, "copy");
	b->pending = true;
	return 0;
}

int backend_fill(struct backend *b, uint32_t x, uint32_t y, uint32_t w, uint32_t h, uint32_t pixel)
{
	int r;

	if (b->broken)
		return -EIO;
	r = b->impl->ops->fill(b->impl, x, y, w, h, pixel);
	if (r < 0)
		return backend_fail(b, r, "fill");
	b->pending = true;
	return 0;
}

int backend_sync(struct backend *b)
{
	int r;

	if (b->broken)
		return -EIO;
	if (!b->pending)
		return 0;
	r = b->impl->ops->sync(b->impl, BACKEND_SYNC_TIMEOUT_USEC);
	if (r < 0)
		return backend_fail(b, r, r == -ETIMEDOUT ? "the engine did not go idle" : "sync");
	b->pending = false;
	return 0;
}

int backend_mode_changed(struct backend *b, struct fbdev *fb)
{
	const struct consoled_backend_ops *o = b->impl->ops;
	struct consoled_fb_info info;
	int r;

	if (b->broken)
		return -EIO;
	if (o->struct_size <
		offsetof(struct consoled_backend_ops, mode_changed) + sizeof(o->mode_changed) ||
	    !o->mode_changed)
		return 0;
	backend_fb_info(fb, &info);
	r = o->mode_changed(b->impl, &info);
	if (r < 0)
		return backend_fail(b, r, "mode change");
	return 0;
}
