#!/usr/bin/env bash
# make install PREFIX=... puts the header, libraries, tools and a pkg-config
# file in place, and a program built against the installed copy runs.
set -u
B=${B:-${1:-build}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

san=""
extra=""
case "$B" in *san*) san="SAN=1"; extra="-fsanitize=address,undefined" ;; esac
make -s install BUILD="$B" $san PREFIX="$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  fail "make install: $(tail -5 "$tmp/install.log")"
for f in include/symcomm.h lib/libsymcomm.so lib/libsymcomm.so.0 lib/libsymcomm.a \
         lib/pkgconfig/symcomm.pc bin/symcomm-run bin/symcomm-topo; do
  [ -e "$tmp/prefix/$f" ] || fail "$f not installed"
done
command -v pkg-config >/dev/null || fail "pkg-config is missing (make check installs it: tests/need_tools.sh)"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
version=$(pkg-config --modversion symcomm) || fail "pkg-config does not know symcomm"
[ "$version" = "0.1.0" ] || fail "pkg-config version '$version'"
cc $extra -o "$tmp/tp_dp" examples/tp_dp.c $(pkg-config --cflags --libs symcomm) \
  -Wl,-rpath,"$tmp/prefix/lib" || fail "cannot build against the installed library"
"$tmp/prefix/bin/symcomm-run" -n 4 --hosts 2 --timeout 30 -- "$tmp/tp_dp" >"$tmp/out" 2>&1 ||
  fail "the installed tools and library did not run: $(tail -5 "$tmp/out")"
[ "$(grep -c '^\[rank  [0-3]\] TP [0-1]/2 {.*}  DP [0-1]/2 {.*}  .*: checked$' "$tmp/out")" -eq 4 ] ||
  fail "expected a checked line from each of 4 ranks: $(cat "$tmp/out")"
"$tmp/prefix/bin/symcomm-topo" --xml topo/hybrid_cube_mesh_8gpu.xml | grep -q HYBRID_CUBE_MESH ||
  fail "installed symcomm-topo"
echo "ok: installed and used through pkg-config"
