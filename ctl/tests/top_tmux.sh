#!/usr/bin/env bash
# top_tmux.sh — checks `cqmgrctl top` in a real terminal: tmux runs it in a
# detached 120x40 session; the pane must show the header with rates (from
# the second poll on) and a destination line; then `q` must end it, and a second run must end on Ctrl-C, each time
# with exit status 0 and the terminal back in canonical mode with echo.
#
# usage: top_tmux.sh [--cqmgrctl PATH] [--expect TEXT]... SOCKET_OR_CONFIG
#   SOCKET_OR_CONFIG  a control socket (cqmgrctl --socket) or a Postfix
#                     configuration directory (cqmgrctl -c)
#   --cqmgrctl PATH   the binary (default: cqmgrctl in PATH)
#   --expect TEXT     text the pane must also show (e.g. a destination name)
# The daemon must have mail in its active queue, so that the busiest
# destinations table has a line.  Exit 0: passed; 1: failed; 77: no tmux.
set -euo pipefail

cqmgrctl=cqmgrctl
expect=()
while (($#)); do
  case $1 in
    --cqmgrctl) cqmgrctl=$2; shift 2 ;;
    --expect) expect+=("$2"); shift 2 ;;
    -*) echo "top_tmux.sh: unknown option $1" >&2; exit 1 ;;
    *) break ;;
  esac
done
if (($# != 1)); then
  echo "usage: top_tmux.sh [--cqmgrctl PATH] [--expect TEXT]... SOCKET_OR_CONFIG" >&2
  exit 1
fi
target=$1
if [[ -S $target ]]; then
  where=(--socket "$target")
elif [[ -d $target ]]; then
  where=(-c "$target")
else
  echo "top_tmux.sh: $target is neither a socket nor a directory" >&2
  exit 1
fi
command -v tmux >/dev/null || { echo "top_tmux.sh: no tmux, skipped" >&2; exit 77; }
cqmgrctl=$(command -v "$cqmgrctl")

tmp=$(mktemp -d /tmp/top-tmux-XXXXXX)
server=top-tmux-$$ # a private tmux server: no user configuration, no other sessions
tmx() { tmux -L "$server" -f /dev/null "$@"; }
cleanup() { tmx kill-server 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

# Waits up to $2 seconds until the pane of session $1 satisfies check_$3.
# The deadlines are generous: a loaded machine only makes them pass later.
wait_for() {
  local session=$1 limit=$2 check=$3 i
  for ((i = 0; i < limit * 5; i++)); do
    tmx capture-pane -p -t "$session" >"$tmp/pane" 2>/dev/null || true
    if "check_$check"; then return 0; fi
    sleep 0.2
  done
  echo "top_tmux.sh: FAIL: $check not seen within $limit s; the pane:" >&2
  cat "$tmp/pane" >&2
  return 1
}

# The frame: header lines, rates (there from the second poll on: the
# connection carried several polls), and a row of the busiest destinations
# table (transport, destination, window, busy, todo).
check_frame() {
  grep -q '^cqmgrctl top - ' "$tmp/pane" && grep -q '^deliveries/s [0-9]' "$tmp/pane" &&
    grep -Eq '^TRANSPORT +DESTINATION +WINDOW +BUSY +TODO' "$tmp/pane" &&
    grep -Eq '^[^ ]+ +[^ ]+ +[0-9-]+ +[0-9]+ +[0-9]+( |$)' "$tmp/pane" || return 1
  local text
  for text in ${expect[@]+"${expect[@]}"}; do grep -qF -- "$text" "$tmp/pane" || return 1; done
}

# After the exit: the status, and stty's verdict on the terminal.
check_exited() { grep -q '^top exited ' "$tmp/pane" && grep -q '^modes ' "$tmp/pane"; }

# Runs top in a new session, checks the frame, sends `keys`, checks the exit.
run_once() {
  local session=$1 keys=$2
  # The pane runs top, then reports its exit status and the terminal modes.
  {
    printf '%q ' "$cqmgrctl" "${where[@]}" top --interval 0.5
    printf '\necho "top exited $?"\n'
    # shellcheck disable=SC2016 # expanded by the pane's shell
    printf 'echo "modes $(stty -a | tr " ;" "\\n\\n" | grep -x -e icanon -e -icanon -e echo -e -echo | tr "\\n" " ")"\n'
    printf 'sleep 120\n'
  } >"$tmp/run-$session.sh"
  tmx new-session -d -x 120 -y 40 -s "$session" "bash $tmp/run-$session.sh"
  wait_for "$session" 30 frame
  echo "== $session: the frame"
  cat "$tmp/pane"
  tmx send-keys -t "$session" "$keys"
  wait_for "$session" 30 exited
  if ! grep -q '^top exited 0$' "$tmp/pane" || ! grep -q '^modes icanon echo *$' "$tmp/pane"; then
    echo "top_tmux.sh: FAIL: $session: after $keys:" >&2
    cat "$tmp/pane" >&2
    return 1
  fi
  echo "== $session: $(grep '^top exited' "$tmp/pane"), $(grep '^modes' "$tmp/pane")"
  # The session stays until cleanup: killing the server's last session makes
  # the server exit, and the next run's new-session could reach it while it
  # is going ("server exited unexpectedly").
}

run_once quit-q q
run_once quit-ctrl-c C-c
echo "top_tmux.sh: PASS"
