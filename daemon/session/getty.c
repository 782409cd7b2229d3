/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "getty"
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "getty.h"
#include "issue.h"
#include "../util/log.h"
#include "../util/pstore.h"
#include "../util/util.h"

bool getty_is_default_login(char *const *argv)
{
	return argv && argv[0] && strcmp(argv[0], "/bin/login") == 0 && argv[1] &&
	       strcmp(argv[1], "-p") == 0 && !argv[2];
}

bool getty_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= GETTY_NAME_MAX || name[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '_' || c == '-' || c == '@')
			continue;
		if (c == '$' && i == n - 1)
			continue;
		return false;
	}
	return true;
}

int getty_autologin_parse(const char *value, unsigned vt, char *ret, size_t size)
{
	const char *at = strrchr(value, '@');
	char name[GETTY_NAME_MAX];
	size_t n = at ? (size_t)(at - value) : strlen(value);

	/* "USER@ttyN": the last '@' names the VT if what follows is a VT. */
	if (at && strncmp(at + 1, "tty", 3) == 0) {
		unsigned v;

		if (parse_uint(at + 4, 1, 63, &v) < 0 || at[4] == '0' || at[4] == '+')
			return -EINVAL;
		if (v != vt)
			return 0;
	} else {
		n = strlen(value);
	}
	if (n >= sizeof(name) || n >= size)
		return -EINVAL;
	memcpy(name, value, n);
	name[n] = '\0';
	if (!getty_name_valid(name))
		return -EINVAL;
	memcpy(ret, name, n + 1);
	return 1;
}

int getty_autologin_user(const char *value, unsigned vt, char *ret, size_t size)
{
	char name[GETTY_NAME_MAX];
	int r;

	if (!value || !*value)
		return 0;
	r = getty_autologin_parse(value, vt, name, sizeof(name));
	if (r < 0) {
		log_warning("autologin=%s: expected USER or USER@ttyN, ignoring", value);
		return 0;
	}
	if (r == 0)
		return 0;
	errno = 0;
	if (!getpwnam(name)) {
		log_warning("autologin=%s: no such user, ignoring", value);
		return 0;
	}
	if (strlen(name) >= size)
		return 0;
	strcpy(ret, name);
	log_info("Automatic login of %s on tty%u", name, vt);
	return 1;
}

static void getty_write(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t k = write(STDOUT_FILENO, s, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		s += k;
		n -= (size_t)k;
	}
}

/* The last boot's crash, if pstore kept one (pstore.h), in one line under
 * the issue text: the kernel's console drew nothing of it while consoled
 * had the VT, and the view (Ctrl+Logo+K) shows its text. Only the files'
 * first lines are read. */
static void getty_crash_line(void)
{
	struct pstore_crash c;
	char line[640];
	int n;

	if (pstore_find(&pstore_system_paths, pstore_boot_time(), false, &c) <= 0)
		return;
	n = snprintf(line, sizeof(line), "%s (%s); Ctrl+Logo+K shows it.\n\n",
		     c.reason == PSTORE_PANIC ? "The last boot ended in a kernel panic"
					      : "The last boot had a kernel oops",
		     c.where);
	if (n > 0)
		getty_write(line, MIN((size_t)n, sizeof(line) - 1));
}

/* agetty's prompt: a new line, the issue text, the last boot's crash, the
 * host name up to its first dot. */
static void getty_prompt(unsigned vt, const char *autologin)
{
	struct issue_info info;
	char host[256] = "", *text, *dot;
	size_t len;

	issue_info_collect(&info, vt, STDIN_FILENO, "");
	issue_read("", &info, &text, &len);
	issue_info_release(&info);
	getty_write("\r\n", 2);
	getty_write(text, len);
	free(text);
	getty_crash_line();
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	dot = strchr(host, '.');
	if (dot)
		*dot = '\0';
	if (host[0]) {
		getty_write(host, strlen(host));
		getty_write(" ", 1);
	}
	getty_write("login: ", strlen("login: "));
	if (autologin) {
		getty_write(autologin, strlen(autologin));
		getty_write(" (automatic login)\n", strlen(" (automatic login)\n"));
	}
}

/* The tty as a line editor: canonical mode with echo, CR as NL, NL as
 * CR NL on output. */
static void getty_tty_mode(void)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &t) < 0)
		return;
	t.c_lflag |= ICANON | ECHO | ECHOE | ECHOK | ISIG;
	t.c_iflag |= ICRNL;
	t.c_iflag &= ~(unsigned)(INLCR | IGNCR);
	t.c_oflag |= OPOST | ONLCR;
	tcsetattr(STDIN_FILENO, TCSANOW, &t);
}

/* One line of input into name: 1 for a line (maybe empty), 0 at the end
 * of the input, -E2BIG for a line too long (read to its end). */
static int getty_read_line(char *name, size_t size)
{
	size_t n = 0;
	bool too_long = false;

	for (;;) {
		char buf[GETTY_NAME_MAX];
		ssize_t k = read(STDIN_FILENO, buf, sizeof(buf));
		char *nl;

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return 0;
		nl = memchr(buf, '\n', (size_t)k);
		if (nl)
			k = nl - buf;
		if (n + (size_t)k >= size)
			too_long = true;
		else {
			memcpy(name + n, buf, (size_t)k);
			n += (size_t)k;
		}
		if (nl)
			break;
	}
	name[n] = '\0';
	/* A terminal that sends CR LF: the CR is no part of the name. */
	while (n > 0 && (name[n - 1] == '\r' || name[n - 1] == ' ' || name[n - 1] == '\t'))
		name[--n] = '\0';
	return too_long ? -E2BIG : 1;
}

char **getty_run(unsigned vt, const char *login, const char *autologin)
{
	static char name[GETTY_NAME_MAX];
	static char *argv[6];
	size_t k = 0;

	getty_tty_mode();
	if (autologin) {
		getty_prompt(vt, autologin);
		snprintf(name, sizeof(name), "%s", autologin);
	} else {
		/* As agetty: Ctrl+C and Ctrl+\ at the prompt flush the line
		 * and nothing else (no core of a root process, no quick exits
		 * into the respawn limit). login gets them back as default. */
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		for (;;) {
			int r;

			getty_prompt(vt, NULL);
			r = getty_read_line(name, sizeof(name));
			if (r == 0)
				_exit(0);
			if (r > 0 && !name[0])
				continue;
			if (r > 0 && getty_name_valid(name))
				break;
			getty_write("Invalid user name.\n", strlen("Invalid user name.\n"));
		}
	}
	/* login gets them as default, whatever the caller had (a shell
	 * starting a background job sets both to ignored) */
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	argv[k++] = (char *)login;
	if (autologin)
		argv[k++] = (char *)"-f";
	argv[k++] = (char *)"-p";
	argv[k++] = (char *)"--";
	argv[k++] = name;
	argv[k] = NULL;
	return argv;
}
