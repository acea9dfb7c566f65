#!/usr/bin/env bash
# Bus bandwidth against size, from benchmark result files, as a PNG.
#
#   bash bench/plot/plot_busbw.sh [options] FILE.json... [FOLDER...]
#
# Reads rows in the format of bench/RESULTS_FORMAT.md (symcomm-perf --json,
# bench/mpi_allreduce --json; a folder stands for its *.json files) and draws
# one line per (engine, op) -- per (engine, op, ranks) when the files hold
# several rank counts -- with busbw (GB/s) against the size in bytes on a
# log2 axis. Where several rows share a line and a size (other dtypes, redops
# or roots, repeated runs), the point is their median. Out-of-place rows only,
# unless --inplace.
#
# Options:
#   -o FILE         the PNG to write (default busbw.png)
#   --title TEXT    the plot's title (default: the machine of the first file)
#   --op OP         only this operation (e.g. allreduce)
#   --dtype TYPE    only this dtype (e.g. float32)
#   --redop OP      only this reduction (e.g. sum)
#   --inplace       in-place rows instead of out-of-place ones
#   --label TEXT    name the lines of the files that follow TEXT instead of
#                   their engine (to compare runs of one engine, e.g. -R 0/1)
#   --no-install    fail rather than install gnuplot
#
# Needs gnuplot; when it is missing the script says so and installs
# gnuplot-nox with apt-get (as root, or through sudo). Parsing is plain awk
# over the layout both writers use: one row object per line.
set -euo pipefail

out=busbw.png
title=""
want_op="" want_dtype="" want_redop="" inplace=false install=true label=""
files=()
labels=()
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "plot_busbw.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    -o) out=${2:?-o needs a file}; shift 2 ;;
    --title) title=${2:?--title needs a text}; shift 2 ;;
    --op) want_op=${2:?--op needs a name}; shift 2 ;;
    --dtype) want_dtype=${2:?--dtype needs a name}; shift 2 ;;
    --redop) want_redop=${2:?--redop needs a name}; shift 2 ;;
    --inplace) inplace=true; shift ;;
    --no-install) install=false; shift ;;
    --label) label=${2:?--label needs a text}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) usage >&2; exit 2 ;;
    *)
      if [ -d "$1" ]; then
        for f in "$1"/*.json; do [ -e "$f" ] && files+=("$f") && labels+=("$label"); done
      else
        files+=("$1")
        labels+=("$label")
      fi
      shift ;;
  esac
done
[ ${#files[@]} -gt 0 ] || { usage >&2; exit 2; }
for f in "${files[@]}"; do [ -r "$f" ] || die "cannot read $f"; done

if ! command -v gnuplot >/dev/null; then
  $install || die "gnuplot is not installed (and --no-install was given)"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "gnuplot is not installed, and installing it needs root or sudo"
    sudo=sudo
  fi
  echo "plot_busbw.sh: gnuplot is missing: installing gnuplot-nox with apt-get" >&2
  $sudo apt-get update -qq >&2 || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq gnuplot-nox >&2 ||
    die "apt-get install gnuplot-nox failed"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One line per row: engine (or label) <TAB> op <TAB> nranks <TAB> bytes <TAB>
# busbw, and the machine of the first file for the title.
for i in "${!files[@]}"; do printf '%s\t%s\n' "${files[$i]}" "${labels[$i]}"; done >"$tmp/labels"
awk -v want_op="$want_op" -v want_dtype="$want_dtype" -v want_redop="$want_redop" \
    -v inplace="$inplace" -v machine_file="$tmp/machine" -v label_file="$tmp/labels" '
  function str(line, key,   m, v) {
    if (!match(line, "\"" key "\": *\"[^\"]*\"")) return ""
    v = substr(line, RSTART, RLENGTH); sub(/^[^:]*: *"/, "", v); sub(/"$/, "", v); return v
  }
  function num(line, key,   v) {
    if (!match(line, "\"" key "\": *[-0-9.eE+a-z]+")) return ""
    v = substr(line, RSTART, RLENGTH); sub(/^[^:]*: */, "", v); return v
  }
  BEGIN { FS = "\t"; while ((getline l < label_file) > 0) { split(l, p, "\t"); lab[p[1]] = p[2] }; FS = " " }
  FNR == 1 { engine = lab[FILENAME]; nranks = ""; file = FILENAME }
  /"engine":/ && engine == "" && $0 !~ /"op":/ { engine = str($0, "engine") }
  /"nranks":/ && nranks == "" && $0 !~ /"op":/ { nranks = num($0, "nranks") }
  /"machine":/ && machine == "" { machine = str($0, "machine"); print machine > machine_file }
  /"op":/ {
    seen[file] = 1
    if (want_op != "" && str($0, "op") != want_op) next
    if (want_dtype != "" && str($0, "dtype") != want_dtype) next
    if (want_redop != "" && str($0, "redop") != want_redop) next
    if (num($0, "inplace") != inplace) next
    printf "%s\t%s\t%s\t%s\t%s\n", engine, str($0, "op"), nranks, num($0, "bytes"), num($0, "busbw_gbs")
  }
  END { for (i = 1; i < ARGC; i++) if (!(ARGV[i] in seen)) print "no rows in " ARGV[i] > "/dev/stderr" }
