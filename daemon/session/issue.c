/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#include <utmpx.h>

#include "issue.h"
#include "../util/util.h"

/* The longest argument in braces (\S{VAR}, \4{if}, \e{name}). */
#define ISSUE_ARG_MAX 64

static void issue_put(char **buf, size_t *used, size_t *size, const char *s, size_t n)
{
	if (*used >= ISSUE_TEXT_MAX)
		return;
	n = MIN(n, ISSUE_TEXT_MAX - *used);
	if (*used + n + 1 > *size) {
		size_t want = MAX(*size * 2, *used + n + 1);

		*buf = xrealloc(*buf, want);
		*size = want;
	}
	memcpy(*buf + *used, s, n);
	*used += n;
	(*buf)[*used] = '\0';
}

#define PUTS(s) issue_put(buf, used, size, (s), strlen(s))

/* agetty's colour names for \e{name}. */
static const struct {
	const char *name, *seq;
} issue_colours[] = {
    {"black", "\033[30m"},	{"blink", "\033[5m"},	      {"blue", "\033[34m"},
    {"bold", "\033[1m"},	{"brown", "\033[33m"},	      {"cyan", "\033[36m"},
    {"darkgray", "\033[1;30m"}, {"gray", "\033[37m"},	      {"green", "\033[32m"},
    {"halfbright", "\033[2m"},	{"lightblue", "\033[1;34m"},  {"lightcyan", "\033[1;36m"},
    {"lightgray", "\033[37m"},	{"lightgreen", "\033[1;32m"}, {"lightmagenta", "\033[1;35m"},
    {"lightred", "\033[1;31m"}, {"magenta", "\033[35m"},      {"red", "\033[31m"},
    {"reset", "\033[0m"},	{"reverse", "\033[7m"},	      {"yellow", "\033[1;33m"},
    {"white", "\033[1;37m"},
};

bool issue_os_release_value(const char *text, const char *name, char *ret, size_t size)
{
	size_t nlen = strlen(name);

	if (!text || size == 0)
		return false;
	for (const char *line = text; *line;) {
		const char *end = strchrnul(line, '\n');
		const char *p = line + strspn(line, " \t");

		if (strncmp(p, name, nlen) == 0 && p[nlen] == '=' && p + nlen < end) {
			size_t n = 0;
			char quote = 0;

			p += nlen + 1;
			if (*p == '"' || *p == '\'')
				quote = *p++;
			for (; p < end && *p != quote; p++) {
				if (quote == '"' && *p == '\\' && p + 1 < end)
					p++;
				if (!quote && (*p == ' ' || *p == '\t'))
					break;
				if (n + 1 < size)
					ret[n++] = *p;
			}
			ret[n] = '\0';
			return true;
		}
		line = *end ? end + 1 : end;
	}
	return false;
}

bool issue_address(const struct ifaddrs *addrs, int family, const char *name, char *ret,
		   size_t size)
{
	for (const struct ifaddrs *a = addrs; a; a = a->ifa_next) {
		const void *in;

		if (!a->ifa_addr || a->ifa_addr->sa_family != family || !a->ifa_name)
			continue;
		if (name ? strcmp(a->ifa_name, name) != 0
			 : !(a->ifa_flags & IFF_UP) || (a->ifa_flags & IFF_LOOPBACK))
			continue;
		if (family == AF_INET) {
			in = &((const struct sockaddr_in *)(const void *)a->ifa_addr)->sin_addr;
		} else {
			const struct in6_addr *a6 =
			    &((const struct sockaddr_in6 *)(const void *)a->ifa_addr)->sin6_addr;

			if (!name && IN6_IS_ADDR_LINKLOCAL(a6))
				continue;
			in = a6;
		}
		if (inet_ntop(family, in, ret, (socklen_t)size))
			return true;
	}
	return false;
}

/* The argument of an escape, "{...}" right after it: into arg, with *i past
 * it; false (and *i unchanged) if there is none. */
static bool issue_arg(const char *text, size_t len, size_t *i, char *arg)
{
	size_t j = *i;

	if (j >= len || text[j] != '{')
		return false;
	for (j++; j < len && text[j] != '}'; j++)
		if (j - *i - 1 >= ISSUE_ARG_MAX - 1 || text[j] == '\n')
			return false;
	if (j >= len)
		return false;
	memcpy(arg, text + *i + 1, j - *i - 1);
	arg[j - *i - 1] = '\0';
	*i = j + 1;
	return true;
}

