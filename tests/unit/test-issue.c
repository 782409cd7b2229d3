/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The login screen: agetty's escapes in /etc/issue (every one, with fixed
 * values), the order of the files and directories, hostile files (huge, a
 * FIFO, a directory, unterminated escapes), autologin= values, and the
 * prompt's dialogue on a real pty.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../daemon/session/getty.h"
#include "../../daemon/session/issue.h"
#include "../../daemon/util/util.h"
#include "tests.h"

static struct sockaddr_in lo4, eth4;
static struct sockaddr_in6 ll6, eth6;
static struct ifaddrs if_eth6 = {
    .ifa_name = (char *)"eth0", .ifa_flags = IFF_UP, .ifa_addr = (struct sockaddr *)&eth6};
static struct ifaddrs if_ll6 = {.ifa_next = &if_eth6,
				.ifa_name = (char *)"eth0",
				.ifa_flags = IFF_UP,
				.ifa_addr = (struct sockaddr *)&ll6};
static struct ifaddrs if_eth4 = {.ifa_next = &if_ll6,
				 .ifa_name = (char *)"eth0",
				 .ifa_flags = IFF_UP,
				 .ifa_addr = (struct sockaddr *)&eth4};
/* A second interface that is down, then loopback: neither is \4. */
static struct sockaddr_in down4;
static struct ifaddrs if_down4 = {.ifa_next = &if_eth4,
				  .ifa_name = (char *)"wlan0",
				  .ifa_flags = 0,
				  .ifa_addr = (struct sockaddr *)&down4};
static struct ifaddrs if_lo4 = {.ifa_next = &if_down4,
				.ifa_name = (char *)"lo",
				.ifa_flags = IFF_UP | IFF_LOOPBACK,
				.ifa_addr = (struct sockaddr *)&lo4};

static void fixed_info(struct issue_info *info)
{
	memset(info, 0, sizeof(*info));
	strcpy(info->tty, "tty3");
	strcpy(info->uts.sysname, "Linux");
	strcpy(info->uts.nodename, "box.example.org");
	strcpy(info->uts.release, "6.1.0-9-amd64");
	strcpy(info->uts.version, "#1 SMP");
	strcpy(info->uts.machine, "x86_64");
	strcpy(info->domain, "(none)");
	info->users = 1;
	info->baud = 38400;
	info->now = (struct tm){.tm_sec = 5,
				.tm_min = 4,
				.tm_hour = 3,
				.tm_mday = 4,
				.tm_mon = 11,
				.tm_year = 126,
				.tm_wday = 5};
	lo4 = (struct sockaddr_in){.sin_family = AF_INET};
	inet_pton(AF_INET, "127.0.0.1", &lo4.sin_addr);
	down4 = (struct sockaddr_in){.sin_family = AF_INET};
	inet_pton(AF_INET, "10.9.9.9", &down4.sin_addr);
	eth4 = (struct sockaddr_in){.sin_family = AF_INET};
	inet_pton(AF_INET, "192.0.2.7", &eth4.sin_addr);
	ll6 = (struct sockaddr_in6){.sin6_family = AF_INET6};
	inet_pton(AF_INET6, "fe80::1", &ll6.sin6_addr);
	eth6 = (struct sockaddr_in6){.sin6_family = AF_INET6};
	inet_pton(AF_INET6, "2001:db8::7", &eth6.sin6_addr);
	info->addrs = &if_lo4;
	info->os_release = "NAME=\"Debian GNU/Linux\"\n"
			   "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
			   "VERSION_ID='12'\n"
			   "ID=debian\n"
			   "QUOTED=\"a \\\"b\\\" c\"\n";
}

static char *expand(const char *text, const struct issue_info *info)
{
	char *buf = NULL;
	size_t used = 0, size = 0;

	issue_expand(text, strlen(text), info, &buf, &used, &size);
	CHECK(strlen(buf) == used);
	return buf;
}

static void check_expand(const char *text, const char *want, const struct issue_info *info)
{
	char *got = expand(text, info);

	if (strcmp(got, want) != 0) {
		fprintf(stderr, "expand(%s): got '%s', want '%s'\n", text, got, want);
		tests_failed = 1;
	}
	free(got);
}

