#!/bin/sh
# Runs every test binary of the runtime crate under valgrind's memcheck,
# one test thread, the random walk shortened. Extra arguments go to cargo
# (for example --features stats-full). Exits nonzero on any failure or
# memcheck error.
set -eu
cd "$(dirname "$0")/../.."
bins=$(cargo test -p rt "$@" --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p')
[ -n "$bins" ] || { echo "valgrind.sh: no test binaries built" >&2; exit 1; }
status=0
for bin in $bins; do
    echo "== $bin"
    SSPUR_RT_FUZZ_OPS=${SSPUR_RT_FUZZ_OPS:-20000} \
        valgrind -q --error-exitcode=1 --leak-check=no "$bin" --test-threads=1 || status=1
done
exit $status
