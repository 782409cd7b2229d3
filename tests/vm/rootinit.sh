#!/bin/busybox sh
# shellcheck shell=dash
# /init of the systemd test guest's initramfs (tests/vm/rootfs.py): loads the
# modules a virtio-blk ext4 root needs, mounts /dev/vda and hands PID 1 over
# to the guest's systemd.  On any failure it exits, the kernel panics and
# QEMU (-no-reboot, panic=-1) ends, so the harness fails at once.

/bin/busybox --install -s /bin
export PATH=/bin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1

while read -r m; do
	insmod "/modules/$m.ko" || echo "rootinit: insmod $m failed"
done </modules/order

i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
mount -t ext4 -o rw /dev/vda /newroot || { echo "rootinit: cannot mount /dev/vda"; exit 1; }

umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /sbin/init
