#!/usr/bin/env bash
# What `make test` needs besides gcc and make: pkg-config (the installed
# library is used through its .pc file) and python3 (symcomm-perf's JSON is
# checked with it); as root also ip from iproute2 (symcomm-run --netns makes its
# namespaces with it; without root those tests skip). On a machine without them,
# installs them with apt-get (as
# root, or through sudo) and says so; where that is not possible, stops with
# the packages to install, so that no test has to skip.
set -u
missing=()
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v python3 >/dev/null || missing+=(python3)
has_ip() { command -v ip >/dev/null || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ]; }
[ "$(id -u)" -eq 0 ] && ! has_ip && missing+=(iproute2)
[ ${#missing[@]} -eq 0 ] && exit 0

die() { echo "make test: $* (apt-get install ${missing[*]})" >&2; exit 1; }
command -v apt-get >/dev/null || die "needs ${missing[*]}, and there is no apt-get to install them with"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || die "needs ${missing[*]}; installing them needs root or sudo"
  sudo=sudo
fi
echo "make test: ${missing[*]} missing: installing with apt-get${sudo:+ (through sudo)}"
$sudo apt-get update -qq || die "apt-get update failed"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null ||
  die "apt-get install failed"
for tool in pkg-config python3; do
  command -v "$tool" >/dev/null || die "$tool is still not on PATH after installing"
done
[ "$(id -u)" -ne 0 ] || has_ip || die "ip is still missing after installing iproute2"
echo "make test: installed ${missing[*]}"
