"""The fleet summary of the fixture hosts holds exactly the planted problems."""
import json
import sys

SYNTH = ("synthetic_root", "root")  # every fixture host says its checks ran against a tree
PLANTED = {
    # dma-buf only (open module 550, rdma-core 50, no peer-memory file): NCCL's registration test is not run here
    "h100-cx7": {SYNTH, ("gdr_dmabuf_untested", "gpudirect_rdma")},
    "gpu8-nic4": {SYNTH},
    "broken": {SYNTH, ("fw_host_mixed", "ConnectX-7"), ("fw_fleet_mixed", "ConnectX-7"), ("gdr_ready", "gpudirect_rdma"),
               ("gpu_nic_affinity", "rail3<->GPU3"), ("acs_p2p", "rail1<->GPU1")},
    "degraded": {SYNTH, ("gdr_dmabuf_untested", "gpudirect_rdma"),
                 ("pcie_link", "rail2"), ("pcie_gpu_speed", "GPU5"), ("ats", "rail6"), ("iommu_mode", "iommu"),
                 ("fw_baseline", "mlx5_1"), ("fw_host_mixed", "ConnectX-7"), ("fw_fleet_mixed", "ConnectX-7")},
}
summary = json.load(open(sys.argv[1]))
bad = False
for host, want in PLANTED.items():
    got = set((f["id"], f["subject"]) for f in summary["hosts"][host]["findings"])
    if got != want:
        print("%s: got %s, want %s" % (host, sorted(got), sorted(want)))
        bad = True
assert summary["hosts"]["broken"]["status"] == "warn" and summary["totals"] == {"hosts": 4, "pass": 0, "warn": 4, "fail": 0}, summary["totals"]
sys.exit(1 if bad else 0)
