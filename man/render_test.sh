#!/bin/sh
# Renders each manual page with groff's man macros and every warning on;
# fails on any output to standard error.  Skips (77) without groff.
command -v groff >/dev/null || { echo "SKIP: groff is not installed"; exit 77; }
status=0
for page in "$@"; do
    err=$(groff -ww -z -man -Tutf8 "$page" 2>&1)
    if [ -n "$err" ]; then
        echo "FAIL: $page:"
        echo "$err"
        status=1
    fi
done
[ $status = 0 ] && echo "PASS"
exit $status
