#!/usr/bin/env bash
# `scripts/setup.sh demo` on a fresh Debian machine, timed: a minimal bookworm made by
# debootstrap in DIR (default /var/tmp/inferscope-fresh, which must not exist), this
# checkout cloned into it, the CUDA toolkit bound read-only where these machines have
# it, then the demo run twice:
# first as a new user runs it (packages installed, then the build, then the demo), then
# again from a clean build dir with the packages already there (the build and the demo
# alone). Prints the wall and CPU time of each. Needs root, debootstrap and a Debian mirror.
#
#   bench/fresh-demo.sh [DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-/var/tmp/inferscope-fresh}
[ "$(id -u)" -eq 0 ] || { echo "fresh-demo.sh: needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh-demo.sh: install debootstrap" >&2; exit 2; }

[ ! -e "$dir" ] || { echo "fresh-demo.sh: $dir exists; a fresh machine needs a new one" >&2; exit 2; }
t0=$(date +%s)
debootstrap --variant=minbase bookworm "$dir" http://deb.debian.org/debian >/dev/null
echo "debootstrap: $(($(date +%s) - t0)) s (not part of the demo)"
cp /etc/resolv.conf "$dir/etc/resolv.conf"
mounted=()
bind() {	# source, target inside the chroot, mount options
	mkdir -p "$dir$2"
	mount "${@:3}" "$1" "$dir$2"
	mounted=("$dir$2" "${mounted[@]}")
}
cleanup() {
	for m in "${mounted[@]}"; do
		umount "$m" 2>/dev/null || true
	done
}
trap cleanup EXIT
bind proc /proc -t proc
bind /dev /dev --bind
if [ -d /usr/local/cuda ]; then
	bind /usr/local/cuda /usr/local/cuda --bind -o ro
fi
rm -rf "$dir/root/inferscope"
git clone -q "$top" "$dir/root/inferscope"

run() {	# label
	chroot "$dir" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c '
		cd /root/inferscope
		rm -rf build demo-out
		s=$(date +%s.%N)
		./scripts/setup.sh demo >/tmp/demo.log 2>&1 || { tail -20 /tmp/demo.log; exit 1; }
		e=$(date +%s.%N)
		times >/tmp/times # in this shell: a pipe would run it in a child that has none
		read -r cu cs < <(tail -1 /tmp/times)
		echo "$e $s $cu $cs"' | {
		read -r e s cu cs
		printf '%s: %.0f s wall, CPU %s user + %s system; load %s\n' "$1" \
			"$(echo "$e - $s" | awk '{print $1 - $3}')" "$cu" "$cs" \
			"$(cut -d' ' -f1 /proc/loadavg)"
	}
}
run "setup.sh demo, fresh (packages, build, demo)"
run "setup.sh demo again (build and demo; packages there)"
