#!/usr/bin/env bash
# Runs the README's two commands as a new user on a stock Debian 12 would: builds a minimal
# root (debootstrap --variant=minbase bookworm, nothing else installed) in a temporary folder,
# clones this repository's committed HEAD into it, and runs scripts/run_main.sh, then
# scripts/test.sh, inside it with chroot as root. By hand, not in CI (about an hour). Needs
# root, debootstrap (installed with apt when missing) and network access to a Debian mirror
# and PyPI. Logs: $work/main.log and $work/test.log; the root is removed at the end unless
# HG_KEEP=1.
#
# Where this machine has a pip configuration (pip.conf files, local wheel folders under /opt)
# and certificate authorities of its own, they are copied and bind-mounted into the root, so pip
# reaches PyPI and finds the same wheels (here: torch's CPU build) as on the host; nothing else
# of the host goes in.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "fresh_debian_check.sh: run as root (debootstrap, chroot)" >&2; exit 1; }
repo=$(cd "$(dirname "$0")/.." && pwd)
mirror=${HG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
command -v debootstrap >/dev/null 2>&1 || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}
work=$(mktemp -d "${TMPDIR:-/var/tmp}/hg-debian.XXXXXX")
root=$work/root
mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
  if [ "${HG_KEEP:-0}" = 1 ]; then echo "kept: $root" >&2; else rm -rf "$root"; fi
}
trap cleanup EXIT
bind() {   # bind <host path> <path in root> [ro]
  mkdir -p "$root$2"
  mount --bind "$1" "$root$2"
  mounts+=("$root$2")
  [ "${3:-}" = ro ] && mount -o remount,bind,ro "$root$2"
  return 0
}

echo "== debootstrap --variant=minbase bookworm -> $root" >&2
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1
git clone -q "$repo" "$root/root/hologram"
echo "   cloned $(git -C "$root/root/hologram" rev-parse --short HEAD)" >&2
cp /etc/resolv.conf "$root/etc/resolv.conf"
bind /proc /proc
bind /sys /sys
bind /dev /dev
bind /dev/pts /dev/pts
for f in /etc/pip.conf /etc/xdg/pip /root/.config/pip; do
  [ -e "$f" ] && mkdir -p "$root$(dirname "$f")" && cp -r "$f" "$root$(dirname "$f")/"
done
for d in /opt/wheels /opt/pypi /opt/pypi-more; do [ -d "$d" ] && bind "$d" "$d" ro; done
# The host's certificate authorities (a network that inspects TLS has its own): the bundle, and
# the local ones, which apt's ca-certificates keeps when it rebuilds the bundle in the root.
[ -e /etc/ssl/certs/ca-certificates.crt ] && mkdir -p "$root/etc/ssl/certs" &&
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
if [ -d /usr/local/share/ca-certificates ]; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp -r /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
fi

run_in_root() {   # run_in_root <name> <command>: the command as root in the clone, a clean env
  local rc=0
  echo "== $1: $2" >&2
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd /root/hologram && $2" >"$work/$1.log" 2>&1 || rc=$?
  echo "   $1: exit status $rc (log $work/$1.log); its last lines:" >&2
  tail -n 5 "$work/$1.log" >&2
  return $rc
}
rc=0
run_in_root main scripts/run_main.sh || rc=1
run_in_root test scripts/test.sh || rc=1
[ $rc = 0 ] && echo "== both README commands passed on a minimal Debian 12" >&2
exit $rc
