#!/bin/sh
# Runs tools/cqmgr-delivery-latency.bt against a cqmgr that delivers real
# mail: a private Postfix instance (compat-run, scenario
# fanout-five-destinations: 50 recipients over five relays) with the cqmgr
# given as $1.  The script's report must name the five destinations.
#
#   bpftrace_latency.sh CQMGR COMPAT_RUN SOURCE_DIR
#
# Exits 77 (skipped) where bpftrace cannot run: not root, no bpftrace, or a
# kernel (or container) that refuses BPF or uprobes.
set -u
cqmgr=$(readlink -f "$1")
compat_run=$2
src=$3

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "bpftrace needs root"
command -v bpftrace >/dev/null || skip "bpftrace is not installed"
if ! out=$(timeout 30 bpftrace -e 'BEGIN { exit(); }' 2>&1); then
    skip "bpftrace cannot load a program here: $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"
fi

work=$(mktemp -d /tmp/cqmgr-bpftrace.XXXXXX)
bt_pid=
cleanup() {
    [ -n "$bt_pid" ] && kill -INT "$bt_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# The script as shipped, on this cqmgr, reporting every second.
sed -e "s|usdt:/usr/lib/postfix/sbin/cqmgr:|usdt:$cqmgr:|" -e 's|interval:s:10|interval:s:1|' \
    "$src/tools/cqmgr-delivery-latency.bt" >"$work/latency.bt"
grep -q "usdt:$cqmgr:cqmgr:delivery__end" "$work/latency.bt" || { echo "FAIL: path not replaced"; exit 1; }

bpftrace "$work/latency.bt" >"$work/bpftrace.out" 2>&1 &
bt_pid=$!
# bpftrace says "Attaching N probes..." once it is attached.
i=0
until grep -q '^Attaching' "$work/bpftrace.out"; do
    i=$((i + 1))
    if [ $i -gt 300 ] || ! kill -0 "$bt_pid" 2>/dev/null; then
        cat "$work/bpftrace.out"
        grep -qi 'uprobe\|usdt\|permission\|not supported' "$work/bpftrace.out" &&
            skip "bpftrace cannot attach the usdt probe here"
        echo "FAIL: bpftrace did not attach"
        exit 1
    fi
    sleep 0.1
done

"$compat_run" --qmgr cqmgr --cqmgr "$cqmgr" "$src/compat-tests/scenarios/fanout-five-destinations.toml" ||
    { echo "FAIL: the scenario failed"; exit 1; }
sleep 2 # one more report
kill -INT "$bt_pid"
wait "$bt_pid"
bt_pid=
cat "$work/bpftrace.out"

# Each relay is a destination "[127.0.0.1]:PORT" of transport smtp.
status=0
n=$(grep -o '@latency_us\[smtp, \[127\.0\.0\.1\]:[0-9]*\]' "$work/bpftrace.out" | sort -u | wc -l)
[ "$n" = 5 ] || { echo "FAIL: $n destinations in the histogram, expected 5"; status=1; }
# The periodic report counted the 50 recipients' requests (10 per relay in
# requests of up to 50 recipients each: at least one request per relay).
grep -q '^@requests\[smtp, \[127\.0\.0\.1\]:[0-9]*\]: [1-9]' "$work/bpftrace.out" ||
    { echo "FAIL: no periodic report"; status=1; }
[ $status = 0 ] && echo "PASS"
exit $status
