#!/bin/sh
# Every cqmgr_ parameter the configuration reader knows (conf/src) has an
# entry in cqmgr(8).
#
#   parameters_test.sh SOURCE_DIR
src=$1
status=0
names=$(grep -ohE '"cqmgr_[a-z_]+"' "$src"/conf/src/*.cpp | tr -d '"' | sort -u)
[ -n "$names" ] || { echo "FAIL: no cqmgr_ parameter found in $src/conf/src"; exit 1; }
for p in $names; do
    grep -qF "\\fB$p\\fR (default:" "$src/man/cqmgr.8" || { echo "FAIL: cqmgr(8) has no entry for $p"; status=1; }
done
[ $status = 0 ] && echo "PASS: $(echo "$names" | wc -l) parameters"
exit $status
