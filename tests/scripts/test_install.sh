#!/usr/bin/env bash
# make install into a temporary DESTDIR, then what was installed runs from
# there with nothing of the build tree: an installed tool (symcomm-run
# starting symcomm-perf on 2 ranks, every result checked), a program built
# against the installed header and library through pkg-config, and, where the
# build has it, a program written against nccl.h on the installed
# libnccl.so.2 (which finds the installed libsymcomm). Every installed binary
# resolves its libraries inside DESTDIR. make uninstall then leaves no file.
set -u
B=${B:-build}
fail() { echo "FAIL: $*"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
prefix=/opt/symcomm-test
root=$d/root$prefix
build_abs=$(cd "$B" && pwd)
# The build's own flavour, so that make finds it up to date.
san=0
nm -D "$B/lib/libsymcomm.so" | grep -q __asan_init && san=1
nm -D "$B/lib/libsymcomm.so" | grep -q __tsan_init && san=thread
# A program built here against a sanitized library needs the same runtime.
san_flags=
[ $san = 1 ] && san_flags=-fsanitize=address,undefined
[ $san = thread ] && san_flags=-fsanitize=thread
dest=$d/root
mk() { make --no-print-directory -s BUILD="$B" SAN=$san PREFIX=$prefix DESTDIR="$dest" "$@"; }
mk install >"$d/install.log" 2>&1 || fail "make install: $(tail -5 "$d/install.log")"
for f in include/symcomm.h lib/libsymcomm.so.0 lib/libsymcomm.so lib/libsymcomm.a \
         lib/pkgconfig/symcomm.pc bin/symcomm-run bin/symcomm-perf bin/symcomm-topo; do
  [ -e "$root/$f" ] || fail "make install did not install $prefix/$f"
done
shim=$root/lib/symcomm-nccl/libnccl.so.2
has_shim=0
[ -e "$B/lib/nccl/libnccl.so.2" ] && has_shim=1
[ $has_shim = 0 ] || [ -e "$shim" ] || fail "the build has libnccl.so.2, but it is not in $prefix/lib/symcomm-nccl"
[ -e "$root/lib/libnccl.so.2" ] && fail "libnccl.so.2 installed where a system's NCCL lives ($prefix/lib)"
[ ! -e "$B/lib/libsymcomm_cuda.so" ] || [ -e "$root/lib/libsymcomm_cuda.so" ] ||
  fail "the build has the CUDA backend, but it is not installed beside libsymcomm"
echo "ok: make install DESTDIR=... PREFIX=$prefix"

# Nothing installed names the build tree, or resolves a library outside DESTDIR.
for f in "$root"/bin/* "$root"/lib/*.so* "$shim"; do
  [ -f "$f" ] || continue
  readelf -d "$f" | grep -E 'RPATH|RUNPATH' | grep -qF "$build_abs" && fail "$f has a runpath into the build tree"
  ldd "$f" | grep -F "$build_abs" && fail "$f resolves a library in the build tree"
  for lib in libsymcomm.so.0 libnccl.so.2; do
    got=$(ldd "$f" | awk -v l=$lib '$1 == l { print $3 }')
    [ -z "$got" ] || [ "${got#$root/}" != "$got" ] || fail "$f finds $lib at $got, outside $root"
  done
done
echo "ok: the installed binaries resolve symcomm's libraries inside DESTDIR"

# An installed tool runs from there.
"$root/bin/symcomm-run" -n 2 --timeout 60 -- "$root/bin/symcomm-perf" -o allreduce,allgather \
  -b 8 -e 64K -f 8 -n 2 -w 1 -c 1 >"$d/perf.txt" 2>&1 || fail "installed symcomm-perf: $(tail -5 "$d/perf.txt")"
awk '/^ / { rows++; if ($9 != "0") bad = 1 } END { exit bad || rows == 0 }' "$d/perf.txt" ||
  fail "installed symcomm-perf: wrong results or no rows: $(tail -5 "$d/perf.txt")"
echo "ok: installed symcomm-run and symcomm-perf, 2 ranks, results checked"

# A program built against the installed tree alone (pkg-config), its runpath the installed lib.
flags=$(PKG_CONFIG_PATH=$root/lib/pkgconfig pkg-config --define-variable=prefix="$root" --cflags --libs symcomm) ||
  fail "pkg-config does not know the installed symcomm"
${CC:-cc} $san_flags -o "$d/p2p_bw" examples/p2p_bw.c $flags -Wl,-rpath,"$root/lib" -pthread -lm ||
  fail "examples/p2p_bw.c does not build against the installed header and library"
ldd "$d/p2p_bw" | grep -F "$build_abs" && fail "the installed program resolves into the build tree"
"$root/bin/symcomm-run" -n 2 --timeout 60 -- "$d/p2p_bw" -e 64K -i 2 >"$d/p2p.txt" 2>&1 ||
  fail "a program built against the installed symcomm: $(tail -5 "$d/p2p.txt")"
echo "ok: a program built against the installed header and library runs"

if [ $has_shim = 1 ]; then
  # The nccl.h test program, taking the installed libnccl.so.2 (LD_LIBRARY_PATH
  # comes before its own runpath), which finds the installed libsymcomm.
  ldd_out=$(LD_LIBRARY_PATH=$root/lib/symcomm-nccl ldd "$B/tests/nccl/test_nccl_shim")
  echo "$ldd_out" | grep -q "libnccl.so.2 => $shim" || fail "the installed shim is not the one taken: $ldd_out"
  got=$(echo "$ldd_out" | awk '$1 == "libsymcomm.so.0" { print $3 }')
  [ -n "$got" ] && [ "$(realpath "$got")" = "$(realpath "$root/lib/libsymcomm.so.0")" ] ||
    fail "the installed shim does not find the installed libsymcomm: $ldd_out"
  "$root/bin/symcomm-run" -n 4 --timeout 110 -- env -u SYMCOMM_ADDR SYMCOMM_TIMEOUT=30 \
    LD_LIBRARY_PATH="$root/lib/symcomm-nccl" "$B/tests/nccl/test_nccl_shim" "$d/id" >"$d/nccl.txt" 2>&1 ||
    fail "the nccl.h program on the installed libnccl.so.2: $(grep -v '^vm:' "$d/nccl.txt" | tail -5)"
  echo "ok: a program written against nccl.h runs on the installed libnccl.so.2"
fi

mk uninstall >"$d/uninstall.log" 2>&1 || fail "make uninstall: $(tail -5 "$d/uninstall.log")"
left=$(find "$d/root" -type f -o -type l)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "ok: make uninstall removes every file"

# A DESTDIR with a space is one folder: install writes there and nowhere
# else (not into a relative folder named after its second word), and
# uninstall empties it. A relative PREFIX, which the pkg-config file would
# name, is refused.
dest="$d/stage symcomm-space-check"
mk install >"$d/install2.log" 2>&1 || fail "make install into '$dest': $(tail -5 "$d/install2.log")"
[ -e "$dest$prefix/lib/libsymcomm.so.0" ] || fail "make install DESTDIR='$dest' did not install there"
[ ! -e symcomm-space-check ] || { rm -rf symcomm-space-check; fail "make install wrote into ./symcomm-space-check"; }
[ ! -e "$d/stage" ] || fail "make install wrote into $d/stage"
mk uninstall >"$d/uninstall2.log" 2>&1 || fail "make uninstall: $(tail -5 "$d/uninstall2.log")"
left=$(find "$dest" -type f -o -type l)
[ -z "$left" ] || fail "make uninstall of DESTDIR '$dest' left: $left"
dest=$d/rel
mk PREFIX=relative/prefix install >"$d/install3.log" 2>&1 && fail "make install took PREFIX=relative/prefix"
grep -q "not an absolute path" "$d/install3.log" || fail "make install PREFIX=relative/prefix: $(tail -3 "$d/install3.log")"
[ ! -e relative ] && [ ! -e "$d/rel" ] || fail "make install PREFIX=relative/prefix installed something"
echo "ok: a DESTDIR with a space, a relative PREFIX refused"
