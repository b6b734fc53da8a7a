#!/usr/bin/env bash
# top_tmux_canned.sh CQMGRCTL — runs top_tmux.sh against canned_server.py
# (sample replies, no daemon): a check of cqmgrctl top's terminal handling.
# Exit 77 (skipped) without tmux or python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v tmux >/dev/null && command -v python3 >/dev/null || exit 77
tmp=$(mktemp -d /tmp/top-canned-XXXXXX)
python3 "$here/canned_server.py" "$tmp/ctl.sock" "$here/samples" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true; rm -rf "$tmp"' EXIT
for ((i = 0; i < 150; i++)); do [[ -S $tmp/ctl.sock ]] && break; sleep 0.2; done
"$here/top_tmux.sh" --cqmgrctl "$1" --expect example.com --expect "DEAD OR SUSPENDED" "$tmp/ctl.sock"
