/* What a unit test's code under test logs: stderr goes to a file in the
 * test's own directory between capture_begin() and capture_end(), which
 * returns it (static, overwritten by the next capture) and copies it to the
 * real stderr, so the test log shows it too. One capture at a time. */
#pragma once

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int capture_saved_stderr = -1;
static char capture_path[256];
static char captured[16384];

static void capture_begin(const char *dir)
{
	int fd;

	fflush(stderr);
	snprintf(capture_path, sizeof(capture_path), "%s/stderr", dir);
	fd = open(capture_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	capture_saved_stderr = dup(STDERR_FILENO);
	if (fd < 0 || capture_saved_stderr < 0 || dup2(fd, STDERR_FILENO) < 0) {
		perror("capture");
		exit(EXIT_FAILURE);
	}
	close(fd);
}

static const char *capture_end(void)
{
	FILE *f;
	size_t n;

	fflush(stderr);
	dup2(capture_saved_stderr, STDERR_FILENO);
	close(capture_saved_stderr);
	f = fopen(capture_path, "r");
	n = f ? fread(captured, 1, sizeof(captured) - 1, f) : 0;
	captured[n] = '\0';
	if (f)
		fclose(f);
	unlink(capture_path);
	fputs(captured, stderr);
	return captured;
}
