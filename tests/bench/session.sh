#!/bin/sh
# The benchmark's session inside consoled (busybox ash in the test guest).
#
#   session.sh LINES_FILE PHASES TICKS SNAPSHOTS LOG RESULT [KMSG]
#
# The first lines of LINES_FILE fill the screen up to its last row (the pty's
# window size, which consoled sets from its text grid), so every line of a
# phase scrolls exactly one row.  Phases (comma-separated):
#   cat   `cat LINES_FILE` as fast as the pty takes it;
#   tick  TICKS lines, one every ~0.03 s (ping, tail -f): one row per frame;
#   kcat  `cat LINES_FILE` while kmsgflood (kmsgflood.c) writes KMSG records
#         to /dev/kmsg in a burst, started right before the cat; its own
#         line ("kmsgflood: N records in U us, F failed") follows the step's.
# A phase ends when consoled has *parsed* all of it: the session asks for the
# cursor position (DSR, ESC[6n) and consoled's terminal answers only after
# everything before the request.  Its last frame is drawn at most one frame
# interval (16 ms) later.  Times come from ash's $EPOCHREALTIME (microseconds,
# no fork).  With SNAPSHOTS=1, consoled (--stats) dumps its counters on
# SIGUSR1 after each step; a marker line in its log (opened O_APPEND by the
# harness) names the step, so the harness can subtract consecutive dumps.
# Results go to RESULT, one line per step; RESULT.done marks the end.

lines=$1 phases=$2 ticks=$3 snapshots=$4 log=$5 result=$6 kmsg=${7:-0}
cpid=$(pidof consoled)
set -- $(stty size)
echo "size $1 $2" >>"$result"
prefill=$(($1 - 1))

# Wait until consoled has parsed everything written so far; sets $reply to
# the cursor position report without ESC[ and R ("row;col"), or "timeout".
sync_term() {
	stty -icanon -echo min 1 time 0
	printf '\033[6n'
	reply=timeout
	if read -r -t 120 -d R r; then
		reply=${r#??}
	fi
	stty icanon echo
}

# Let the last frame be drawn (one frame interval), then have consoled dump
# its counters after a marker naming the step; wait (bounded) for the dump.
snapshot() {
	sleep 0.05
	[ "$snapshots" = 1 ] || return 0
	echo "@@snap $1" >>"$log"
	kill -USR1 "$cpid"
	i=0
	while [ $i -lt 50 ]; do
		sed -n "/^@@snap $1\$/,\$p" "$log" | grep -q 'stats:' && break
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.2
}

head -n "$prefill" "$lines"
sync_term
echo "prefill $reply" >>"$result"
snapshot prefill

case ",$phases," in
*,cat,*)
	t0=$EPOCHREALTIME
	cat "$lines"
	sync_term
	t1=$EPOCHREALTIME
	echo "cat $t0 $t1 $reply" >>"$result"
	snapshot cat
	;;
esac

case ",$phases," in
*,kcat,*)
	kmsgflood --text=kmsg-bench "$kmsg" >"$result.kmsg" 2>&1 &
	fl=$!
	t0=$EPOCHREALTIME
	cat "$lines"
	sync_term
	t1=$EPOCHREALTIME
	wait $fl
	echo "kcat $t0 $t1 $reply" >>"$result"
	cat "$result.kmsg" >>"$result"
	snapshot kcat
	;;
esac

case ",$phases," in
*,tick,*)
	t0=$EPOCHREALTIME
	head -n "$ticks" "$lines" | while IFS= read -r l; do
		printf '%s\n' "$l"
		sleep 0.03
	done
	sync_term
	t1=$EPOCHREALTIME
	echo "tick $t0 $t1 $reply" >>"$result"
	snapshot tick
	;;
esac

echo done >"$result.done"
exec sleep 100000