static void test_escapes(void)
{
	struct issue_info info;

	fixed_info(&info);
	check_expand("plain text\n", "plain text\n", &info);
	check_expand("\\s \\n \\r \\v \\m", "Linux box.example.org 6.1.0-9-amd64 #1 SMP x86_64",
		     &info);
	check_expand("on \\l", "on tty3", &info);
	check_expand("\\o|\\O", "(none)|example.org", &info);
	check_expand("\\b", "38400", &info);
	check_expand("\\d \\t", "Fri Dec  4  2026 03:04:05", &info);
	check_expand("\\u|\\U", "1 |1 user", &info);
	info.users = 3;
	check_expand("\\U", "3 users", &info);
	info.users = 0;
	check_expand("\\U", "0 users", &info);
	check_expand("\\4 \\6", "192.0.2.7 2001:db8::7", &info);
	check_expand("\\4{lo}|\\4{wlan0}|\\4{none}|\\6{eth0}", "127.0.0.1|10.9.9.9||fe80::1",
		     &info);
	check_expand("\\S", "Debian GNU/Linux 12 (bookworm)", &info);
	check_expand("\\S{VERSION_ID} \\S{ID} \\S{QUOTED} [\\S{MISSING}]", "12 debian a \"b\" c []",
		     &info);
	check_expand("\\e{red}R\\e{reset}\\e[0m\\e{nosuch}", "\033[31mR\033[0m\033[0m", &info);
	check_expand("\\\\ \\x \\%", "\\ x %", &info);
	/* Unterminated: no argument, the brace is text; a lone \ at the end
	 * shows nothing. */
	check_expand("\\S{PRETTY_NAME", "Debian GNU/Linux 12 (bookworm){PRETTY_NAME", &info);
	check_expand("end\\", "end", &info);
	info.os_release = NULL;
	check_expand("\\S", "Linux", &info);
	info.addrs = NULL;
	check_expand("[\\4][\\6]", "[][]", &info);
	info.domain[0] = '\0';
	check_expand("\\o", "unknown_domain", &info);
	strcpy(info.domain, "nis.example");
	check_expand("\\o", "nis.example", &info);
	strcpy(info.uts.nodename, "box");
	check_expand("\\O", "unknown_domain", &info);
}

static void test_os_release(void)
{
	char v[8];

	CHECK(issue_os_release_value("A=1\n B=\"x y\"\nC", "B", v, sizeof(v)) && !strcmp(v, "x y"));
	CHECK(!issue_os_release_value("A=1\n", "C", v, sizeof(v)));
	CHECK(!issue_os_release_value("AB=1\n", "A", v, sizeof(v)));
	/* Cut to the buffer. */
	CHECK(issue_os_release_value("A=\"0123456789\"", "A", v, sizeof(v)) &&
	      !strcmp(v, "0123456"));
	CHECK(!issue_os_release_value(NULL, "A", v, sizeof(v)));
}

static char root[] = "/tmp/test-issue-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void mkd(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	CHECK(mkdir(path, 0755) == 0 || errno == EEXIST);
}

static void check_read(const char *want, const struct issue_info *info)
{
	char *got;
	size_t len;

	issue_read(root, info, &got, &len);
	CHECK(strlen(got) == len);
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "issue_read: got '%s', want '%s'\n", got, want);
		tests_failed = 1;
	}
	free(got);
}

