/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A test tool for the systemd guest: asks consoled-session(8) for a session
 * as consoled does (a new pty's slave with a well-formed START request) from
 * wherever it runs, and says what the helper answered:
 *
 *   session-client SOCKET
 *
 * prints "started PID" (and hangs the session up by closing), "refused" (the
 * helper closed the connection without starting anything), or "no-answer";
 * exits 2 when it cannot ask at all.
 *
 *   session-client SOCKET kmsg
 *
 * asks for /dev/kmsg as consoled does (session_ask_kmsg()) and prints "kmsg"
 * (the fd came), "refused", "no-answer" or "error ERRNO".
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../daemon/session/session.h"

int main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct session_msg msg;
	struct pollfd pfd;
	char name[64];
	ssize_t n;
	int master, slave, fd;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "kmsg") != 0) ||
	    strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: session-client SOCKET [kmsg]\n");
		return 2;
	}
	if (argc == 3) {
		fd = session_ask_kmsg(argv[1], 20000);
		if (fd >= 0)
			printf("kmsg\n");
		else if (fd == -EPROTO)
			printf("refused\n");
		else if (fd == -ETIMEDOUT)
			printf("no-answer\n");
		else
			printf("error %d\n", -fd);
		return 0;
	}
	strcpy(sa.sun_path, argv[1]);
	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
	    ptsname_r(master, name, sizeof(name)) != 0) {
		perror("pty");
		return 2;
	}
	slave = open(name, O_RDWR | O_NOCTTY);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (slave < 0 || fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror(argv[1]);
		return 2;
	}
	if (session_send_start(fd, slave, 0) < 0) {
		perror("sendmsg");
		return 2;
	}
	close(slave);

	pfd = (struct pollfd){.fd = fd, .events = POLLIN};
	if (poll(&pfd, 1, 20000) <= 0) {
		printf("no-answer\n");
		return 0;
	}
	n = recv(fd, &msg, sizeof(msg), 0);
	if (n == (ssize_t)sizeof(msg) &&
	    session_msg_check(&msg, (size_t)n, SESSION_MSG_STARTED) == 0)
		printf("started %d\n", (int)msg.value);
	else if (n == 0 || (n < 0 && errno == ECONNRESET))
		printf("refused\n");
	else
		printf("unexpected %zd\n", n);
	close(fd);
	close(master);
	return 0;
}
