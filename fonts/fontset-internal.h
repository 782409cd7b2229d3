/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * What the unit tests may look at inside a fontset: how full its bounded
 * caches are and how often it asked fontconfig, so that tests can show the
 * bounds hold and that negative answers are cached. Not for the daemon.
 */
#include <stddef.h>

#include "fontset.h"

struct fontset_stats {
	size_t cache_capacity;	  /* coverage cache entries */
	size_t cache_used;	  /* entries holding a coverage map */
	size_t cache_bytes;	  /* bytes of the coverage cache (entries and maps) */
	unsigned fallback_open;	  /* fallback faces open now (bounded) */
	unsigned fallback_max;	  /* their bound */
	unsigned char_capacity;	  /* entries of the per-character fallback answer cache */
	unsigned long fc_lookups; /* fallback searches through fontconfig's font list */
	bool fc_loaded;		  /* fontconfig's configuration and cache are loaded */
	bool ft_loaded;		  /* FreeType is initialised */
	const char *main_file;	  /* file of the main font; NULL for the built-in font */
};

void fontset_get_stats(const struct fontset *fs, struct fontset_stats *ret);
