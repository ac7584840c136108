# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the VM lab scripts (sourced, not run).

NLAT_CACHE=${NLAT_CACHE:-/var/cache/nvme-latency}

die()
{
	echo "error: $*" >&2
	exit 1
}

# need CMD PACKAGE: install PACKAGE with apt when CMD is missing.
need()
{
	command -v "$1" > /dev/null && return 0
	echo "installing $2 (for $1)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" > /dev/null ||
		die "cannot install $2"
}

vm_rootfs_dir()
{
	echo "$NLAT_CACHE/rootfs/$1"
}

# host_mirror main|security: the URI apt on this host uses for Debian's
# main archive or its security archive, from deb822 or one-line sources.
host_mirror()
{
	local want=$1 f uri suites

	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -f $f ]] || continue
		uri= suites=
		while IFS= read -r line || [[ -n $line ]]; do
			case $line in
			URIs:*) uri=${line#URIs:} ;;
			Suites:*) suites=${line#Suites:} ;;
			"")
				_mirror_pick "$want" "$uri" "$suites" && return 0
				uri= suites= ;;
			esac
		done < "$f"
		_mirror_pick "$want" "$uri" "$suites" && return 0
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -f $f ]] || continue
		while read -r type uri suite _; do
			[[ $type == deb ]] || continue
			_mirror_pick "$want" "$uri" "$suite" && return 0
		done < "$f"
	done
	return 0
}

_mirror_pick()
{
	local want=$1 uri=${2// /} suites=$3

	[[ -n $uri && $uri != *[[:space:]]* ]] || return 1
	case $want:$suites in
	security:*-security*) echo "$uri" ;;
	main:*-security*) return 1 ;;
	main:*) [[ $uri == */debian || $uri == */debian/ ]] || return 1
		echo "$uri" ;;
	*) return 1 ;;
	esac
}

# chroot_run ROOT CMD...: run CMD inside ROOT with /proc, /sys and /dev
# mounted.  The mounts live in a private mount namespace of their own, so
# they vanish with CMD and concurrent chroots never see each other's.
# NLAT_BIND="SRC:DST ..." adds bind mounts (DST inside ROOT).
chroot_run()
{
	local root=$1
	shift

	cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2> /dev/null || true
	unshare -m --propagation private /bin/bash -c '
		set -e
		root=$1
		shift
		mount -t proc proc "$root/proc"
		mount -t sysfs sys "$root/sys"
		mount --rbind /dev "$root/dev"
		for b in $NLAT_BIND; do
			mkdir -p "$root/${b#*:}"
			mount --bind "${b%%:*}" "$root/${b#*:}"
		done
		exec chroot "$root" "$@"' chroot_run "$root" "$@"
}

# rootfs_kver ROOT: the release of the (newest) kernel installed in ROOT.
rootfs_kver()
{
	local d

	d=$(ls -d "$1"/lib/modules/*/kernel 2> /dev/null | sort -V | tail -1)
	[[ -n $d ]] || return 1
	d=${d%/kernel}
	echo "${d##*/}"
}

# with_checkout ROOT CMD...: run CMD in ROOT's chroot with this checkout
# bind-mounted at /mnt/nvme-latency.
with_checkout()
{
	local top

	top=$(dirname "$(dirname "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")")")
	NLAT_BIND="$top:/mnt/nvme-latency ${NLAT_BIND:-}" chroot_run "$@"
}

# debug_dir SUITE [FLAVOUR]: the cache of SUITE's lab kernel FLAVOUR (debug,
# the default, kcsan or fault; tests/vm/mkdebugkernel).  Its root/ is a copy of
# SUITE's root filesystem plus that kernel, its modules and build tree, so
# the shared root never boots or builds it.
debug_dir()
{
	echo "$NLAT_CACHE/${2:-debug}/$1"
}

# debug_kver SUITE [FLAVOUR]: the release of that kernel, once built.
debug_kver()
{
	local f

	f=$(debug_dir "$1" "${2:-debug}")/root/.nlat-debug
	[[ -f $f ]] || return 1
	sed -n 's/^kver=//p' "$f"
}
