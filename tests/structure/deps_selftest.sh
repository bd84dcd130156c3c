#!/usr/bin/env bash
# The dependency check can fail: on a copy of a tiny tree where mem includes a
# core header and libcxs_mem.a calls a function of libcxs_core.a, deps.py must
# report both; on the same tree without them it must pass.
set -euo pipefail
DEPS="$(dirname "$0")/deps.py"
W=$(mktemp -d "${TMPDIR:-/tmp}/cxlsim-deps.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/src/mem" "$W/src/core" "$W/include/cxlsim" "$W/build"
echo 'int cxs_core_f(void);' >"$W/include/cxlsim/core.h"
echo 'int cxs_cache_g(void);' >"$W/include/cxlsim/cache.h"
printf '#include "cxlsim/cache.h"\nint cxs_core_f(void) { return cxs_cache_g(); }\n' >"$W/src/core/core.c"
printf '#include "cxlsim/cache.h"\nint cxs_cache_g(void) { return 1; }\n' >"$W/src/mem/cache.c"
build() {
	for m in mem core; do
		cc -c -I"$W/include" "$W/src/$m/"*.c -o "$W/build/$m.o"
		rm -f "$W/build/libcxs_$m.a"
		ar rcs "$W/build/libcxs_$m.a" "$W/build/$m.o"
	done
}
build
/usr/bin/python3 "$DEPS" "$W" "$W/build" >"$W/good.out" || { echo "a clean tree failed:"; cat "$W/good.out"; exit 1; }
# mem reaching up into core, by an include and by a call
printf '#include "cxlsim/cache.h"\n#include "cxlsim/core.h"\nint cxs_cache_g(void) { return cxs_core_f(); }\n' >"$W/src/mem/cache.c"
build
if /usr/bin/python3 "$DEPS" "$W" "$W/build" >"$W/bad.out"; then
	echo "deps.py passed a tree whose mem includes and calls core:"; cat "$W/bad.out"; exit 1
fi
grep -q "mem includes cxlsim/core.h of core" "$W/bad.out" || { echo "include not reported:"; cat "$W/bad.out"; exit 1; }
grep -q "libcxs_mem.a (mem) calls cxs_core_f of core" "$W/bad.out" || { echo "call not reported:"; cat "$W/bad.out"; exit 1; }
echo "dependency check: catches an include and a call that point back up"
