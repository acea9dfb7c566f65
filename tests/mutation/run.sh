#!/usr/bin/env bash
# Proves that the suite notices broken protocols: for each deliberate bug in
# tests/mutation/mutations.txt, copies the tree to a temporary folder, plants
# the bug, builds, and runs the suite lines that should catch it; reports
# CAUGHT (and by which line) or MISSED. Exits non-zero if any bug is missed,
# or if a mutation no longer applies (its anchor text is gone: code moved).
#
#   bash tests/mutation/run.sh [options] [MUTATION...]      (or: make mutation)
#
#   --list              list the mutations and exit
#   --check             only check that every mutation still applies (no builds)
#   --mutations FILE    the list of mutations (default tests/mutation/mutations.txt)
#   --suite FILE        the suite whose lines the mutations name (default
#                       tests/suite.txt; another backend's suite can be given)
#   --make-target T     what to build (default: tests)
#   --every             run all of a mutation's lines and name every one that
#                       catches it (default: stop at the first)
#   --whole-suite       run every line of the suite, not only the mutation's
#                       (lines that fail on the unmutated tree are left out)
#   --tests-from REV    use the tests/ and examples/ of git revision REV (what
#                       older tests would have caught); implies --whole-suite
#   --no-baseline       skip running the lines on the unmutated tree first
#   --keep              keep the temporary folder
#   -j N                parallel build jobs (default 2)
#
# Device waits in the mutated trees give up after SYMCOMM_TIMEOUT (default
# here 30 s), so that a mutation that hangs fails its test in reasonable time.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
mutations="$here/mutations.txt"
suite="$top/tests/suite.txt"
target=tests
whole=0
every=0
tests_from=""
baseline=1
keep=0
jobs=2
mode=run
only=()
while [ $# -gt 0 ]; do
  case "$1" in
  --list) mode=list ;;
  --check) mode=check ;;
  --mutations) mutations=$(realpath "$2"); shift ;;
  --suite) suite=$(realpath "$2"); shift ;;
  --make-target) target=$2; shift ;;
  --every) every=1 ;;
  --whole-suite) whole=1 ;;
  --tests-from) tests_from=$2; whole=1; shift ;;
  --no-baseline) baseline=0 ;;
  --keep) keep=1 ;;
  -j) jobs=$2; shift ;;
  -h | --help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  *) only+=("$1") ;;
  esac
  shift
done
export SYMCOMM_TIMEOUT=${SYMCOMM_TIMEOUT:-30}

# ---- the list: parallel arrays, one entry per mutation; edits as
# "file<TAB>anchor<TAB>replace" lines in m_edits
m_names=() m_about=() m_tests=() m_edits=()
parse() {
  local key val n=-1 file="" lineno=0 pending_anchor=""
  while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    case "$line" in '' | '#'*) continue ;; esac
    key=${line%%[[:space:]]*}
    val=${line#"$key"}
    val=${val#"${val%%[![:space:]]*}"}
    case "$key" in
    mutation) n=$((n + 1)); m_names[n]=$val; m_about[n]=""; m_tests[n]=""; m_edits[n]=""; file="" ;;
    about) m_about[n]=$val ;;
    tests) m_tests[n]=$val ;;
    file) file=$val ;;
    anchor) pending_anchor=$val ;;
    replace)
      [ -n "$file" ] && [ -n "$pending_anchor" ] || { echo "$mutations:$lineno: replace without file and anchor" >&2; exit 2; }
      m_edits[n]+="$file"$'\t'"$pending_anchor"$'\t'"$val"$'\n'
      pending_anchor="" ;;
    *) echo "$mutations:$lineno: unknown keyword '$key'" >&2; exit 2 ;;
    esac
    [ $n -ge 0 ] || { echo "$mutations:$lineno: '$key' before the first 'mutation'" >&2; exit 2; }
  done <"$mutations"
  for i in "${!m_names[@]}"; do
    [ -n "${m_edits[i]}" ] && [ -n "${m_tests[i]}" ] ||
      { echo "$mutations: mutation ${m_names[i]} needs an edit and tests" >&2; exit 2; }
  done
}
parse

