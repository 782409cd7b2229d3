/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "backend"
#include <consoled/backend.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
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
#include "log.h"
#include "util/util.h"

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
	const char *d = getenv("CONSOLED_BACKEND_DIR");

	return d && *d ? d : BACKEND_DIR;
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
	size_t page_off, off, len;
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
	off = ((fb->fix.smem_start & (uint64_t)(page - 1)) + fb->fix.smem_len + (size_t)page - 1) &
	      ~((size_t)page - 1);
	len = (page_off + fb->fix.mmio_len + (size_t)page - 1) & ~((size_t)page - 1);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fb->fd, (off_t)off);
	if (p == MAP_FAILED)
		return NULL;
	b->mmio_map = p;
	b->mmio_map_len = len;
	*ret_len = fb->fix.mmio_len;
	return (uint8_t *)p + page_off;
}

/* Opens a plugin file after the ownership and ABI checks; NULL if skipped. */
static void *backend_open(const char *path, const struct consoled_backend_plugin **ret)
{
	const struct consoled_backend_plugin *p;
	struct stat st;
	void *dl;

	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		log_warning("Skipping plugin %s: it must be owned by root and not writable by "
			    "group or others (owner %u, mode %04o)",
			    path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return NULL;
	}
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		log_warning("Skipping plugin %s: %s", path, dlerror());
		return NULL;
	}
	p = dlsym(dl, CONSOLED_BACKEND_PLUGIN_SYMBOL);
	if (!p) {
		log_warning("Skipping plugin %s: no %s symbol", path,
			    CONSOLED_BACKEND_PLUGIN_SYMBOL);
		dlclose(dl);
		return NULL;
	}
	if (p->abi_major != CONSOLED_BACKEND_ABI_MAJOR) {
		log_warning("Skipping plugin %s: built for backend ABI %u, consoled has ABI %u",
			    path, p->abi_major, CONSOLED_BACKEND_ABI_MAJOR);
		dlclose(dl);
		return NULL;
	}
	if (p->struct_size < offsetof(struct consoled_backend_plugin, create) + sizeof(p->create) ||
	    !p->name || !p->probe || !p->create) {
		log_warning("Skipping plugin %s: incomplete plugin description", path);
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

/* The plugin files of the directory, sorted; returns how many. */
static size_t backend_scan(char ***ret)
{
	const char *dir = backend_dir();
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		log_debug_errno(errno, "No backend directory %s: %m", dir);
		*ret = NULL;
		return 0;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char *path;

		if (len < 4 || strcmp(de->d_name + len - 3, ".so") != 0)
			continue;
		path = xmalloc(strlen(dir) + len + 2);
		sprintf(path, "%s/%s", dir, de->d_name);
		names = xrealloc(names, (n + 1) * sizeof(char *));
		names[n++] = path;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(char *), cmp_names);
	*ret = names;
	return n;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int backend_load(struct fbdev *fb, const struct backend_config *cfg, struct backend **ret)
{
	struct consoled_fb_info info;
	char **names;
	size_t n;
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

	backend_fb_info(fb, &info);
	n = backend_scan(&names);
	for (size_t i = 0; i < n; i++) {
		const struct consoled_backend_plugin *p;
		void *dl = backend_open(names[i], &p);
		int score;

		if (!dl)
			continue;
		if (named && strcmp(p->name, cfg->name) != 0) {
			dlclose(dl);
			continue;
		}
		score = p->probe(&info);
		log_debug("Plugin %s (%s): probe score %d", p->name, names[i], score);
		if (score > best_score) {
			if (best_dl)
				dlclose(best_dl);
			best_dl = dl;
			best = p;
			best_score = score;
		} else
			dlclose(dl);
	}
	free_names(names, n);

	if (!best) {
		if (named)
			return log_warning_errno(
			    ENOENT,
			    "Backend '%s' not found in %s or it does not drive "
			    "%s (%s); scrolling without a blitter",
			    cfg->name, backend_dir(), fb->path, fb->fix.id);
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
	    .test_flags = cfg->test_flags,
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

void backend_list(struct fbdev *fb, FILE *out)
{
	struct consoled_fb_info info;
	char **names;
	size_t n;

	if (fb)
		backend_fb_info(fb, &info);
	n = backend_scan(&names);
	fprintf(out, "Backend directory: %s\n", backend_dir());
	for (size_t i = 0; i < n; i++) {
		const struct consoled_backend_plugin *p;
		void *dl = backend_open(names[i], &p);
		int score;

		if (!dl) {
			fprintf(out, "%s: skipped (see the log)\n", names[i]);
			continue;
		}
		score = fb ? p->probe(&info) : 0;
		fprintf(out, "%-10s %-8s ABI %u.%u  %s  %s\n", p->name,
			p->version ? p->version : "-", p->abi_major, p->abi_minor,
			!fb	    ? "(no framebuffer)"
			: score > 0 ? "matches"
				    : "does not match",
			names[i]);
		if (p->description)
			fprintf(out, "           %s\n", p->description);
		dlclose(dl);
	}
	if (n == 0)
		fprintf(out, "No plugins.\n");
	free_names(names, n);
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
