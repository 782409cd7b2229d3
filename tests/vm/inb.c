/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inb: reads a VGA I/O port without asking for permission (no ioperm, no
 * iopl), as a program in a login session would. In a session that inherited
 * no port access it dies of SIGSEGV; with access it prints the byte.
 *
 *     inb [PORT]     (default 0x3cc, the VGA misc output register)
 */
#include <stdio.h>
#include <stdlib.h>
#if defined(__i386__) || defined(__x86_64__)
#include <sys/io.h>
#endif

int main(int argc, char **argv)
{
	unsigned long port = argc > 1 ? strtoul(argv[1], NULL, 0) : 0x3cc;

#if defined(__i386__) || defined(__x86_64__)
	printf("port 0x%lx = 0x%02x\n", port, inb((unsigned short)port));
	return 0;
#else
	fprintf(stderr, "inb: not an x86 machine (port 0x%lx)\n", port);
	return 2;
#endif
}
