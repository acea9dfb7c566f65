#!/usr/bin/env bash
# The library's surface: libsymcomm.so exports exactly the functions that
# include/symcomm.h declares, nothing internal; and the code that is meant to
# use the public header alone (tools, examples, bench/, multi-process tests)
# reaches no header of src/, which the build does not put on their include
# path either.
set -u
B=${B:-${1:-build}}
lib="$B/lib/libsymcomm.so"
fail() { echo "FAIL: $*"; exit 1; }

[ -f "$lib" ] || fail "no $lib"
exported=$(nm -D --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort) || fail "nm -D $lib"
[ -n "$exported" ] || fail "nm -D shows nothing defined in $lib"
stray=$(echo "$exported" | grep -v '^symcomm_')
[ -z "$stray" ] || fail "$lib exports $(echo "$stray" | wc -l) symbols that are not symcomm_*: $(echo $stray | cut -c1-300)"
declared=$(grep 'SYMCOMM_API' include/symcomm.h | grep -o 'symcomm_[a-z0-9_]*(' | tr -d '(' | sort)
[ "$(echo "$declared" | wc -l)" -ge 50 ] || fail "found only $(echo "$declared" | wc -l) declarations in symcomm.h"
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
[ -z "$missing" ] || fail "declared in symcomm.h but not exported: $(echo $missing)"
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
[ -z "$extra" ] || fail "exported but not declared in symcomm.h: $(echo $extra)"
echo "ok: $lib exports the $(echo "$exported" | wc -l) functions of symcomm.h and nothing else"

# A relative path would get around the include path; none may lead into src/.
inside=$(grep -rn --include='*.c' --include='*.h' '^#include *"[^"]*src/' tools examples bench tests/mp tests/common)
[ -z "$inside" ] || fail "internal headers reached by path: $inside"
echo "ok: tools, examples, bench/ and multi-process tests include no header of src/"
