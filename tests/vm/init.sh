#!/bin/sh
# /init of the consoled test guest (busybox sh, PID 1).
#
# Mounts the kernel file systems, loads the modules of the card named by
# `consoled.card=` on the kernel command line, runs the hooks a test put in
# /etc/vm/rc.d, prints a ready marker and then serves root shells on the
# serial ports: ttyS0 (console) and ttyS1 (the host harness, tests/vm/vmlib.py);
# on the ARM board (PL011 UARTs) ttyAMA0 and ttyAMA1.  Nothing here writes to
# tty1: fbcon's picture there is the pixel oracle.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=linux

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
hostname consoled-test

con=ttyS0
harness=ttyS1
if [ -e /dev/ttyAMA1 ]; then
	con=ttyAMA0
	harness=ttyAMA1
fi

card=none
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	consoled.card=*) card="${arg#*=}" ;;
	esac
done

# insmod takes no parameters from the kernel command line (modprobe does), so
# emulate modprobe: `vfb.videomemorysize=N` on the command line becomes an
# insmod argument of vfb.  Names compare with '-' and '_' folded, as the
# kernel does.
load_module() {
	name="$1"
	key=$(echo "$name" | tr - _)
	params=""
	for arg in $(cat /proc/cmdline); do
		case "$(echo "${arg%%=*}" | tr - _)" in
		"$key".*) params="$params ${arg#*.}" ;;
		esac
	done
	# shellcheck disable=SC2086 # params is a word list on purpose
	insmod "/lib/modules/$name.ko" $params || echo "consoled-test: insmod $name$params failed" >/dev/$con
}

for m in $(cat /etc/vm/modules/common 2>/dev/null); do load_module "$m"; done
if [ -f "/etc/vm/modules/$card" ]; then
	for m in $(cat "/etc/vm/modules/$card"); do load_module "$m"; done
else
	echo "consoled-test: unknown card '$card'" >/dev/$con
fi

# Module probing is synchronous for these drivers, but device nodes appear
# through devtmpfs a moment later; wait (bounded) for fb0 where one is expected
# (a card whose list loads a driver: not none, not late).
if [ -s "/etc/vm/modules/$card" ]; then
	i=0
	while [ ! -e /dev/fb0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
fi

for hook in /etc/vm/rc.d/*; do
	[ -x "$hook" ] && "$hook" </dev/null >/dev/$con 2>&1
done

# Two shells: ttyS0 is the console (printk, hooks, a human in run-demo),
# ttyS1 belongs to the host harness alone, so no kernel message or human ever
# lands between its markers.  setsid + opening the port makes it the
# controlling terminal, so ^C and job control work.
serve_shell() {
	while true; do
		setsid sh -c "exec sh -l <>/dev/$1 >&0 2>&1"
		sleep 0.2
	done
}

ready="CONSOLED-TEST-READY card=$card fb0=$(cat /sys/class/graphics/fb0/virtual_size 2>/dev/null),$(cat /sys/class/graphics/fb0/bits_per_pixel 2>/dev/null)"
echo "$ready" >/dev/$con
serve_shell $con &
# Keep ttyS1 open from here on: a serial port nobody has open drops what it
# receives, and the harness starts typing as soon as it sees the marker.
exec 3<>/dev/$harness
echo "$ready" >&3
serve_shell $harness
