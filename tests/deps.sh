#!/bin/sh
# Installs what building consoled and running its tests needs, from Debian's
# archive (Debian 12). Idempotent; quiet when everything is there.
set -eu

BUILD="meson ninja-build pkg-config gcc clang libtsm-dev libxkbcommon-dev libudev-dev
libsystemd-dev zlib1g-dev libfreetype-dev libfontconfig-dev fonts-dejavu-core fonts-unifont
libclang-rt-14-dev libx11-data"
# The QEMU test bed: QEMU, the guest's busybox, kbd's setfont for the fbcon
# oracle, xkb data for libxkbcommon, console fonts, the tools that fetch
# and unpack the Debian kernel and build the initramfs, and those that make
# the systemd test's Debian root file system (debootstrap, mke2fs -d), and
# the UEFI firmware of the efi guest (ovmf), and the sixel checks' encoders
# and oracle (libsixel-bin: img2sixel, sixel2png; chafa); qemu-system-arm
# for the ARM guest (vexpress-a9, booted by tests/cross/run), binutils for
# the readelf that finds its armhf libraries.
TESTBED="qemu-system-x86 qemu-system-arm binutils busybox-static kbd xkb-data console-setup-linux python3 cpio
zstd xz-utils apt dpkg debootstrap e2fsprogs ovmf fbset libsixel-bin chafa"
# The Debian package (debian/), built and checked with lintian by the
# systemd test's package check.
PACKAGING="build-essential dpkg-dev debhelper lintian systemd udev"

# The benchmark's peers (`tests/deps.sh bench`, from tests/run-bench only):
# the other userspace consoles, copied into the benchmark's guest.
BENCH=""
if [ "${1:-}" = bench ]; then
	BENCH="kmscon fbterm"
fi

missing=""
for p in $BUILD $TESTBED $PACKAGING $BENCH; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
		missing="$missing $p"
	fi
done

if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "consoled: missing packages:$missing (run as root, or apt-get install them)" >&2
		exit 1
	fi
	echo "consoled: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
	# kmscon's package makes itself the autovt@ service of the host's VTs;
	# installed only for the benchmark's guest, it must not take them over.
	case " $missing " in
	*" kmscon "*) systemctl disable kmsconvt@.service >/dev/null 2>&1 ||
		rm -f /etc/systemd/system/autovt@.service ;;
	esac
fi
