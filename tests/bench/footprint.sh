#!/bin/sh
# The footprint section's session (footprint.py), in a terminal under test.
#
#   footprint.sh TAG LINES_FILE DIR
#
# Writes its prompt at row 5, column 20 (away from the cursor's first cell,
# where firstdraw watches for it), waits until the terminal has parsed it
# (a cursor position request answers after everything before it) and says
# so in DIR/TAG.prompt; on DIR/TAG.go it cats LINES_FILE, waits for the
# terminal in the same way and writes DIR/TAG.done.  Then it stays, so the
# terminal keeps its session while the harness reads its memory figures.
tag=$1 lines=$2 dir=$3

sync_term() {
	stty -icanon -echo min 1 time 0
	printf '\033[6n'
	read -r -t 120 -d R r
	stty icanon echo
}

printf '\033[5;20Hfootprint>'
sync_term
: >"$dir/$tag.prompt"
while [ ! -e "$dir/$tag.go" ]; do
	sleep 0.1
done
printf '\n'
cat "$lines"
sync_term
: >"$dir/$tag.done"
exec sleep 100000