' "${files[@]}" >"$tmp/rows.tsv"
[ -s "$tmp/rows.tsv" ] || die "no rows matched in ${files[*]}"

# Medians per (engine, op, nranks, bytes), then one gnuplot data block per
# (engine, op, nranks), sizes ascending.
sort -t "$(printf '\t')" -k1,1 -k2,2 -k3,3n -k4,4n -k5,5g "$tmp/rows.tsv" | awk -F '\t' '
  function flush(   m) {
    if (n == 0) return
    m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    if (line != last_line) {
      if (blocks++) printf "\n\n"
      printf "# %s\n", line
      last_line = line
    }
    printf "%s %s\n", bytes, m
    n = 0
  }
  { key = $1 "\t" $2 "\t" $3 "\t" $4
    if (key != cur) { flush(); cur = key; line = $1 "\t" $2 "\t" $3; bytes = $4 }
    v[++n] = $5 }
  END { flush() }
' >"$tmp/data"

# Block titles: "engine op", with the rank count when there are several.
grep '^# ' "$tmp/data" | sed 's/^# //' >"$tmp/keys"
several_np=$(cut -f3 "$tmp/keys" | sort -u | wc -l)
[ -n "$title" ] || title="busbw: $(cat "$tmp/machine" 2>/dev/null || echo unknown machine)"
nblocks=$(wc -l <"$tmp/keys")

term="pngcairo size 1100,700 enhanced font 'sans,11'"
gnuplot -e "set terminal" 2>&1 | grep -q pngcairo || term="png size 1100,700"
esc() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
{
  echo "set terminal $term"
  echo "set output \"$(esc "$out")\""
  echo "set title \"$(esc "$title")\" noenhanced"
  echo "set logscale x 2"
  echo "set format x \"%.0b%B\""
  echo "set xlabel \"size (bytes)\""
  echo "set ylabel \"bus bandwidth (GB/s)\""
  echo "set grid xtics ytics"
  echo "set key top left noenhanced"
  echo "set yrange [0:*]"
  printf 'plot'
  i=0
  while IFS="$(printf '\t')" read -r engine op np; do
    label="$engine $op"
    [ "$several_np" -gt 1 ] && label="$label, $np ranks"
    [ $i -gt 0 ] && printf ','
    printf ' "%s" index %d using 1:2 with linespoints lw 2 pt 7 ps 0.8 title "%s"' \
      "$(esc "$tmp/data")" "$i" "$(esc "$label")"
    i=$((i + 1))
  done <"$tmp/keys"
  echo
} >"$tmp/plot.gp"
gnuplot "$tmp/plot.gp" || die "gnuplot failed (script: $tmp/plot.gp)"
echo "plot_busbw.sh: wrote $out ($nblocks line(s) from ${#files[@]} file(s))"
