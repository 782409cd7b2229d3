#!/bin/sh
# The latency section's session (busybox ash in the benchmark guest), run by
# the terminal under test (consoled, fbterm, kmscon: on their pty; fbcon:
# on tty1 itself).  README.md, Latency.
#
#   lat.sh READY
#
# Writes its pid to READY once the screen is cleared, then
#   1. `cat >/dev/null` on the terminal in canonical mode with echo: the
#      line discipline echoes what keylat types (letters and backspaces);
#      it ends when keylat creates READY.scroll (or READY.int).
#   2. with READY.scroll: lines scroll in a region that ends above the
#      last row (DECSTBM), one write() a line, as fast as the shell
#      writes them, while `keylat --echo-at` (in -icanon -echo) writes what
#      keylat types on the last row; until READY.int.
#   3. rounds of: the prompt (8 reverse-video blank cells, a solid block
#      keylat recognises in any font, then "# "), a line read (keylat's
#      Enter), a cleared screen and `base64 /dev/urandom` until Ctrl+C
#      (SIGINT to the terminal's foreground group: base64 dies, this shell
#      traps it and goes on).
# The cursor is hidden throughout, so that no blinking cursor changes pixels.

ready=$1
trap : INT
stty icanon echo echoe 2>/dev/null
printf '\033[0m\033[H\033[2J\033[?25l'
# cat in the background with the terminal as its input (an asynchronous
# command's stdin is /dev/null otherwise), until keylat touches READY.int
exec 3<&0
cat <&3 >/dev/null &
cat=$!
echo $$ >"$ready.tmp" && mv "$ready.tmp" "$ready"
while [ ! -e "$ready.int" ] && [ ! -e "$ready.scroll" ]; do
	sleep 0.1
done
kill $cat
if [ -e "$ready.scroll" ]; then
	rows=$(stty size | cut -d' ' -f1)
	stty -icanon -echo
	printf '\033[H\033[2J\033[1;%dr' $((rows - 1))
	keylat --echo-at "$rows" <&3 &
	echoer=$!
	i=0
	while [ ! -e "$ready.int" ]; do
		echo "scroll $i: the quick brown fox jumps over the lazy dog 0123456789"
		i=$((i + 1))
	done
	kill $echoer
	printf '\033[r\033[H\033[2J'
	stty icanon echo
fi
while :; do
	printf '\n\033[7m%s\033[0m# \033[?25l' '        '
	read -r line || exit 0
	printf '\033[H\033[2J'
	base64 /dev/urandom
done
