/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/*
 * The text above the login prompt, as agetty(8) shows it: /etc/issue and the
 * *.issue files of /etc/issue.d (in version order), or, without /etc/issue,
 * /run/issue and /run/issue.d, else /usr/lib/issue and /usr/lib/issue.d;
 * with agetty's backslash escapes expanded (consoled(8), LOGIN SCREEN):
 *
 *   \s \n \r \v \m  uname's system, node name, release, version, machine
 *   \o \O           NIS domain name; the node name's DNS domain (no lookup)
 *   \l              the VT's name (tty1), not the pty's
 *   \b              the tty's output speed
 *   \d \t           date and time, as agetty writes them
 *   \u \U           the number of users logged in ("3", "3 users", "1 user")
 *   \4 \6 \4{if}    the first IPv4/IPv6 address of an interface that is up
 *                   and not loopback (IPv6: not link-local), or of `if`
 *   \S \S{VAR}      os-release's PRETTY_NAME (uname's system without it),
 *                   or its VAR
 *   \e \e{name}     ESC, or the sequence of one of agetty's colour names
 *   \\              a backslash; any other \x is x
 *
 * Everything the escapes show comes in through struct issue_info, so the
 * expansion is a pure function (test-issue); issue_info_collect() fills it
 * from the system. Files are read up to ISSUE_FILE_MAX bytes each and only
 * if regular (a FIFO or device named /etc/issue cannot block the login);
 * the text is cut at ISSUE_TEXT_MAX bytes.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/utsname.h>
#include <time.h>

struct ifaddrs;

#define ISSUE_FILE_MAX (64 * 1024)
#define ISSUE_TEXT_MAX (64 * 1024)
/* At most this many files of an issue.d directory are read. */
#define ISSUE_DIR_MAX 128

struct issue_info {
	char tty[16];		     /* \l: "tty1"; "pts/N" without a VT */
	struct utsname uts;	     /* \s \n \r \v \m \O */
	char domain[65];	     /* \o: getdomainname(), "" if none */
	unsigned users;		     /* \u \U */
	unsigned long baud;	     /* \b; 0 = unknown */
	struct tm now;		     /* \d \t, local time */
	const struct ifaddrs *addrs; /* \4 \6; not owned */
	const char *os_release;	     /* \S: the file's text, or NULL; not owned */
};

/* Appends the expansion of the len bytes at text to *buf (of *used bytes,
 * *size allocated; grown with realloc, at most ISSUE_TEXT_MAX bytes, always
 * NUL-terminated). Never fails: an allocation failure aborts (xmalloc). */
void issue_expand(const char *text, size_t len, const struct issue_info *info, char **buf,
		  size_t *used, size_t *size);

/* The issue text of the system under root ("" for "/"; tests use a
 * directory), expanded with info; *ret is NUL-terminated (free() it), ""
 * when there is no file. */
void issue_read(const char *root, const struct issue_info *info, char **ret, size_t *ret_len);

/* Reads up to max bytes of a regular file (no FIFO, device or directory)
 * into *ret (NUL-terminated; free() it); 0 or a negative errno. */
int issue_read_file(const char *path, size_t max, char **ret, size_t *ret_len);

/* The value of `name` in os-release text (KEY=value lines, value maybe in
 * quotes with backslash escapes), into ret (size bytes, cut); false if
 * the key is not there. */
bool issue_os_release_value(const char *text, const char *name, char *ret, size_t size);

/* The first address of family (AF_INET, AF_INET6) of an interface that is
 * up and not loopback (IPv6: not link-local), of the interface `name` if it
 * is not NULL, as text into ret; false if there is none. */
bool issue_address(const struct ifaddrs *addrs, int family, const char *name, char *ret,
		   size_t size);

/* Fills info from the system for the VT vt and the tty fd (its speed);
 * addrs and os_release are allocated here: issue_info_release(). */
void issue_info_collect(struct issue_info *info, unsigned vt, int tty_fd, const char *root);
void issue_info_release(struct issue_info *info);
