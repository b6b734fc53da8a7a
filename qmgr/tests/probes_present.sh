#!/bin/sh
# Checks that every USDT probe of qmgr/src/observe/probes.hpp is in the cqmgr binary
# given as $1: one stapsdt note (provider cqmgr) per probe, as `readelf -n`
# lists them, and no semaphore (probes cost nothing while nobody attaches).
# Probes named after the binary are checked instead of the daemon's list (for
# a binary that links parts the daemon does not use yet).
set -eu
bin=$1
shift
probes=${*:-message__activate message__done recipient__assign delivery__start delivery__end \
             feedback dest__dead dest__revive scan__start scan__end refill \
             mx__lookup__start mx__lookup__done}
notes=$(readelf -n "$bin")
status=0
for probe in $probes; do
    if printf '%s\n' "$notes" | grep -A1 -x '    Provider: cqmgr' | grep -qx "    Name: $probe"; then
        echo "ok: cqmgr:$probe"
    else
        echo "missing: cqmgr:$probe"
        status=1
    fi
done
# A probe without a semaphore has "Semaphore: 0x0000000000000000".
if printf '%s\n' "$notes" | grep -A4 -x '    Provider: cqmgr' | grep 'Semaphore:' |
    grep -qv 'Semaphore: 0x0*$'; then
    echo "a cqmgr probe has a semaphore"
    status=1
fi
exit $status