static void issue_escape(char c, const char *text, size_t len, size_t *i,
			 const struct issue_info *info, char **buf, size_t *used, size_t *size)
{
	static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	char arg[ISSUE_ARG_MAX], tmp[256];
	bool has_arg;

	switch (c) {
	case 's':
		PUTS(info->uts.sysname);
		return;
	case 'n':
		PUTS(info->uts.nodename);
		return;
	case 'r':
		PUTS(info->uts.release);
		return;
	case 'v':
		PUTS(info->uts.version);
		return;
	case 'm':
		PUTS(info->uts.machine);
		return;
	case 'o':
		/* agetty shows the kernel's "(none)" as it is. */
		PUTS(info->domain[0] ? info->domain : "unknown_domain");
		return;
	case 'O': {
		const char *dot = strchr(info->uts.nodename, '.');

		PUTS(dot && dot[1] ? dot + 1 : "unknown_domain");
		return;
	}
	case 'l':
		PUTS(info->tty);
		return;
	case 'b':
		if (info->baud) {
			snprintf(tmp, sizeof(tmp), "%lu", info->baud);
			PUTS(tmp);
		}
		return;
	case 'd':
		if ((unsigned)info->now.tm_wday < 7 && (unsigned)info->now.tm_mon < 12) {
			snprintf(tmp, sizeof(tmp), "%s %s %2d  %d", days[info->now.tm_wday],
				 months[info->now.tm_mon], info->now.tm_mday,
				 info->now.tm_year + 1900);
			PUTS(tmp);
		}
		return;
	case 't':
		snprintf(tmp, sizeof(tmp), "%02d:%02d:%02d", info->now.tm_hour, info->now.tm_min,
			 info->now.tm_sec);
		PUTS(tmp);
		return;
	case 'u':
	case 'U':
		/* agetty's \u has a blank after the number. */
		snprintf(tmp, sizeof(tmp), "%u ", info->users);
		if (c == 'U')
			snprintf(tmp, sizeof(tmp), "%u %s", info->users,
				 info->users == 1 ? "user" : "users");
		PUTS(tmp);
		return;
	case '4':
	case '6':
		has_arg = issue_arg(text, len, i, arg);
		if (issue_address(info->addrs, c == '4' ? AF_INET : AF_INET6, has_arg ? arg : NULL,
				  tmp, sizeof(tmp)))
			PUTS(tmp);
		return;
	case 'S':
		if (issue_arg(text, len, i, arg)) {
			if (issue_os_release_value(info->os_release, arg, tmp, sizeof(tmp)))
				PUTS(tmp);
		} else if (issue_os_release_value(info->os_release, "PRETTY_NAME", tmp,
						  sizeof(tmp))) {
			PUTS(tmp);
		} else {
			PUTS(info->uts.sysname);
		}
		return;
	case 'e':
		if (issue_arg(text, len, i, arg)) {
			for (size_t k = 0; k < ELEMENTSOF(issue_colours); k++)
				if (strcmp(arg, issue_colours[k].name) == 0)
					PUTS(issue_colours[k].seq);
		} else {
			PUTS("\033");
		}
		return;
	default:
		issue_put(buf, used, size, &c, 1);
		return;
	}
}

void issue_expand(const char *text, size_t len, const struct issue_info *info, char **buf,
		  size_t *used, size_t *size)
{
	if (!*buf) {
		*size = 256;
		*buf = xmalloc(*size);
		*used = 0;
		(*buf)[0] = '\0';
	}
	for (size_t i = 0; i < len && *used < ISSUE_TEXT_MAX;) {
		const char *bs = memchr(text + i, '\\', len - i);
		size_t run = bs ? (size_t)(bs - text) - i : len - i;

		issue_put(buf, used, size, text + i, run);
		i += run;
		if (i >= len)
			break;
		/* A backslash at the very end shows nothing. */
		if (i + 1 >= len)
			break;
		i += 2;
		issue_escape(text[i - 1], text, len, &i, info, buf, used, size);
	}
}

int issue_read_file(const char *path, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_(closep) int fd = -1;
	struct stat st;
	size_t n = 0;
	char *buf;

	/* Not even opened unless a regular file: some devices act on open
	 * (a serial line's DTR, a watchdog). O_NONBLOCK: should it become a
	 * FIFO in between, opening it does not wait for a writer. */
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADFD;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADFD;
	buf = xmalloc(max + 1);
	while (n < max) {
		ssize_t k = read(fd, buf + n, max - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int r = -errno;

			free(buf);
			return r;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	*ret = buf;
	*ret_len = n;
	return 0;
}

/* Appends one file's expansion; 0 if it was there. */
static int issue_add_file(const char *path, const struct issue_info *info, char **buf, size_t *used,
			  size_t *size)
{
	_cleanup_(freep) char *text = NULL;
	size_t len;
	int r;

	r = issue_read_file(path, ISSUE_FILE_MAX, &text, &len);
	if (r < 0)
		return r;
	issue_expand(text, len, info, buf, used, size);
	return 0;
}

static int issue_dir_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	if (d->d_name[0] == '.' || n <= strlen(".issue") ||
	    strcmp(d->d_name + n - strlen(".issue"), ".issue") != 0)
		return 0;
	return d->d_type == DT_REG || d->d_type == DT_LNK || d->d_type == DT_UNKNOWN;
}

/* The *.issue files of dir in version order (as agetty's scandir with
 * versionsort); 0 if the directory was there. */
static int issue_add_dir(const char *dir, const struct issue_info *info, char **buf, size_t *used,
			 size_t *size)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, issue_dir_filter, versionsort);

	if (n < 0)
		return -errno;
	for (int k = 0; k < n; k++) {
		char path[4096];

		if (k < ISSUE_DIR_MAX && snprintf(path, sizeof(path), "%s/%s", dir,
						  names[k]->d_name) < (int)sizeof(path))
			issue_add_file(path, info, buf, used, size);
		free(names[k]);
	}
	free(names);
	return 0;
}

