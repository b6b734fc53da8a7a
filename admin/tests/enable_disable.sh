#!/bin/sh
# cqmgr-enable and cqmgr-disable on a private Postfix instance (temporary
# directory, no listener, the system's /etc/postfix only read):
#   - cqmgr check passes, and fails when cqmgr is missing from
#     daemon_directory (cqmgr-enable then refuses and changes nothing);
#   - cqmgr-enable switches the qmgr line, keeps a backup, reloads Postfix,
#     and a message is delivered with cqmgr as the queue manager;
#   - cqmgr-disable switches back, and a message goes through stock qmgr.
#
#   enable_disable.sh CQMGR SOURCE_DIR       (SOURCE_DIR: the admin/ directory)
#
# Exits 77 (skipped) without root or an installed Postfix.
set -u
cqmgr=$(readlink -f "$1")
admin=$(readlink -f "$2")
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "a Postfix instance needs root"
command -v postconf >/dev/null || skip "Postfix is not installed"
stock=$(postconf -dh daemon_directory)
[ -x "$stock/master" ] || skip "no $stock/master"

. "$admin/tests/private_instance.sh"
work=$(mktemp -d /tmp/cqmgr-enable.XXXXXX)
trap 'pi_stop; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; [ -f "$work/maillog" ] && tail -n 20 "$work/maillog"; exit 1; }
system_before=$(cat /etc/postfix/master.cf /etc/postfix/main.cf 2>/dev/null | md5sum)

# daemon_directory: the stock daemons and this build's cqmgr.
mkdir "$work/libexec"
for f in "$stock"/*; do ln -s "$f" "$work/libexec/"; done
ln -sf "$cqmgr" "$work/libexec/cqmgr"
pi_create "$work" "$work/libexec" || exit 1
conf=$work/conf
pi_start || exit 1
pi_deliver before-enable || exit 1
pi_delivered_by before-enable qmgr || fail "stock qmgr did not deliver at start"

# Without cqmgr in daemon_directory: check reports it, enable refuses.
rm "$work/libexec/cqmgr"
postconf -c "$conf" -F 'qmgr/unix/command = cqmgr'
out=$("$cqmgr" check -c "$conf") && fail "cqmgr check passed with cqmgr missing: $out"
echo "$out" | grep -q "error: .*cqmgr is missing or not executable" ||
    fail "cqmgr check did not name the missing binary: $out"
postconf -c "$conf" -F 'qmgr/unix/command = qmgr'
"$admin/cqmgr-enable" -c "$conf" && fail "cqmgr-enable switched without a cqmgr binary"
[ "$(postconf -c "$conf" -F qmgr/unix/command)" = "qmgr/unix/command = qmgr" ] ||
    fail "cqmgr-enable changed master.cf although it refused"
ln -s "$cqmgr" "$work/libexec/cqmgr"

# A value cqmgr would refuse at start-up: check reports it, enable refuses.
postconf -c "$conf" -e cqmgr_backoff_jitter=101
out=$("$admin/cqmgr-enable" -c "$conf" 2>&1) && fail "cqmgr-enable switched with a bad value: $out"
echo "$out" | grep -q "error: .*cqmgr_backoff_jitter" || fail "cqmgr-enable did not show the error: $out"
[ "$(postconf -c "$conf" -F qmgr/unix/command)" = "qmgr/unix/command = qmgr" ] ||
    fail "cqmgr-enable changed master.cf although cqmgr check failed"
postconf -c "$conf" -X cqmgr_backoff_jitter

out=$("$cqmgr" check -c "$conf") || fail "cqmgr check failed: $out"

saved=$(cat "$conf/master.cf")
# -n: says what it would change, changes nothing.
"$admin/cqmgr-enable" -n -c "$conf" | grep -q "qmgr/unix: qmgr -> cqmgr" || fail "cqmgr-enable -n"
[ "$(cat "$conf/master.cf")" = "$saved" ] || fail "cqmgr-enable -n changed master.cf"
"$admin/cqmgr-enable" -c "$conf" || fail "cqmgr-enable failed"
[ "$(postconf -c "$conf" -F qmgr/unix/command)" = "qmgr/unix/command = cqmgr" ] ||
    fail "qmgr line after cqmgr-enable: $(postconf -c "$conf" -M qmgr/unix)"
backup=$(ls "$conf"/master.cf.cqmgr-* 2>/dev/null | head -n 1)
[ -n "$backup" ] && [ "$(cat "$backup")" = "$saved" ] || fail "no backup of master.cf"
# Enabled twice: nothing to do, nothing changed.
"$admin/cqmgr-enable" -c "$conf" | grep -q "nothing to do" || fail "second cqmgr-enable"
pi_deliver with-cqmgr || fail "no delivery with cqmgr"
pi_delivered_by with-cqmgr cqmgr || fail "cqmgr did not deliver after cqmgr-enable"

"$admin/cqmgr-disable" -c "$conf" || fail "cqmgr-disable failed"
[ "$(postconf -c "$conf" -F qmgr/unix/command)" = "qmgr/unix/command = qmgr" ] ||
    fail "qmgr line after cqmgr-disable: $(postconf -c "$conf" -M qmgr/unix)"
backups=$(ls "$conf"/master.cf.cqmgr-* | wc -l)
[ "$backups" = 2 ] || fail "expected a backup for each change, found $backups"
pi_deliver after-disable || fail "no delivery after cqmgr-disable"
pi_delivered_by after-disable qmgr || fail "stock qmgr did not deliver after cqmgr-disable"

system_after=$(cat /etc/postfix/master.cf /etc/postfix/main.cf 2>/dev/null | md5sum)
[ "$system_before" = "$system_after" ] || fail "/etc/postfix changed"
echo PASS
