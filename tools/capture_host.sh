#!/usr/bin/env bash
# Each command below is in single quotes on purpose: it is recorded verbatim in the trace and expanded by the
# bash -c that runs it (file-wide directive).
# shellcheck disable=SC2016
# Host capture kit (docs/host-rdma.md, "Capturing a real host").
#
# Records, from a real GPU host, the tool output and sysfs/procfs files the host readers
# (plugins/module_utils/host) use, then runs the collection's own readers on the live host and keeps
# their facts and findings. Read-only: it writes only under OUT_DIR.
#
#   bash tools/capture_host.sh OUT_DIR      # from a checkout; as root so lspci -vvv shows capabilities
#
# OUT_DIR/trace.txt   every command as "+ <command line>", its output, then "# rc=<exit status>"
# OUT_DIR/facts.json  facts.gather(root="/") on this host (what rdma_facts returns)
# OUT_DIR/readers.txt a summary of those facts and the findings of checks.host_findings with no planned NIC
#
# tests/fixtures/hosts/from_capture.py rebuilds a root tree from trace.txt (+ facts.json) so a test can replay
# the capture through the readers; keep a capture under tests/fixtures/hosts/captures/<name>/ with a SOURCE.md.
# Needs bash, coreutils and python3 (stdlib); every other tool is optional (a missing one is recorded as such).
set -uo pipefail

out=${1:?usage: capture_host.sh OUT_DIR}
mkdir -p "$out"
repo=$(cd "$(dirname "$0")/.." && pwd)
trace="$out/trace.txt"

# run CMDLINE: record the command line, its output (stdout and stderr) and its exit status
run() {
    {
        printf '+ %s\n' "$1"
        timeout 60 bash -c "$1" 2>&1
        printf '# rc=%s\n' "$?"
    } >>"$trace"
}

