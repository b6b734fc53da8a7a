#!/usr/bin/env bash
# completion_test.sh CQMGRCTL — sources the bash completion of cqmgrctl
# (ctl/completion/cqmgrctl) and checks what it offers: the commands and
# options, and the transports and destinations of a daemon, here the
# canned-reply server (canned_server.py, the protocol's sample replies).
# Exit 77 (skipped) without python3.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || exit 77
tmp=$(mktemp -d /tmp/ctl-completion-XXXXXX)
ctl=$(realpath "$1")
ln -s "$ctl" "$tmp/cqmgrctl"
PATH=$tmp:$PATH
python3 "$here/canned_server.py" "$tmp/ctl.sock" "$here/samples" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$tmp"' EXIT
for ((i = 0; i < 150; i++)); do [[ -S $tmp/ctl.sock ]] && break; sleep 0.2; done

# shellcheck source=../completion/cqmgrctl
source "$here/../completion/cqmgrctl"
[[ $(complete -p cqmgrctl) == "complete -F _cqmgrctl cqmgrctl" ]] || {
    echo "cqmgrctl has no completion"
    exit 1
}

failed=0
# What completing the line (the cursor at its end) offers, one a line.
offered() {
    COMP_LINE=$1
    COMP_POINT=${#1}
    COMPREPLY=()
    _cqmgrctl
    printf '%s\n' "${COMPREPLY[@]}"
}
expect() {
    local got
    got=$(offered "$1")
    if [[ $got != "$2" ]]; then
        echo "completing '$1': offered [$got], expected [$2]"
        failed=1
    fi
}

expect "cqmgrctl su" $'summary\nsuspend'
expect "cqmgrctl thr" "throttle"
expect "cqmgrctl -c /etc/postfix unt" "unthrottle"
expect "cqmgrctl --js" "--json"
expect "cqmgrctl to" "top"
# Every command of --help is offered on an empty word.
want=$("$ctl" --help | awk '/^  [a-z]/ { print $1 }')
expect "cqmgrctl " "$want"
for c in summary queues jobs message deliveries explain suspend resume flush throttle top; do
    grep -qx "$c" <<<"$want" || { echo "--help does not list $c"; failed=1; }
done

s=$tmp/ctl.sock
expect "cqmgrctl --socket $s queues " "smtp"
expect "cqmgrctl --socket $s jobs s" "smtp"
expect "cqmgrctl --socket $s suspend smtp:" "example.com"
expect "cqmgrctl --socket $s suspend " $'smtp\nsmtp:example.com'
# After "smtp:" bash replaces only what follows the colon.
expect "cqmgrctl --socket $s flush smtp:ex" "example.com"
expect "cqmgrctl --socket $s explain ex" "example.com"
expect "cqmgrctl --socket $s throttle example.com " ""
expect "cqmgrctl --socket $s throttle example.com 2 " "for"
expect "cqmgrctl --socket $s suspend smtp " $'for\nreason'
# No daemon: nothing offered, and no error.
expect "cqmgrctl --socket $tmp/none queues " ""
exit $failed
