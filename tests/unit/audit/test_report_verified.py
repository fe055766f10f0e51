"""No green without a check (issue 27): every probe is passed, failed or not run (why); a device whose required
checks did not run is NOT VERIFIED, never clean; the report lists what passed; one finding on many hosts is one
row; drift comes first and names its object."""
import os
import re
import sys

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import (
    banner_class, build_report, collect_entries, entry_from_result, gpus_by_object,
    items_from_change_items, render_html, render_json, render_markdown)
from ansible_collections.aifabric.roce.plugins.module_utils.audit.results import counts, normalise, result

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools"))
from report_sample import fleet  # noqa: E402  the generated 1,000-host audit of `make report-sample`

SKIPPED_PING = {"probe": "ping 10.100.0.2", "status": "skipped", "expected": "", "actual": "ping not installed (iputils-ping)"}
SKIPPED_LLDP = {"probe": "lldp", "status": "skipped", "expected": "",
                "actual": "lldpctl (lldpd) not installed: neighbours not compared with the cabling plan"}
NOT_REQUESTED = {"probe": "rdma bandwidth", "status": "skipped", "expected": "", "required": False,
                 "actual": "RDMA bandwidth mesh not requested (validate_rdma_bw=false)"}
PASSED_ROUTE = {"probe": "route 10.101.0.2 from 10.100.0.1", "status": "ok", "expected": "dev rail0 via 10.100.0.6",
                "actual": "dev rail0 via 10.100.0.6"}
UNVERIFIED_SWITCH = {"probe": "ppd_paths", "status": "skipped", "expected": "checked on the switch",
                     "actual": "unverified: not implemented for eos",
                     "message": "unverified: ppd_paths is not implemented for eos (no witness of its show output yet)"}


def _validation(host_findings, switch_findings):
    hostvars = {"gpu01": {"v": {"findings": host_findings}}, "leaf1": {"s": {"changed": False, "findings": switch_findings}}}
    return build_report(collect_entries(hostvars, ["gpu01"], {"validate": "v"}, "host")
                        + collect_entries(hostvars, ["leaf1"], {"switch_validate": "s"}, "switch"),
                        fabric="lab", title="Fabric validation", purpose="validation")


def test_a_run_whose_probes_were_all_skipped_is_not_verified_never_clean():
    """The report the demo and the twin wrote: every host probe and every switch check skipped -> it said IN SYNC
    with every device clean. Now: NOT VERIFIED, no device clean, nothing counted as run."""
    report = _validation([SKIPPED_PING, dict(SKIPPED_PING, probe="ping 10.101.0.2"), SKIPPED_LLDP, NOT_REQUESTED],
                         [UNVERIFIED_SWITCH, dict(UNVERIFIED_SWITCH, probe="bgp_sessions")])
    assert report["verdict"] == "NOT VERIFIED" and report["verified"] is False
    assert report["summary"]["devices_ok"] == [] and report["summary"]["devices_not_verified"] == ["gpu01", "leaf1"]
    assert report["summary"]["checks"] == {"run": 0, "passed": 0, "failed": 0, "not_run": 6, "not_run_required": 5}
    for text in (render_markdown(report), render_html(report)):
        assert "IN SYNC" not in text and "PASSED" not in text and "NOT VERIFIED" in text
        assert "Checks: 0 run - 0 passed, 0 failed; 6 not run (1 not requested or not applicable)." in text
        assert "ping not installed (iputils-ping)" in text and "not implemented for eos" in text
    assert banner_class(report) == "v-notverified"


def test_one_required_probe_not_run_leaves_the_device_not_verified():
    report = _validation([PASSED_ROUTE, SKIPPED_LLDP, NOT_REQUESTED], [dict(UNVERIFIED_SWITCH, status="ok")])
    assert report["summary"]["devices_not_verified"] == ["gpu01"] and report["summary"]["devices_ok"] == ["leaf1"]
    assert report["verdict"] == "NOT VERIFIED"


