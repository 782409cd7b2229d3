/* SPDX-License-Identifier: GPL-2.0-or-later */
#define LOG_MODULE "crash"
#include <errno.h>
#include <fcntl.h>
#include <linux/kd.h>
#include <linux/vt.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crash.h"
#include "log.h"

static struct {
	/* every framebuffer of the seat's screens (screens=mirror, separate) */
	struct crash_fb {
		int fd;
		struct fb_var_screeninfo var;
		struct fb_cmap cmap;
		int have_cmap;
	} fbs[CRASH_FBS_MAX];
	int vt_fd;
	int kbmode;
	volatile int active;
	volatile sig_atomic_t keep_display;
	void *altstack;
} crash_state = {.fbs = {{.fd = -1}, {.fd = -1}, {.fd = -1}, {.fd = -1}}, .vt_fd = -1};

void crash_register_fb(int fd, const struct fb_var_screeninfo *var, const struct fb_cmap *cmap)
{
	struct crash_fb *f = NULL;

	/* fd's slot if it has one, else a free one; with none free (more
	 * screens than CRASH_FBS_MAX) the last is replaced */
	for (unsigned i = 0; i < CRASH_FBS_MAX && !f; i++)
		if (crash_state.fbs[i].fd == fd)
			f = &crash_state.fbs[i];
	for (unsigned i = 0; i < CRASH_FBS_MAX && !f; i++)
		if (crash_state.fbs[i].fd < 0)
			f = &crash_state.fbs[i];
	if (!f)
		f = &crash_state.fbs[CRASH_FBS_MAX - 1];
	f->fd = -1; /* not used half written */
	if (var)
		f->var = *var;
	f->have_cmap = cmap != NULL;
	if (cmap)
		f->cmap = *cmap; /* the data arrays live in struct fbdev */
	f->fd = fd;
}

void crash_unregister_fb(int fd)
{
	for (unsigned i = 0; i < CRASH_FBS_MAX; i++)
		if (crash_state.fbs[i].fd == fd)
			crash_state.fbs[i].fd = -1;
}

void crash_set_active(int active)
{
	crash_state.active = active;
}

void crash_register_vt(int fd, int kbmode)
{
	crash_state.vt_fd = fd;
	crash_state.kbmode = kbmode;
}

void crash_set_keep_display(bool keep)
{
	crash_state.keep_display = keep;
}

static void crash_handler(int sig)
{
	static const char msg[] = "consoled: fatal signal, restoring the console\n";
	static const char msg_keep[] = "consoled: fatal signal, the screen stays for the restart\n";
	ssize_t n;

	if (crash_state.keep_display) {
		/* The successor takes over from the frame on screen: the mode,
		 * graphics mode and keyboard off stay (keys typed meanwhile
		 * go nowhere rather than to the VT's line discipline). */
		n = write(STDERR_FILENO, msg_keep, sizeof(msg_keep) - 1);
		(void)n;
		raise(sig);
		return;
	}
	n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)n;

	for (unsigned i = 0; i < CRASH_FBS_MAX && crash_state.active; i++) {
		const struct crash_fb *f = &crash_state.fbs[i];
		struct fb_var_screeninfo v = f->var;

		if (f->fd < 0)
			continue;
		v.xoffset = 0;
		v.yoffset = 0;
		v.activate = FB_ACTIVATE_NOW | FB_ACTIVATE_FORCE;
		/* a screen consoled blanked (FBIOBLANK) shows again */
		ioctl(f->fd, FBIOBLANK, FB_BLANK_UNBLANK);
		ioctl(f->fd, FBIOPUT_VSCREENINFO, &v);
		if (f->have_cmap)
			ioctl(f->fd, FBIOPUTCMAP, &f->cmap);
	}
	if (crash_state.vt_fd >= 0) {
		static const char clear[] = "\033[0m\033[?7h\033[?25h\033[H\033[2J";
		struct vt_mode mode = {.mode = VT_AUTO};

		/* The VT's buffer may hold the mirror of the screen (vcs.h):
		 * emptied before fbcon draws it. Never blocking on a stopped
		 * tty: the flag is on consoled's own open file. */
		fcntl(crash_state.vt_fd, F_SETFL, O_NONBLOCK);
		n = write(crash_state.vt_fd, clear, sizeof(clear) - 1);
		(void)n;
		ioctl(crash_state.vt_fd, KDSETMODE, KD_TEXT);
		ioctl(crash_state.vt_fd, VT_SETMODE, &mode);
		ioctl(crash_state.vt_fd, KDSKBMODE, crash_state.kbmode);
	}

	/* SA_RESETHAND has put the default action back: die for real. */
	raise(sig);
}

/* A stack overflow is a SIGSEGV on the guard page below the stack: the
 * kernel cannot push a signal frame there, so the handler needs a stack of
 * its own or the process dies without putting the console back. Allocated
 * once, never freed (the handlers stay installed until exit). Its size:
 * the handler's own frame and ioctls need little, but the frame the kernel
 * pushes grows with the CPU's extended state (AVX-512 and AMX take KiB,
 * which is why glibc's SIGSTKSZ is a sysconf() value now): 64 KiB, or four
 * times SIGSTKSZ if that is more. */
static int crash_setup_altstack(void)
{
	size_t size = 64 * 1024;
	stack_t ss = {};

	if (crash_state.altstack)
		return 0;
	if ((size_t)SIGSTKSZ * 4 > size)
		size = (size_t)SIGSTKSZ * 4;
	ss.ss_sp = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
			-1, 0);
	if (ss.ss_sp == MAP_FAILED)
		return -errno;
	ss.ss_size = size;
	if (sigaltstack(&ss, NULL) < 0) {
		int r = -errno;

		munmap(ss.ss_sp, size);
		return r;
	}
	crash_state.altstack = ss.ss_sp;
	return 0;
}

void crash_install_handlers(void)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
	struct sigaction sa;
	int r;

	r = crash_setup_altstack();
	if (r < 0)
		log_warning_errno(r, "Failed to set up the signal stack, a stack overflow will not "
				     "restore the console: %m");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = crash_handler;
	/* SA_ONSTACK: on the alternate stack when there is one. */
	sa.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

#ifdef CONSOLED_TEST_HOOKS
static int crash_on_test_stall(sd_event_source *s, const struct signalfd_siginfo *si,
			       void *userdata)
{
	(void)s;
	(void)si;
	(void)userdata;
	log_warning("Test hook: SIGUSR2, the event loop stops here (no more watchdog pings)");
	/* Every signal the loop handles is blocked; a fatal one (the
	 * watchdog's SIGABRT) or SIGKILL ends this. */
	for (;;)
		pause();
	return 0;
}
#endif

int crash_add_test_hooks(sd_event *event)
{
#ifdef CONSOLED_TEST_HOOKS
	sigset_t mask;
	int r;

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r = sd_event_add_signal(event, NULL, SIGUSR2, crash_on_test_stall, NULL);
	if (r < 0)
		return log_warning_errno(r, "Test hook: cannot watch SIGUSR2: %m");
#else
	(void)event;
#endif
	return 0;
}