void issue_read(const char *root, const struct issue_info *info, char **ret, size_t *ret_len)
{
	/* agetty's order: /etc/issue with /etc/issue.d; without /etc/issue,
	 * whatever of /run's pair is there, else /usr/lib's. */
	static const char *const bases[] = {"/etc/issue", "/run/issue", "/usr/lib/issue"};
	char *buf = NULL;
	size_t used = 0, size = 0;

	issue_expand("", 0, info, &buf, &used, &size);
	for (size_t k = 0; k < ELEMENTSOF(bases); k++) {
		char file[4096], dir[4096];
		bool found;

		snprintf(file, sizeof(file), "%s%s", root, bases[k]);
		snprintf(dir, sizeof(dir), "%s%s.d", root, bases[k]);
		if (k == 0) {
			if (access(file, R_OK) != 0)
				continue;
			issue_add_file(file, info, &buf, &used, &size);
			issue_add_dir(dir, info, &buf, &used, &size);
			break;
		}
		found = issue_add_file(file, info, &buf, &used, &size) == 0;
		found |= issue_add_dir(dir, info, &buf, &used, &size) == 0;
		if (found)
			break;
	}
	*ret = buf;
	*ret_len = used;
}

static unsigned long issue_speed(speed_t s)
{
	static const struct {
		speed_t code;
		unsigned long baud;
	} speeds[] = {
	    {B300, 300},       {B1200, 1200},	  {B2400, 2400},     {B4800, 4800},
	    {B9600, 9600},     {B19200, 19200},	  {B38400, 38400},   {B57600, 57600},
	    {B115200, 115200}, {B230400, 230400}, {B460800, 460800}, {B921600, 921600},
	};

	for (size_t k = 0; k < ELEMENTSOF(speeds); k++)
		if (speeds[k].code == s)
			return speeds[k].baud;
	return 0;
}

void issue_info_collect(struct issue_info *info, unsigned vt, int tty_fd, const char *root)
{
	struct ifaddrs *addrs = NULL;
	struct termios tio;
	struct utmpx *u;
	char path[4096];
	char *text = NULL;
	size_t len;
	time_t t = time(NULL);

	memset(info, 0, sizeof(*info));
	if (vt)
		snprintf(info->tty, sizeof(info->tty), "tty%u", vt);
	else if (ttyname_r(tty_fd, path, sizeof(path)) == 0 && strncmp(path, "/dev/", 5) == 0 &&
		 strlen(path + 5) < sizeof(info->tty))
		/* a seat without VTs: the session's pty ("pts/3"), as agetty's \l
		 * on a pty */
		memcpy(info->tty, path + 5, strlen(path + 5) + 1);
	if (uname(&info->uts) < 0)
		memset(&info->uts, 0, sizeof(info->uts));
	if (getdomainname(info->domain, sizeof(info->domain) - 1) < 0)
		info->domain[0] = '\0';
	if (tcgetattr(tty_fd, &tio) == 0)
		info->baud = issue_speed(cfgetospeed(&tio));
	localtime_r(&t, &info->now);
	setutxent();
	while ((u = getutxent()))
		if (u->ut_type == USER_PROCESS && u->ut_user[0])
			info->users++;
	endutxent();
	if (getifaddrs(&addrs) == 0)
		info->addrs = addrs;
	snprintf(path, sizeof(path), "%s/etc/os-release", root);
	if (issue_read_file(path, ISSUE_FILE_MAX, &text, &len) < 0) {
		snprintf(path, sizeof(path), "%s/usr/lib/os-release", root);
		if (issue_read_file(path, ISSUE_FILE_MAX, &text, &len) < 0)
			text = NULL;
	}
	info->os_release = text;
}

void issue_info_release(struct issue_info *info)
{
	if (info->addrs)
		freeifaddrs((struct ifaddrs *)info->addrs);
	free((char *)info->os_release);
	info->addrs = NULL;
	info->os_release = NULL;
}