def test_every_probe_ran_and_passed_is_passed_and_the_report_lists_what_passed():
    bgp = {"probe": "bgp_sessions", "status": "ok", "expected": "2 planned sessions Established", "actual": "2 of 2 Established"}
    report = _validation([PASSED_ROUTE, NOT_REQUESTED], [bgp])
    assert report["verdict"] == "PASSED" and report["summary"]["devices_ok"] == ["gpu01", "leaf1"]
    assert report["summary"]["checks"]["run"] == 2 and report["summary"]["checks"]["passed"] == 2
    md, page = render_markdown(report), render_html(report)
    for text in (md, page):
        assert "route 10.101.0.2 from 10.100.0.1" in text and "2 of 2 Established" in text   # the passes, listed
        assert "RDMA bandwidth mesh not requested" in text                                   # optional, still shown
    assert "| gpu01 | validate | route 10.101.0.2 from 10.100.0.1 | dev rail0 via 10.100.0.6 |" in md
    assert banner_class(report) == "v-ok"


def test_a_failed_probe_is_failed_and_unverified_devices_are_counted_beside_it():
    failed = dict(PASSED_ROUTE, status="fail", actual="dev rail1 via 10.101.0.6")
    report = _validation([failed], [UNVERIFIED_SWITCH])
    assert report["verdict"] == "FAILED / 1 NOT VERIFIED" and report["summary"]["devices_fail"] == ["gpu01"]


def test_ansible_skipped_checks_are_not_run_and_never_clean():
    entries = [entry_from_result("leaf0", "switch", "switch", {"skipped": True, "skip_reason": "Conditional result was False"}),
               entry_from_result("gpu01", "host", "host_network", {"changed": False})]
    report = build_report(entries, "lab")
    assert report["verdict"] == "NOT VERIFIED" and report["summary"]["devices_ok"] == ["gpu01"]
    assert report["summary"]["devices_not_verified"] == ["leaf0"]


def test_result_shape_both_ways_and_an_unknown_status_is_never_a_pass():
    new = {"check": "switch_validate", "subject": "pinned 10.100.0.1", "result": "not_run", "why": "show pbr not parsed"}
    assert normalise(new, "x") == result("switch_validate", "pinned 10.100.0.1", "not_run", "show pbr not parsed")
    assert normalise({"probe": "p", "status": "ok"}, "validate")["result"] == "passed"
    assert normalise({"probe": "p", "status": "green"}, "validate")["result"] == "failed"
    assert normalise({"probe": "p", "status": "skipped"}, "validate")["why"] == "no reason given"
    with pytest.raises(ValueError):
        result("c", "s", "ok")
    assert counts([result("c", "a", "passed"), result("c", "b", "not_run", "x", required=False)])["not_run_required"] == 0


def test_persistence_file_drift_names_the_file():
    items = items_from_change_items([
        {"kind": "file", "action": "write", "path": "/etc/systemd/network/10-rail0.network", "before": "", "after": "a\nb\n"},
        {"kind": "file", "action": "write", "path": "/etc/aifabric/rules", "before": "a\n", "after": "a\nb\n"},
        {"kind": "file", "action": "remove", "path": "/etc/systemd/network/10-old.network", "before": "x\n", "after": ""},
        {"kind": "file", "action": "link", "path": "/etc/x", "target": "/usr/lib/y"}])
    assert [i["item"] for i in items] == ["file /etc/systemd/network/10-rail0.network", "file /etc/aifabric/rules",
                                          "file /etc/systemd/network/10-old.network", "file /etc/x"]
    assert (items[0]["expected"], items[0]["actual"]) == ("as planned (2 lines)", "(absent)")
    assert items[1]["actual"] == "differs (1 line)" and items[3]["expected"] == "link to /usr/lib/y"


PLAN = {"hosts": {"gpu02": {"nics": [{"netdev": "ens1np0", "rail": 0, "gpu": 0, "leaf": "leaf0", "leaf_port": "Ethernet2"},
                                     {"netdev": "ens2np0", "rail": 1, "gpu": 4, "leaf": "leaf1", "leaf_port": "Ethernet2"}]}},
        "leafs": {}}


