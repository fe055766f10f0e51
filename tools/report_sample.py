"""The sample 1,000-host drift report (`make report-sample`): what an audit of a large fleet looks like, without one.

A generated audit of N GPU hosts (default 1,000) and 8 leafs: two real drifts (gpu0002 rail1 MTU 1500, leaf1
Ethernet1 MTU 1500) and ten readiness findings repeated on every host, as the lab's containers show them. Built and
rendered by the collection's own report code (audit/report.py, as module drift_report writes it): drift first, each
shared finding once with the devices behind it collapsed. The fleet is generated: the report's fabric name says so.

    tools/report_sample.py [--dest build/report-sample] [--hosts 1000]
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import (  # noqa: E402
    build_report, entry_from_findings, entry_from_result, render_html, render_json, render_markdown)

GENERATED = "2026-11-26T02:00:00Z"   # a fixed time: the sample is byte-identical from run to run


def fleet(hosts=1000):
    """A generated audit of `hosts` GPU hosts: two real drifts, ten readiness findings repeated on every host
    (as in the lab's containers), switches in sync."""
    entries = []
    for n in range(1, hosts + 1):
        host = "gpu%04d" % n
        net = {"changed": False}
        if n == 2:
            net = {"changed": True, "drift": [{"item": "rail1.mtu", "expected": 9000, "actual": 1500}]}
        entries.append(entry_from_result(host, "host", "host_network", net))
        findings = [{"id": "rdma_module_%d" % k, "severity": "error", "subject": "mlx5_ib", "expected": "loaded",
                     "actual": "missing", "message": "RDMA module %d not loaded" % k} for k in range(10)]
        entries.append(dict(entry_from_findings(host, "host", "host_preflight", findings), category="readiness"))
    for n in range(8):
        drift = {"changed": True, "drift": [{"item": "interface Ethernet1 > mtu", "expected": "9214", "actual": "1500"}]}
        entries.append(entry_from_result("leaf%d" % n, "switch", "switch", drift if n == 1 else {"changed": False}))
    return entries


def write(dest, hosts):
    report = build_report(fleet(hosts), "sample-%d-hosts (generated)" % hosts, generated=GENERATED)
    os.makedirs(dest, exist_ok=True)
    files = []
    for name, render in (("drift-report.json", render_json), ("drift-report.md", render_markdown),
                         ("drift-report.html", render_html)):
        files.append(os.path.join(dest, name))
        with open(files[-1], "w") as handle:
            handle.write(render(report))
    return report, files


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--dest", default=os.path.join(ROOT, "build", "report-sample"))
    parser.add_argument("--hosts", type=int, default=1000, help="generated GPU hosts (1..100000)")
    args = parser.parse_args(argv)
    if not 1 <= args.hosts <= 100000:
        parser.error("--hosts %d: give 1..100000" % args.hosts)
    report, files = write(os.path.abspath(args.dest), args.hosts)
    print("%s: %d devices (generated fleet); open file://%s" % (report["verdict"], report["summary"]["devices"], files[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