static void test_files(void)
{
	struct issue_info info;
	char path[512];

	fixed_info(&info);
	CHECK(mkdtemp(root) != NULL);
	mkd("/etc");
	mkd("/run");
	mkd("/usr");
	mkd("/usr/lib");
	/* Nothing at all. */
	check_read("", &info);
	/* /usr/lib's pair is the last resort, /run's comes before it. */
	put("/usr/lib/issue", "usr \\l\n");
	check_read("usr tty3\n", &info);
	mkd("/run/issue.d");
	put("/run/issue.d/a.issue", "run.d\n");
	check_read("run.d\n", &info);
	put("/run/issue", "run\n");
	check_read("run\nrun.d\n", &info);
	/* /etc/issue wins, with its directory, in version order: 2 < 10;
	 * hidden files and other names are not read. */
	put("/etc/issue", "etc \\S\n");
	mkd("/etc/issue.d");
	put("/etc/issue.d/10-b.issue", "ten \\4\n");
	put("/etc/issue.d/2-a.issue", "two \\l\n");
	put("/etc/issue.d/.hidden.issue", "hidden\n");
	put("/etc/issue.d/notes.txt", "txt\n");
	put("/etc/issue.d/.issue", "bare\n");
	check_read("etc Debian GNU/Linux 12 (bookworm)\ntwo tty3\nten 192.0.2.7\n", &info);
	/* A FIFO and a directory named *.issue are skipped without waiting. */
	snprintf(path, sizeof(path), "%s/etc/issue.d/5-fifo.issue", root);
	CHECK(mkfifo(path, 0644) == 0);
	mkd("/etc/issue.d/6-dir.issue");
	check_read("etc Debian GNU/Linux 12 (bookworm)\ntwo tty3\nten 192.0.2.7\n", &info);
	/* /etc/issue.d without /etc/issue is not read (agetty's rule). */
	snprintf(path, sizeof(path), "%s/etc/issue", root);
	CHECK(unlink(path) == 0);
	check_read("run\nrun.d\n", &info);

	/* A huge file: read up to ISSUE_FILE_MAX, the text at most
	 * ISSUE_TEXT_MAX even when every escape grows it. */
	{
		size_t n = 4 * ISSUE_FILE_MAX;
		char *big = malloc(n + 1), *got;
		size_t len;
		FILE *f;

		for (size_t i = 0; i < n; i += 2)
			memcpy(big + i, "\\S", 2);
		big[n] = '\0';
		snprintf(path, sizeof(path), "%s/etc/issue", root);
		f = fopen(path, "w");
		fwrite(big, 1, n, f);
		fclose(f);
		issue_read(root, &info, &got, &len);
		CHECK_EQ_U(len, ISSUE_TEXT_MAX);
		CHECK(strlen(got) == len);
		CHECK(strncmp(got, "Debian GNU/Linux 12", 19) == 0);
		free(got);
		free(big);
		CHECK(issue_read_file(path, 10, &got, &len) == 0 && len == 10);
		free(got);
	}
	snprintf(path, sizeof(path), "%s/etc/issue.d/5-fifo.issue", root);
	CHECK(issue_read_file(path, 10, &(char *){NULL}, &(size_t){0}) == -EBADFD);
	{
		/* Not even opened: a writer waiting on the FIFO stays blocked
		 * (a device that acts on open is not touched either). */
		pid_t writer = fork();
		int status;

		CHECK(writer >= 0);
		if (writer == 0) {
			int w = open(path, O_WRONLY | O_CLOEXEC);

			_exit(w >= 0 ? 0 : 1);
		}
		usleep(50 * 1000);
		CHECK(issue_read_file(path, 10, &(char *){NULL}, &(size_t){0}) == -EBADFD);
		usleep(100 * 1000);
		CHECK(waitpid(writer, &status, WNOHANG) == 0);
		kill(writer, SIGKILL);
		waitpid(writer, &status, 0);
	}
	CHECK(issue_read_file("/nonexistent/issue", 10, &(char *){NULL}, &(size_t){0}) == -ENOENT);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	CHECK(system(path) == 0);
}

static void test_info_collect(void)
{
	struct issue_info info;
	char *text;
	size_t len;

	/* The real system: \l names the VT, the rest is whatever it is. */
	issue_info_collect(&info, 7, -1, "");
	CHECK(strcmp(info.tty, "tty7") == 0);
	CHECK(info.uts.sysname[0] != '\0');
	issue_read("/nonexistent", &info, &text, &len);
	CHECK(len == 0 && text[0] == '\0');
	free(text);
	issue_info_release(&info);
}