def test_drift_rows_name_the_gpu_behind_the_port_or_nic():
    gpus = gpus_by_object(PLAN)
    host = {"changed": True, "drift": [{"item": "ens2np0.mtu", "expected": 9000, "actual": 1500}]}
    switch = {"changed": True, "drift": [{"item": "interface Ethernet2 > mtu", "expected": "9214", "actual": "1500"}]}
    entries = [entry_from_result("gpu02", "host", "host_network", host), entry_from_result("leaf1", "switch", "switch", switch)]
    report = build_report(entries, "lab", gpus=gpus)
    md = render_markdown(report)
    assert "| gpu02 | host_network | ens2np0.mtu | 9000 | 1500 | gpu02:gpu4 |" in md
    assert "| leaf1 | switch | interface Ethernet2 > mtu | 9214 | 1500 | gpu02:gpu4 |" in md


def test_a_1000_host_report_puts_drift_first_and_shows_a_shared_finding_once():
    report = build_report(fleet(), "big", generated="2026-11-26T02:00:00Z")
    assert report["verdict"] == "DRIFT / NOT READY" and banner_class(report) == "v-drift"
    page, md = render_html(report), render_markdown(report)
    for text in (page, md):
        assert text.index("Drift") < text.index("Readiness findings")
        assert text.count("rdma_module_3 mlx5_ib") == 1          # one row for 1,000 hosts
        assert "NOT READY: readiness checks found errors on 1000 device(s)" in text
    assert page.count("<details><summary>1000 devices</summary>") == 10
    assert "**1000 devices**: gpu0001, gpu0002, gpu0003, gpu0004, gpu0005 and 995 more" in md
    assert len(page) < 400000 and len(md) < 20000
    assert not re.search(r"<td>\s*</td>", page)


def test_banner_colours_tell_drift_readiness_and_unverified_apart():
    drift = build_report(fleet(3), "f")
    in_sync = build_report([e for e in fleet(3) if e["device"] != "gpu0002" and e["device"] != "leaf1"], "f")
    assert (drift["verdict"], in_sync["verdict"]) == ("DRIFT / NOT READY", "IN SYNC / NOT READY")
    assert (banner_class(drift), banner_class(in_sync)) == ("v-drift", "v-notready")
    assert 'class="banner v-notready"' in render_html(in_sync)
    assert '"verified": true' in render_json(in_sync)


def test_a_pbr_drift_row_names_the_gpu_whose_source_the_rule_pins():
    """Issue 41 item 6: the audit's PBR drift row named no GPU, the validation's named the GPUs behind both uplinks.
    A rule that names its source address (NX-OS ACL, community SONiC SRC_IP, NVUE match source-ip) or its ingress
    port (EOS/NX-OS class AIF-BIND-<port>) names that one GPU, from the lab plan."""
    import yaml  # pylint: disable=import-outside-toplevel
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
    root = os.path.join(os.path.dirname(__file__), "..", "..", "..")
    with open(os.path.join(root, "inventories", "lab", "group_vars", "all", "fabric.yml")) as handle:
        plan = build_plan(yaml.safe_load(handle)["fabric"])
    binding = plan["leafs"]["leaf1"]["bindings"][0]
    gpu = next("%s:gpu%d" % (binding["server"], n["gpu"]) for n in plan["hosts"][binding["server"]]["nics"] if n["leaf"] == "leaf1")
    source = binding["source"]
    drifts = [  # how a moved pin reads on each NOS: the rule's path, the planned and the found next hop
        {"item": "policy-map type pbr AIF-PBR > class AIF-BIND-%s > set nexthop" % binding["ingress"],
         "expected": "10.254.0.8", "actual": "10.254.0.10"},
        {"item": "ip access-list AIF-BIND-%s > 10 permit ip %s any" % (binding["ingress"], source), "expected": "present",
         "actual": "(absent)"},
        {"item": "ACL_RULE > AIF-PBR|BIND-%s > SRC_IP" % binding["server"], "expected": source, "actual": "(absent)"},
        {"item": "router pbr map AIF-PBR-vlan100 rule 1000 match source-ip", "expected": source, "actual": "10.101.0.2/32"}]
    entries = [entry_from_result("leaf1", "switch", "switch", {"changed": True, "drift": drifts})]
    report = build_report(entries, "lab", gpus=gpus_by_object(plan))
    named = [item.get("gpus") for e in report["entries"] for item in e["items"]]
    assert named[:3] == [[gpu]] * 3, named
    assert gpu in named[3] and len(named[3]) == 2, named   # the planned source and the one found: both GPUs
