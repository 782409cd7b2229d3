/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A plugin that claims another ABI major: consoled must refuse to load it
 * (tests/vm/vmtest.py, check "backend"). It would match every framebuffer.
 */
#include <consoled/backend.h>
#include <errno.h>

static int bad_probe(const struct consoled_fb_info *fb)
{
	(void)fb;
	return 1000;
}

static int bad_create(const struct consoled_fb_info *fb, const struct consoled_host *host,
		      struct consoled_backend **ret)
{
	(void)fb;
	(void)host;
	(void)ret;
	return -ENOTSUP;
}

const struct consoled_backend_plugin consoled_backend_plugin = {
    .abi_major = CONSOLED_BACKEND_ABI_MAJOR + 98,
    .abi_minor = 0,
    .struct_size = sizeof(struct consoled_backend_plugin),
    .name = "badabi",
    .version = "0",
    .description = "test plugin with a foreign ABI major",
    .probe = bad_probe,
    .create = bad_create,
};
