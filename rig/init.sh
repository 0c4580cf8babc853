#!/bin/busybox sh
# The rig guest's /init (busybox, in the initramfs rig/rig.py builds): load the modules,
# bind the NVMe controllers one at a time, link each device by its serial under
# /dev/rig, put the host's / (read-only, 9p) under a RAM overlay, mount the writable
# shares at their host paths, run the command there, and power off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
hostname rig

fail() { echo "rig-init: $*" >&2; [ -n "$OUT" ] && echo 125 > /newroot$OUT/rc; sync; poweroff -f; }
for word in $(cat /proc/cmdline); do
  case "$word" in
    rig.out=*) OUT="${word#rig.out=}" ;;
    rig.multipath=*) MULTIPATH="${word#rig.multipath=}" ;;
  esac
done

# Modules in dependency order; NVMe controllers are held back from the driver and
# bound one by one in PCI order, so controller N is always nvmeN (nvme-rig.md, pitfall 1).
while read -r mod params; do
  [ "$mod" = nvme.ko ] && echo 0 > /sys/bus/pci/drivers_autoprobe
  # rig.py run --multipath: NVMe multipath heads, as a distribution kernel has them.
  [ "$mod" = nvme-core.ko ] && [ -n "$MULTIPATH" ] && params="multipath=$MULTIPATH"
  insmod "/modules/$mod" $params || fail "insmod $mod $params"
  if [ "$mod" = nvme.ko ]; then
    n=0
    for dev in /sys/bus/pci/devices/*; do
      [ "$(cat "$dev/class")" = 0x010802 ] || continue
      echo "${dev##*/}" > /sys/bus/pci/drivers/nvme/bind
      i=0
      until [ -e /sys/class/nvme/nvme$n/nvme${n}n1 ] || [ -e /dev/nvme${n}n1 ]; do
        i=$((i + 1)); [ $i -gt 600 ] && fail "nvme$n (${dev##*/}) has no namespace"
        sleep 0.05
      done
      n=$((n + 1))
    done
    echo 1 > /sys/bus/pci/drivers_autoprobe
  fi
done < /modules/load.list

mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro hostroot /host || fail "9p root"
mount -t tmpfs -o size=1g tmpfs /upper
mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/host,upperdir=/upper/u,workdir=/upper/w /newroot ||
  fail "overlay"
mount -o bind /dev /newroot/dev
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
mount -t tmpfs -o size=512m tmpfs /newroot/tmp
mount -t tmpfs tmpfs /newroot/run
mkdir -p /newroot/dev/shm && mount -t tmpfs tmpfs /newroot/dev/shm

mkdir -p "/newroot$OUT"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 share0 "/newroot$OUT" || fail "9p out"
i=0
while read -r path; do
  if [ $i -gt 0 ]; then
    mkdir -p "/newroot$path"
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 "share$i" "/newroot$path" ||
      fail "9p share $path"
  fi
  i=$((i + 1))
done < "/newroot$OUT/shares"

# Stable names: /dev/rig/SERIAL (block) and SERIAL-ng (NVMe generic), scsi and scsi-sg.
mkdir -p /dev/rig
for c in /sys/class/nvme/nvme*; do
  serial=$(cat "$c/serial" | tr -d ' ')
  name=${c##*/}
  [ -e /dev/${name}n1 ] && ln -s /dev/${name}n1 /dev/rig/$serial
  [ -e /dev/ng${name#nvme}n1 ] && ln -s /dev/ng${name#nvme}n1 /dev/rig/$serial-ng
done
# Before 6.10 (zone write plugging) only mq-deadline keeps a zone's writes in order, and
# a ZNS namespace comes up with none (Debian 12's 6.1): at depth 4 one run in 20 failed
# with Zone Invalid Write. Set mq-deadline there, as fio's t/zbd harness does (ioscope
# warns of the other; rig::guest::order::zone_writes_out_of_order_are_warned_of).
case "$(uname -r)" in
  [0-5].*|6.[0-9].*|6.[0-9]-*)
    for q in /sys/block/nvme*/queue; do
      [ "$(cat "$q/zoned")" = none ] || echo mq-deadline > "$q/scheduler" || fail "mq-deadline on $q"
    done ;;
esac
i=0
until ls /sys/block/ | grep -q '^sd'; do
  i=$((i + 1)); [ $i -gt 200 ] && break
  sleep 0.05
done
for b in /sys/block/sd*; do
  [ -e "$b" ] || continue
  ln -s /dev/${b##*/} /dev/rig/scsi
  for g in "$b"/device/scsi_generic/sg*; do
    [ -e "$g" ] && ln -s /dev/${g##*/} /dev/rig/scsi-sg
  done
  break
done

chroot /newroot /bin/sh "$OUT/cmd.sh" > "/newroot$OUT/stdout" 2> "/newroot$OUT/stderr"
echo $? > "/newroot$OUT/rc"
sync
umount "/newroot$OUT" 2>/dev/null
poweroff -f