: >"$trace"
run 'uname -a'
run 'cat /etc/os-release'
run 'nproc'
# GPUs (NVIDIA, AMD) and their topology
run 'nvidia-smi'
run 'nvidia-smi topo -m'
run 'nvidia-smi --query-gpu=index,pci.bus_id,name,driver_version --format=csv,noheader'
run 'nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,vbios_version --format=csv'
run 'nvidia-smi -q | head -120'
run 'cat /proc/driver/nvidia/version'
run 'rocm-smi --showtopo 2>&1 | head -80'
run 'cat /sys/module/amdgpu/version'
# kernel modules: loaded, built in (modules.builtin, /sys/module), class traces of parameterless built-ins
run "cat /proc/modules | cut -d' ' -f1 | sort | tr '\\n' ' '"
run 'ls /sys/module | grep -i -E "nvidia|peer|mlx|ib_|rdma|bnxt|irdma|^ice$|ionic|amdgpu"'
run 'ls /sys/class/infiniband_verbs /sys/class/misc 2>&1 | head -40'
run 'ls /etc/modprobe.d/ 2>&1; cat /proc/sys/kernel/osrelease; ls "/lib/modules/$(uname -r)/" 2>&1 | head'
run 'grep -E "nvidia|mlx|ib_|rdma|peer|bnxt|irdma|ice|ionic" "/lib/modules/$(uname -r)/modules.builtin" 2>&1 | head -30'
# RDMA devices and netdevs
run 'ls -l /sys/class/infiniband/ /sys/class/net/ 2>&1'
run 'for d in /sys/class/infiniband/*; do [ -e "$d" ] || continue; printf "%s fw_ver=%s hca_type=%s board_id=%s\n" "${d##*/}" "$(cat "$d/fw_ver")" "$(cat "$d/hca_type" 2>/dev/null)" "$(cat "$d/board_id" 2>/dev/null)"; done'
run 'for n in /sys/class/net/*; do [ -e "$n/device" ] || continue; printf "%s driver=%s\n" "${n##*/}" "$(basename "$(readlink -f "$n/device/driver")")"; ethtool -i "${n##*/}" 2>&1; done'
run 'ibv_devinfo -v 2>&1 | head -80'
run 'rdma link show 2>&1'
# GPUDirect RDMA: the files NCCL and RCCL probe, dma-buf prerequisites
run 'ls -la /sys/kernel/mm/memory_peers/ 2>&1; ls -la /sys/kernel/mm/memory_peers/*/ 2>&1'
run 'ls /sys/module/nvidia_peermem/version 2>&1'
run 'grep -c -E " [tT] ib_register_peer_memory_client$" /proc/kallsyms 2>&1'
run 'grep -E "CONFIG_DMABUF_MOVE_NOTIFY|CONFIG_PCI_P2PDMA" "/boot/config-$(uname -r)" 2>&1'
run 'ls /usr/lib/x86_64-linux-gnu/libibverbs.so* /usr/lib/aarch64-linux-gnu/libibverbs.so* /usr/lib64/libibverbs.so* 2>&1'
# collective library versions (the GPUDirect rules depend on them: stacks.NCCL_RULES, RCCL_RULES)
run 'ls /usr/lib/x86_64-linux-gnu/libnccl.so* /usr/lib/aarch64-linux-gnu/libnccl.so* /usr/lib64/libnccl.so* /usr/lib/libnccl.so* 2>&1'
run 'grep -H -E "^#define NCCL_VERSION_CODE" /usr/include/nccl.h /usr/local/include/nccl.h /usr/local/cuda/include/nccl.h /opt/rocm/include/rccl/rccl.h 2>&1'
run 'cat /opt/rocm/.info/version 2>&1'
run 'cat /etc/nccl.conf /etc/rccl.conf 2>&1'
# PCI: every function, the GPUs' paths, links, SR-IOV
run 'for d in /sys/bus/pci/devices/*; do printf "%s %s %s %s numa=%s\n" "${d##*/}" "$(cat "$d/vendor")" "$(cat "$d/device")" "$(cat "$d/class")" "$(cat "$d/numa_node" 2>/dev/null)"; done'
run 'for d in /sys/bus/pci/devices/*; do case $(cat "$d/vendor") in 0x10de|0x1002) readlink -f "$d";; esac; done'
run 'for d in /sys/bus/pci/devices/*; do [ -e "$d/current_link_speed" ] && printf "%s %s x%s (max %s x%s)%s\n" "${d##*/}" "$(cat "$d/current_link_speed")" "$(cat "$d/current_link_width")" "$(cat "$d/max_link_speed")" "$(cat "$d/max_link_width")" "$([ -e "$d/physfn" ] && printf " vf_of=%s" "$(basename "$(readlink -f "$d/physfn")")")"; done 2>&1 | head -60'
run 'lspci -tv 2>&1 | head -60'
run 'lspci -vvv -d 10de: 2>&1 | head -120'
run 'lspci -vvv -d 1002: 2>&1 | head -120'
run 'cat /proc/cmdline; ls /sys/kernel/iommu_groups | wc -l'
run 'for g in /sys/kernel/iommu_groups/*; do echo "$g" "$(cat "$g/type" 2>/dev/null)" "$(ls "$g/devices")"; done | head -40'
# tools, QoS and IRQs
run 'which ibv_devinfo rdma ethtool devlink mlxfwmanager mlxup flint lspci dcb mlnx_qos lldptool niccli rocm-smi 2>&1'
run 'for n in /sys/class/net/*; do [ -e "$n/device" ] || continue; dcb pfc show dev "${n##*/}" 2>&1; ethtool --show-priv-flags "${n##*/}" 2>&1 | head -20; done'
run 'systemctl is-active irqbalance 2>&1; cat /etc/default/irqbalance 2>&1 | grep -v "^#" | head'
# firmware and congestion control beyond mlx5 (read only: nothing is created; docs/host-rdma.md "Congestion control per NIC")
run 'devlink dev info 2>&1 | head -80'
run 'ls /sys/kernel/config/ 2>&1; for f in /sys/kernel/config/bnxt_re/*/ports/1/cc/ecn_enable /sys/kernel/config/bnxt_re/*/ports/1/cc/roce_dscp /sys/kernel/config/bnxt_re/*/ports/1/cc/cnp_dscp /sys/kernel/config/irdma/*/roce_dcqcn_enable; do [ -e "$f" ] && echo "$f $(cat "$f")"; done 2>&1'
run 'for f in /sys/kernel/debug/bnxt_re/*/cc_config/*; do [ -e "$f" ] && echo "$f $(cat "$f")"; done 2>&1 | head -40'
run 'head -5 /proc/interrupts'

# The collection's own readers on this host (stdlib only), through a throwaway collection path.
coll=$(mktemp -d)
mkdir -p "$coll/ansible_collections/aifabric"
ln -s "$repo" "$coll/ansible_collections/aifabric/roce"
PYTHONPATH="$coll" timeout 120 python3 - "$out" <<'PY' >"$out/readers.txt" 2>&1
import json
import sys

from ansible_collections.aifabric.roce.plugins.module_utils.host import checks, facts

out = sys.argv[1]
f = facts.gather(root="/")
with open(out + "/facts.json", "w") as handle:
    json.dump(f, handle, indent=1, sort_keys=True, default=str)
print("gpus:", json.dumps(f["gpus"], default=str))
print("stack:", json.dumps(f["stack"], default=str))
print("rdma_devices:", sorted(f["rdma_devices"]))
print("topology source:", f["topology"]["source"], f["topology"]["nvidia_smi"])
print("gdr:", json.dumps(f["gdr"], default=str))
print("modules:", json.dumps(f["modules"]))
print("iommu:", json.dumps(f["iommu"]))
print("pcie_links:", json.dumps(f["pcie_links"], default=str))
exp = checks.expectations([])
print("findings (no planned NICs):", json.dumps(checks.host_findings(f, exp, "device"), default=str, indent=1))
PY
echo "readers rc=$?" >>"$out/readers.txt"
rm -rf "$coll"
