#!/bin/sh
# The benchmark's reference run: the kernel's fbcon on tty1 (busybox ash in
# the test guest).
#
#   fbcon.sh LINES_FILE FONT [ROTATION]
#
# ROTATION (fbcon's 0-3) is set for every console through
# /sys/class/graphics/fbcon/rotate_all first (and left for the caller to
# put back).
# Loads FONT into tty1 (kbd's setfont), fills the screen up to its last row
# (tty1's window size, which fbcon sets from its text grid), then times `cat LINES_FILE >/dev/tty1`.  fbcon draws in
# the write path (con_write -> fbcon_putcs/fbcon_scroll) on every card of the
# test bed, so when cat returns the text is drawn; bochs (DRM fbdev emulation)
# only copies its shadow buffer to VRAM later, from a worker.  Prints
# "size ROWS COLS" and "fbcon T0 T1" ($EPOCHREALTIME, microseconds).

lines=$1 font=$2 rotate=${3:-0}

echo "$rotate" >/sys/class/graphics/fbcon/rotate_all || exit 1
setfont "$font" -C /dev/tty1 || exit 1
set -- $(stty -F /dev/tty1 size)
echo "size $1 $2"
prefill=$(($1 - 1))
printf '\033[0m\033[H\033[2J' >/dev/tty1
head -n "$prefill" "$lines" >/dev/tty1
t0=$EPOCHREALTIME
cat "$lines" >/dev/tty1
t1=$EPOCHREALTIME
echo "fbcon $t0 $t1"
