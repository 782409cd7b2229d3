/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The last boot's crash, as the kernel's pstore kept it: a panic's or an
 * oops's kernel log, written by a kmsg dumper into memory that survives a
 * reboot (ramoops), EFI variables (efi-pstore) or ERST, and shown by the
 * kernel after the next boot as files in /sys/fs/pstore. While consoled has
 * the VT in graphics mode the kernel's console draws nothing, so a panic
 * is never seen on the screen: this record is its only witness. The login
 * screen (getty.c) says there is one; the kernel messages' view (seat.c)
 * shows its text before this boot's messages.
 *
 * The files: `dmesg-BACKEND-ID` (dmesg-ramoops-0, dmesg-efi-NNN), each
 * starting with a line "Panic#N PartM" or "Oops#N PartM" (the dump's reason
 * and count, kmsg_dump_reason_str()); a dump larger than the backend's
 * record is split in parts, Part1 holding the newest text (the end of the
 * log), so the text is the parts from the highest down to Part1, each
 * without its first line. The rest are lines "<PRIO>[ sec.usec] text" as
 * the syslog format gives them. A file the kernel could not decompress
 * ends in ".enc.z" and is skipped. Other reasons (Emergency, Shutdown) and
 * other types (console, pmsg, ftrace) are no crash and are not looked at.
 *
 * systemd-pstore (sysinit.target, before consoled) moves every file to
 * /var/lib/systemd/pstore at boot and deletes it from pstore: systemd 252
 * (Debian 12) puts an EFI record's parts into a subdirectory named by the
 * record id without its last 6 digits and ramoops files flat into the
 * archive itself; systemd 253 and later use `ID/COUNT/` for EFI and `ID/`
 * for ERST. Copies are made at boot, so their mtime is that boot's. Both
 * layouts are read: the archive and its subdirectories two levels down.
 *
 * Which record is the last boot's (consoled(8), KERNEL MESSAGES):
 * - In /sys/fs/pstore a record stays until someone deletes it (nothing
 *   here deletes anything), so without systemd-pstore the same record is
 *   there at every boot. A record counts when its time (the file's mtime,
 *   the time of the dump) is before this boot's start (give or take
 *   PSTORE_CLOCK_SLACK_SEC) and at most PSTORE_RECENT_SEC before it: a
 *   panic followed by a reset within that time is announced, a crash
 *   from days ago is not announced at every boot. Within that time every
 *   boot announces it again, unless something (systemd-pstore) took it
 *   away.
 * - In the archive a file counts when it was made during this boot (its
 *   mtime at or after this boot's start): systemd-pstore found it in
 *   pstore at this boot, so it came from the boot before.
 * The newest such Part1 is the crash (ties: a panic before an oops, then
 * the greater name); /sys/fs/pstore first, then the archive.
 *
 * Everything read is bounded and checked: at most PSTORE_ENTRIES_MAX
 * directory entries a directory, PSTORE_PARTS_MAX parts, PSTORE_FILE_MAX
 * bytes a file and PSTORE_TEXT_MAX bytes of text; regular files only,
 * opened with O_NOFOLLOW (a symlink is skipped, never followed out of the
 * directory) and O_NONBLOCK (a FIFO cannot hang the reader). A file that
 * does not start with a crash's header line is no crash. Nothing here
 * logs: the callers decide what to say.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Directory entries looked at in one directory. */
#define PSTORE_ENTRIES_MAX 1024
/* Parts of one record read at most (efi-pstore: 14 parts of 1 KiB for the
 * default 10 KiB pstore.kmsg_bytes). */
#define PSTORE_PARTS_MAX 64
/* Bytes read of one file at most. */
#define PSTORE_FILE_MAX (256 * 1024)
/* Bytes of a record's text at most: the oldest parts are left out. */
#define PSTORE_TEXT_MAX (512 * 1024)
/* How long before this boot a record in /sys/fs/pstore may have been made
 * to count as the last boot's: 12 hours (a machine that froze overnight). */
#define PSTORE_RECENT_SEC (12 * 3600)
/* A record in /sys/fs/pstore may look this much younger than this boot:
 * the clock starts from the RTC's whole seconds, and a fast reset after a
 * panic starts the next boot within the second. */
#define PSTORE_CLOCK_SLACK_SEC 10
/* Parts of one dump are written within this many seconds of each other
 * (efi-pstore's ids were seen to cross a second). */
#define PSTORE_PART_SLACK_SEC 5

enum pstore_reason {
	PSTORE_OOPS,
	PSTORE_PANIC,
};

/* Where to look; tests put directories of their own there. */
struct pstore_paths {
	const char *pstore;  /* /sys/fs/pstore */
	const char *archive; /* /var/lib/systemd/pstore (NULL: none) */
};
extern const struct pstore_paths pstore_system_paths;

struct pstore_crash {
	enum pstore_reason reason;
	bool archived;	 /* found in the archive, not in pstore */
	int64_t time;	 /* its Part1's mtime, seconds since the epoch */
	unsigned parts;	 /* parts found */
	char where[512]; /* "pstore dmesg-ramoops-0", or the archive's path */
	char *text;	 /* with text: the parts' lines, oldest first; else NULL */
	size_t len;
};

/* This boot's start in seconds since the epoch (CLOCK_REALTIME less
 * CLOCK_BOOTTIME), as /proc/stat's btime. */
int64_t pstore_boot_time(void);

/* The last boot's crash (see above) for a boot started at boot_time:
 * 1 with *ret filled (its text read too when `text`: free it with
 * pstore_crash_fini()), 0 when there is none. Directories that are missing
 * or unreadable count as empty. */
int pstore_find(const struct pstore_paths *paths, int64_t boot_time, bool text,
		struct pstore_crash *ret);
void pstore_crash_fini(struct pstore_crash *c);

/* "panic" or "oops". */
const char *pstore_reason_name(enum pstore_reason r);

/* One line of a record's text, "<PRIO>[ sec.usec] text": true with the
 * level (PRIO & 7), the time in microseconds and where the text starts;
 * false for a line in another form (untouched then). */
bool pstore_parse_line(const char *line, unsigned *ret_level, uint64_t *ret_usec,
		       const char **ret_text);
