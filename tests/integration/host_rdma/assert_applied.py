"""After the QoS and IRQ roles: the fixture trees hold the profile values and the pinned affinity."""
import os
import sys

fx = sys.argv[1]


def read(host, rel):
    with open(os.path.join(fx, host, "root", rel.lstrip("/"))) as handle:
        return handle.read().strip()


for host in ("h100-cx7", "gpu8-nic4", "broken"):
    assert read(host, "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos") == "106", host
    assert "aifabric-rdma-qos" in read(host, "/etc/systemd/system/aifabric-rdma-qos.service")
    assert "--policyscript=/etc/aifabric/irqbalance-policy.sh" in read(host, "/etc/default/irqbalance")
    assert "spread rail0 " in read(host, "/usr/local/sbin/aifabric-irq-affinity")
for host in ("h100-cx7", "broken"):  # MLNX_OFED-style ecn sysfs present
    assert read(host, "/sys/class/net/rail0/ecn/roce_np/enable/3") == "1"
    assert read(host, "/sys/class/net/rail0/ecn/roce_rp/enable/3") == "1"
    assert read(host, "/sys/class/net/rail0/ecn/roce_np/enable/2") == "0"
    assert read(host, "/sys/class/net/rail0/ecn/roce_np/cnp_dscp") == "48"
    assert read(host, "/sys/class/net/rail0/ecn/roce_np/cnp_802p_prio") == "6"
assert "mlnx_qos -i rail0 --trust dscp --pfc 0,0,0,1,0,0,0,0" in read("h100-cx7", "/usr/local/sbin/aifabric-rdma-qos")
assert "dcb pfc set dev rail0 prio-pfc 0:off 1:off 2:off 3:on" in read("gpu8-nic4", "/usr/local/sbin/aifabric-rdma-qos")
# IRQs: first completion vector of rail0 (node 0) on CPU 1 (0 reserved); rail4 of h100 on node 1
irqs = sorted(int(x) for x in os.listdir(os.path.join(fx, "h100-cx7", "root/sys/class/net/rail0/device/msi_irqs")))
assert read("h100-cx7", "/proc/irq/%d/smp_affinity_list" % irqs[0]) == "0-127"   # async IRQ untouched
assert read("h100-cx7", "/proc/irq/%d/smp_affinity_list" % irqs[1]) == "1"
irqs4 = sorted(int(x) for x in os.listdir(os.path.join(fx, "h100-cx7", "root/sys/class/net/rail4/device/msi_irqs")))
assert read("h100-cx7", "/proc/irq/%d/smp_affinity_list" % irqs4[1]) == "32"
print("applied state OK")
# NCCL: /etc/nccl.conf as NCCL reads it (NAME=value, verbatim) and the profile script
for host in ("h100-cx7", "gpu8-nic4", "broken", "degraded"):
    conf = dict(line.split("=", 1) for line in read(host, "/etc/nccl.conf").splitlines() if not line.startswith("#"))
    assert conf["NCCL_IB_HCA"].startswith("=mlx5_") and conf["NCCL_IB_TC"] == "106", (host, conf)
    # the lab intent sets no nccl.gid_index: NCCL >= 2.21 picks the RoCEv2 GID; the socket interface is an exact match
    assert conf["NCCL_CROSS_NIC"] == "0" and "NCCL_IB_GID_INDEX" not in conf, (host, conf)
    assert conf["NCCL_SOCKET_IFNAME"] == "=eth0", (host, conf)
    assert ("NCCL_TOPO_FILE" in conf) == (host == "gpu8-nic4"), (host, conf)
    assert "export NCCL_IB_TC='106'" in read(host, "/etc/profile.d/aifabric-nccl.sh")
