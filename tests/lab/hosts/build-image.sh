#!/usr/bin/env bash
# Build the lab GPU-host image once: Debian 12 minbase (debootstrap) + python3 (Ansible needs it on
# the target) + iproute2 + ping and lldpd (validate.yml's DF pings and LLDP neighbour check; lab.py up
# starts lldpd in every host), imported into podman as localhost/aifabric-lab-host:<hash>.
# The tag is a hash of this file, so editing the recipe rebuilds and an unchanged recipe is a no-op.
set -euo pipefail
suite=${LAB_SUITE:-bookworm}
mirror=${LAB_MIRROR:-http://deb.debian.org/debian}
packages=python3,iproute2,iputils-ping,procps,lldpd
hash=$( (cat "$0"; echo "$suite $mirror $packages") | sha256sum | cut -c1-12)
image="localhost/aifabric-lab-host:$hash"
if podman image exists "$image"; then
  echo "$image"
  exit 0
fi
root=$(mktemp -d /var/tmp/aifabric-lab-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "building $image (debootstrap $suite minbase, about a minute)" >&2
debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" >&2
# Keep the image small: no apt lists or caches.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
tar -C "$root" -c . | podman import --change 'CMD ["sleep", "infinity"]' - "$image" >&2
echo "$image"
