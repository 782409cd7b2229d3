/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The boot mode file: the first consoled saves the mode it finds, every later
 * one (a restart after SIGKILL, a second instance on the same device) gets
 * that one back, never the mode a predecessor left; a file for another
 * device or boot, or one anybody but root could have written, is replaced;
 * a directory open to others is not used at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../daemon/devices/bootmode.h"
#include "tests.h"

static struct bootmode mode_of(unsigned yres_virtual, uint16_t c0)
{
	struct bootmode m;

	memset(&m, 0, sizeof(m));
	m.var.xres = m.var.xres_virtual = 640;
	m.var.yres = 480;
	m.var.yres_virtual = yres_virtual;
	m.var.bits_per_pixel = 8;
	m.cmap_len = 256;
	m.cmap[0][0] = c0;
	return m;
}

static struct bootmode_identity ident_of(uint64_t smem_start)
{
	struct bootmode_identity id;
	struct fb_fix_screeninfo fix;

	memset(&fix, 0, sizeof(fix));
	strcpy(fix.id, "CL Picasso4");
	fix.smem_start = smem_start;
	fix.smem_len = 4 << 20;
	bootmode_identity_init(&id, &fix);
	return id;
}

static void test_bootmode(void)
{
	char dir[] = "/tmp/test-bootmode-XXXXXX", path[256], sub[64];
	struct bootmode_identity id = ident_of(0xf0000000);
	struct bootmode boot = mode_of(480, 1), tall = mode_of(13106, 2), got;
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/run", dir);
	snprintf(path, sizeof(path), "%s/fb0.mode", sub);
	CHECK(id.boot_id[0] != 0);

	/* the first instance: its mode is the boot mode, in a 0700 dir */
	CHECK(bootmode_load_or_save(sub, "fb0.mode", &id, &boot, &got) == 0);
	CHECK_EQ_U(got.var.yres_virtual, 480);
	CHECK(stat(sub, &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);

	/* a restart after SIGKILL finds the tall mode: gets the boot mode */
	CHECK(bootmode_load_or_save(sub, "fb0.mode", &id, &tall, &got) == 1);
	CHECK_EQ_U(got.var.yres_virtual, 480);
	CHECK_EQ_U(got.cmap[0][0], 1);
	CHECK_EQ_U(got.cmap_len, 256);

	/* another device (the driver was reloaded elsewhere in memory): replaced */
	struct bootmode_identity other = ident_of(0xe0000000);
	CHECK(bootmode_load_or_save(sub, "fb0.mode", &other, &tall, &got) == 0);
	CHECK_EQ_U(got.var.yres_virtual, 13106);
	CHECK(bootmode_load_or_save(sub, "fb0.mode", &other, &boot, &got) == 1);
	CHECK_EQ_U(got.var.yres_virtual, 13106);

	/* a file others could have written is not believed */
	CHECK(chmod(path, 0644) == 0);
	CHECK(bootmode_load_or_save(sub, "fb0.mode", &other, &boot, &got) == 0);
	CHECK_EQ_U(got.var.yres_virtual, 480);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(chown(path, 1, 1) == 0);
	CHECK(bootmode_load_or_save(sub, "fb0.mode", &other, &tall, &got) == 0);
	CHECK_EQ_U(got.var.yres_virtual, 13106);

	/* a truncated file is replaced */
	CHECK(truncate(path, 10) == 0);
	CHECK(bootmode_load_or_save(sub, "fb0.mode", &other, &boot, &got) == 0);
	CHECK(bootmode_load_or_save(sub, "fb0.mode", &other, &tall, &got) == 1);
	CHECK_EQ_U(got.var.yres_virtual, 480);

	/* a directory open to others, or a symlink to one, is not used */
	CHECK(chmod(sub, 0755) == 0);
	CHECK(bootmode_load_or_save(sub, "fb0.mode", &other, &tall, &got) < 0);
	CHECK(chmod(sub, 0700) == 0);
	snprintf(path, sizeof(path), "%s/link", dir);
	CHECK(symlink(sub, path) == 0);
	CHECK(bootmode_load_or_save(path, "fb0.mode", &other, &tall, &got) < 0);
	unlink(path);

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

/* A device that goes takes its file with it, but only its own: another
 * consoled may already have saved the successor's there. */
static void test_bootmode_drop(void)
{
	char dir[] = "/tmp/test-bootmode-XXXXXX", path[256];
	struct bootmode_identity old = ident_of(0xf0000000), next = ident_of(0xe0000000);
	struct bootmode boot = mode_of(480, 1), got;
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(chmod(dir, 0700) == 0);
	snprintf(path, sizeof(path), "%s/fb0.mode", dir);
	CHECK(bootmode_drop(dir, "fb0.mode", &old) == 0); /* none: nothing to do */

	CHECK(bootmode_load_or_save(dir, "fb0.mode", &next, &boot, &got) == 0);
	CHECK(bootmode_drop(dir, "fb0.mode", &old) == 0); /* the successor's stays */
	CHECK(stat(path, &st) == 0);
	CHECK(bootmode_load(dir, "fb0.mode", &next, &got) == 1);

	CHECK(bootmode_drop(dir, "fb0.mode", &next) == 1);
	CHECK(stat(path, &st) < 0 && errno == ENOENT);
	CHECK(bootmode_drop(dir, "fb0.mode", &next) == 0);

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

int main(void)
{
	RUN(test_bootmode);
	RUN(test_bootmode_drop);
	return TESTS_RESULT();
}