selected=()
for i in "${!m_names[@]}"; do
  if [ ${#only[@]} -eq 0 ]; then selected+=("$i"); continue; fi
  for o in "${only[@]}"; do [ "$o" = "${m_names[i]}" ] && selected+=("$i"); done
done
[ ${#selected[@]} -gt 0 ] || { echo "no mutation named ${only[*]}" >&2; exit 2; }

if [ $mode = list ]; then
  for i in "${selected[@]}"; do printf '%-36s %s\n' "${m_names[i]}" "${m_about[i]}"; done
  exit 0
fi

# Plants mutation i's edits in the tree at $1. Each anchor must occur exactly
# once: 0 means the code moved, 2 or more that the anchor no longer says where.
plant() {
  local root=$1 i=$2 file anchor repl content rest count
  while IFS=$'\t' read -r file anchor repl; do
    [ -n "$file" ] || continue
    anchor=${anchor//\\n/$'\n'}
    repl=${repl//\\n/$'\n'}
    if [ ! -f "$root/$file" ]; then
      echo "mutation ${m_names[i]} no longer applies: $file does not exist" >&2
      return 1
    fi
    content=$(cat "$root/$file"; printf x)
    content=${content%x}
    rest=${content//"$anchor"/}
    count=$(((${#content} - ${#rest}) / ${#anchor}))
    if [ "$count" -ne 1 ]; then
      echo "mutation ${m_names[i]} no longer applies: its anchor occurs $count times in $file:" >&2
      printf '%s\n' "$anchor" | sed 's/^/    /' >&2
      return 1
    fi
    printf '%s' "${content/"$anchor"/"$repl"}" >"$root/$file"
  done <<<"${m_edits[i]}"
}

# The suite lines to run for mutation i (all of them with --whole-suite).
suite_of() { # $1: the suite file of the tree under test
  local f=$1 i=$2 name rest
  while read -r name rest; do
    case "$name" in '' | '#'*) continue ;; esac
    [[ "${skip:- }" == *" $name "* ]] && continue
    if [ $whole = 1 ] || [[ " ${m_tests[i]} " == *" $name "* ]]; then
      printf '%s %s\n' "$name" "$rest"
    fi
  done <"$f"
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/symcomm-mutation.XXXXXX")
if [ $keep = 1 ]; then echo "keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi

# The tree as it is: in a git checkout its tracked and untracked files but not
# what git ignores, elsewhere all but the build folders.
mkdir -p "$tmp/base"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$top" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf -) | tar -xf - -C "$tmp/base"
else
  tar -C "$top" --exclude=./build --exclude=./build-san -cf - . | tar -xf - -C "$tmp/base"
fi || { echo "cannot copy the tree" >&2; exit 2; }
if [ -n "$tests_from" ]; then
  rm -rf "$tmp/base/tests" "$tmp/base/examples"
  git -C "$top" archive "$tests_from" tests examples | tar -xf - -C "$tmp/base" ||
    { echo "no tests/ or examples/ at $tests_from" >&2; exit 2; }
  suite="$tmp/base/tests/suite.txt"
fi
[ -f "$suite" ] || { echo "no suite $suite" >&2; exit 2; }
if [ $whole = 0 ]; then # every line a mutation names must exist
  for i in "${selected[@]}"; do
    for t in ${m_tests[i]}; do
      grep -q "^$t[[:space:]]" "$suite" ||
        { echo "mutation ${m_names[i]} names $t, which is not a line of $suite" >&2; exit 2; }
    done
  done
fi

# Every mutation must apply before anything is built: in a scratch folder
# holding only the files it edits.
status=0
for i in "${selected[@]}"; do
  rm -rf "$tmp/check"
  while IFS=$'\t' read -r file _; do
    [ -n "$file" ] && [ -f "$tmp/base/$file" ] || continue
    mkdir -p "$tmp/check/$(dirname "$file")" && cp "$tmp/base/$file" "$tmp/check/$file"
  done <<<"${m_edits[i]}"
  plant "$tmp/check" "$i" || status=1
done
if [ $mode = check ]; then
  [ $status = 0 ] && echo "all ${#selected[@]} mutations apply"
  exit $status
fi
[ $status = 0 ] || { echo "fix the anchors above first" >&2; exit 2; }

build() { # $1: tree; output in $1/build.log
  make -C "$1" -j"$jobs" "$target" >"$1/build.log" 2>&1
}

# Runs suite lines (on stdin) in tree $1 one at a time, through the tree's own
# tests/run.sh. Prints each line that fails, with the first line of its log
# that says why, and returns 1 if any failed; stops at the first unless $2 is 1.
run_lines() {
  local root=$1 all=${2:-0} line name failed=0 why
  while IFS= read -r line; do
    name=${line%% *}
    printf '%s\n' "$line" >"$root/tests/suite.txt"
    if ! (cd "$root" && bash tests/run.sh build >"$root/last-test.log" 2>&1); then
      why=$(grep -m1 -E 'TEST FAILED|FAIL:|wrong bytes|AddressSanitizer|timed out|failed:' "$root/last-test.log" |
        sed -e 's/^ *| *//' -e 's/^TEST FAILED (pid [0-9]*) //' | cut -c1-150)
      printf '%s\t%s\n' "$name" "$why"
      failed=1
      [ "$all" = 1 ] || return 1
    fi
  done
  return $failed
}

echo "building the unmutated tree in $tmp/base"
build "$tmp/base" || { tail -20 "$tmp/base/build.log"; echo "the unmutated tree does not build" >&2; exit 2; }
skip="" # lines that fail on the unmutated tree (--whole-suite only)
if [ $baseline = 1 ]; then
  lines=$(for i in "${selected[@]}"; do suite_of "$suite" "$i"; done | sort -u -k1,1)
  echo "running the lines on the unmutated tree ($(printf '%s\n' "$lines" | wc -l) lines)"
  rm -rf "$tmp/ref" && cp -a "$tmp/base" "$tmp/ref"
  if failed=$(printf '%s\n' "$lines" | run_lines "$tmp/ref" 1); then :; else
    if [ $whole = 0 ]; then
      printf '%s\n' "$failed" >&2
      echo "the unmutated tree fails the lines above: a mutation run means nothing until they pass" >&2
      exit 2
    fi
    # Of a whole suite, what fails without a bug cannot show one: left out.
    printf 'left out, failing on the unmutated tree: %s\n' "$failed"
    skip=" $(cut -f1 <<<"$failed" | paste -sd' ') "
  fi
fi

printf '%-36s %-8s %s\n' "mutation" "result" "caught by (seconds)"
missed=0
for i in "${selected[@]}"; do
  m="$tmp/m"
  rm -rf "$m" && cp -a "$tmp/base" "$m"
  plant "$m" "$i" || exit 2
  t0=$(date +%s)
  if ! build "$m"; then
    printf '%-36s %-8s %s\n' "${m_names[i]}" "NO-BUILD" "(the planted bug does not compile: fix the mutation)"
    tail -5 "$m/build.log" | sed 's/^/    /'
    missed=$((missed + 1))
    continue
  fi
  if by=$(suite_of "$suite" "$i" | run_lines "$m" "$every"); then
    printf '%-36s %-8s %s\n' "${m_names[i]}" "MISSED" "($(($(date +%s) - t0)) s) ${m_about[i]}"
    missed=$((missed + 1))
  else
    printf '%-36s %-8s %s (%s s)\n' "${m_names[i]}" "CAUGHT" "$(cut -f1 <<<"$by" | paste -sd' ')" \
      "$(($(date +%s) - t0))"
    cut -f2 <<<"$by" | sed 's/^/      /'
  fi
done
if [ $missed -ne 0 ]; then
  echo "$missed of ${#selected[@]} planted bugs not caught"
  exit 1
fi
echo "all ${#selected[@]} planted bugs caught"