static void test_names(void)
{
	char user[GETTY_NAME_MAX];
	char *argv_default[] = {(char *)"/bin/login", (char *)"-p", NULL};
	char *argv_more[] = {(char *)"/bin/login", (char *)"-p", (char *)"-h", NULL};
	char *argv_other[] = {(char *)"/bin/sh", NULL};

	CHECK(getty_is_default_login(argv_default));
	CHECK(!getty_is_default_login(argv_more));
	CHECK(!getty_is_default_login(argv_other));
	CHECK(getty_name_valid("tester"));
	CHECK(getty_name_valid("a.b_c-d@e"));
	CHECK(getty_name_valid("machine$"));
	CHECK(!getty_name_valid(""));
	CHECK(!getty_name_valid("-f"));
	CHECK(!getty_name_valid("a b"));
	CHECK(!getty_name_valid("a$b"));
	CHECK(!getty_name_valid("root\n"));
	CHECK(!getty_name_valid("r\033[2J"));

	CHECK(getty_autologin_parse("tester", 5, user, sizeof(user)) == 1 &&
	      !strcmp(user, "tester"));
	CHECK(getty_autologin_parse("tester@tty5", 5, user, sizeof(user)) == 1 &&
	      !strcmp(user, "tester"));
	CHECK(getty_autologin_parse("tester@tty5", 6, user, sizeof(user)) == 0);
	CHECK(getty_autologin_parse("a@b", 1, user, sizeof(user)) == 1 && !strcmp(user, "a@b"));
	CHECK(getty_autologin_parse("tester@tty0", 1, user, sizeof(user)) == -EINVAL);
	CHECK(getty_autologin_parse("tester@tty64", 1, user, sizeof(user)) == -EINVAL);
	CHECK(getty_autologin_parse("tester@tty05", 5, user, sizeof(user)) == -EINVAL);
	CHECK(getty_autologin_parse("tester@ttyx", 1, user, sizeof(user)) == -EINVAL);
	CHECK(getty_autologin_parse("-f root", 1, user, sizeof(user)) == -EINVAL);
	CHECK(getty_autologin_parse("@tty1", 1, user, sizeof(user)) == -EINVAL);
	/* A user that does not exist, a bad value: no autologin. */
	CHECK(getty_autologin_user("no-such-user-consoled", 1, user, sizeof(user)) == 0);
	CHECK(getty_autologin_user("-x", 1, user, sizeof(user)) == 0);
	CHECK(getty_autologin_user(NULL, 1, user, sizeof(user)) == 0);
	CHECK(getty_autologin_user("root@tty2", 1, user, sizeof(user)) == 0);
	CHECK(getty_autologin_user("root@tty1", 1, user, sizeof(user)) == 1 &&
	      !strcmp(user, "root"));
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* Everything the pty's master reads until the child writes its result;
 * the typed lines go one by one, each after a new prompt. */
static void dialogue(const char *autologin, const char *const *typed, char *out, size_t out_size,
		     char *result, size_t result_size)
{
	int master, pipefd[2], status;
	size_t n = 0, rn = 0, sent = 0;
	pid_t pid;

	CHECK(pipe(pipefd) == 0);
	pid = forkpty(&master, NULL, NULL, NULL);
	CHECK(pid >= 0);
	if (pid == 0) {
		char **argv = getty_run(4, "/bin/login", autologin);
		char line[512] = "";
		struct sigaction sa;

		/* login gets SIGINT and SIGQUIT as they were */
		if (sigaction(SIGINT, NULL, &sa) < 0 || sa.sa_handler != SIG_DFL ||
		    sigaction(SIGQUIT, NULL, &sa) < 0 || sa.sa_handler != SIG_DFL)
			_exit(3);

		for (char **a = argv; *a; a++)
			snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s|", *a);
		(void)!write(pipefd[1], line, strlen(line));
		_exit(0);
	}
	close(pipefd[1]);
	for (;;) {
		struct pollfd p[2] = {{.fd = master, .events = POLLIN},
				      {.fd = pipefd[0], .events = POLLIN}};
		ssize_t k;

		if (poll(p, 2, 10000) <= 0)
			break;
		if (p[0].revents & POLLIN) {
			k = read(master, out + n, out_size - 1 - n);
			if (k > 0)
				n += (size_t)k;
			out[n] = '\0';
			if (typed[sent] && count(out, "login: ") > sent) {
				CHECK(write(master, typed[sent], strlen(typed[sent])) ==
				      (ssize_t)strlen(typed[sent]));
				sent++;
			}
		}
		if (p[1].revents) {
			k = read(pipefd[0], result + rn, result_size - 1 - rn);
			if (k <= 0)
				break;
			rn += (size_t)k;
		}
	}
	out[n] = '\0';
	result[rn] = '\0';
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(master);
	close(pipefd[0]);
}

static void test_dialogue(void)
{
	static char out[256 * 1024], result[512];
	char want[512];

	/* An empty line prompts again, a name starting with '-' and one with
	 * a blank are refused, a good one goes to login after "--"; the name
	 * is echoed by the tty. */
	dialogue(NULL, (const char *const[]){"\n", "-froot\n", "bad name\n", "tester\n", NULL}, out,
		 sizeof(out), result, sizeof(result));
	CHECK(strcmp(result, "/bin/login|-p|--|tester|") == 0);
	CHECK_EQ_U(count(out, "login: "), 4);
	CHECK_EQ_U(count(out, "Invalid user name."), 2);
	CHECK(strstr(out, "login: tester\r\n") != NULL);
	if (tests_failed)
		fprintf(stderr, "result '%s', screen:\n%s\n", result, out);

	/* Ctrl+C and Ctrl+\ at the prompt only flush what was typed before
	 * them (the child would die of them otherwise). */
	dialogue(NULL, (const char *const[]){"root\003\034tester\n", NULL}, out, sizeof(out),
		 result, sizeof(result));
	CHECK(strcmp(result, "/bin/login|-p|--|tester|") == 0);

	/* Autologin: no input needed, login -f. */
	dialogue("tester", (const char *const[]){NULL}, out, sizeof(out), result, sizeof(result));
	CHECK(strcmp(result, "/bin/login|-f|-p|--|tester|") == 0);
	snprintf(want, sizeof(want), "login: tester (automatic login)\r\n");
	CHECK(strstr(out, want) != NULL);
	CHECK_EQ_U(count(out, "login: "), 1);

	/* The end of the input (^D) at the prompt ends the session. */
	dialogue(NULL, (const char *const[]){"\004", NULL}, out, sizeof(out), result,
		 sizeof(result));
	CHECK(result[0] == '\0');
}

int main(void)
{
	RUN(test_escapes);
	RUN(test_os_release);
	RUN(test_files);
	RUN(test_info_collect);
	RUN(test_names);
	RUN(test_dialogue);
	return TESTS_RESULT();
}
