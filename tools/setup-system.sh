#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages the project needs (idempotent; skips what is present).
set -euo pipefail
# chromium: the drift report screenshot test (headless); shellcheck: ansible-test sanity's shellcheck test;
# frr: the routed twin (tests/lab/twin); prometheus: promtool for the alert rules (make test-monitoring);
# iputils-ping, lldpd: validate.yml's DF pings and LLDP check on the twin's hosts (namespaces that use this machine's
# binaries; without them those probes are "not run" and the validation report says NOT VERIFIED). The twin runs its
# own lldpd per leaf and host namespace, and so does the podman lab's leaf namespace (tests/lab/hosts/lab_lldp.py; the
# lab's host containers get lldpd from their image); the package's service in the root namespace, if any, is not used.
# slurmctld, slurmd, slurm-client, munge: a real Slurm 22.05 for GOR's scheduler tests (tests/lab/slurm_cluster.py starts
# its own munged/slurmctld/slurmd in a temporary directory; the packages' services are not used).
# prometheus-alertmanager, default-jre-headless: GOR's event path (Prometheus -> Alertmanager -> ansible-rulebook, whose
# rule engine runs on Java; tests/lab/event_path.py starts its own, the packages' services are not used).
# libyang-tools: yanglint, the SONiC YANG oracle of the community_sonic driver (tests/unit/nos/test_sonic_yang_oracle.py).
# nftables: GOM's fault campaign on the twin drops probe packets with `nft` (tests/lab/twin/gom_live.py).
packages=(python3-venv graphviz iproute2 iputils-ping lldpd podman runc debootstrap uidmap slirp4netns chromium shellcheck frr prometheus libyang-tools slurmctld slurmd slurm-client munge prometheus-alertmanager default-jre-headless nftables)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  echo "installing: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
