"""The routed twin of the lab plan, configured by the frr driver over SSH, validated with real traffic.

FRR 8.4 (zebra, bgpd, pbrd) per router namespace, the Linux kernel forwarding: every assertion
below is about what the real engine and kernel do. Needs root and the Debian `frr` package.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TWIN = os.path.join(ROOT, "tests", "lab", "twin")
PROBE = os.path.join(TWIN, "probe.py")
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, TWIN)
sys.path.insert(0, os.path.dirname(TWIN))
import labid  # noqa: E402  (tests/lab)
# one twin per test port offset (AIFABRIC_TEST_PORT_OFFSET, or this checkout's own): parallel runs do not meet
PREFIX, BASE_PORT = labid.twin_names("aift")
import failover  # noqa: E402  (tests/lab/twin)
import gom  # noqa: E402  (tests/lab/twin)
import gom_live  # noqa: E402  (tests/lab/twin)
import paths  # noqa: E402  (tests/lab/twin)

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/lib/frr/bgpd"),
                                reason="the twin needs root and FRR (apt install frr; tools/setup-system.sh)")


def ns(name):
    return PREFIX + name


def sh(namespace, *args, check=True):
    out = subprocess.run(["ip", "netns", "exec", namespace] + list(args), capture_output=True, text=True, check=False)
    if check and out.returncode:
        raise AssertionError("%s: %s" % (" ".join(args), out.stderr))
    return out.stdout


def vtysh_json(router, command):
    return json.loads(sh(ns(router), "vtysh", "-N", ns(router), "-c", command + " json"))


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    reuse = os.environ.get("AIFABRIC_TWIN_STATE")
    if reuse:   # the twin Molecule built and converged with site.yml (extensions/molecule/twin), same PREFIX
        with open(os.path.join(reuse, "plan", "plan.json")) as handle:
            plan = json.load(handle)
        with open(os.path.join(reuse, "twin.json")) as handle:
            record = json.load(handle)
        assert record["prefix"] == PREFIX, "the twin at %s was built with prefix %s" % (reuse, record["prefix"])
        yield {"plan": plan, "state": reuse, "record": record}
        return
    state = str(tmp_path_factory.mktemp("twin"))
    cmd = [sys.executable, os.path.join(TWIN, "twin.py"), "--state", state, "--ns-prefix", PREFIX,
           "--base-port", str(BASE_PORT)]
    # --host-config: the hosts get the plan's addresses from the twin itself (this suite converges the routers only;
    # the Molecule scenario converges the hosts with site.yml)
    out = subprocess.run(cmd[:2] + ["up", "--host-config"] + cmd[2:], capture_output=True, text=True, check=False)
    try:
        assert out.returncode == 0, out.stderr[-3000:]
        with open(os.path.join(state, "plan", "plan.json")) as handle:
            plan = json.load(handle)
        with open(os.path.join(state, "twin.json")) as handle:
            record = json.load(handle)
        # configured the production way: role aifabric.roce.switch -> switch_config -> frr driver over SSH
        started = time.monotonic()
        recap = converge(state)
        assert set(recap) == set(plan["leafs"]) | set(plan["spines"])
        assert all(r["changed"] == 1 and r["failed"] == 0 for r in recap.values()), recap
        print("\ntwin up %.1f s, site role converge %.1f s, memory %d KiB" % (
            record["up_seconds"], time.monotonic() - started, record["memory_kib"]))
        yield {"plan": plan, "state": state, "record": record}
    finally:
        subprocess.run(cmd[:2] + ["down"] + cmd[2:], capture_output=True, text=True, check=False)
        shutil.rmtree(state, ignore_errors=True)


def playbook(state, path, *extra):
    """ansible-playbook PATH on the twin inventory -> its output (-v: the module results are in it)."""
    # the project's ansible.cfg only: a caller's ANSIBLE_* (Molecule's colours, callbacks, paths) would change the recap
    env = dict(((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_")),
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), PYTHONPATH=os.path.join(ROOT, ".collections"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""), ANSIBLE_NOCOLOR="1")
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-v", "-i",
                          os.path.join(state, "inventory.yml"), path] + list(extra), capture_output=True, text=True,
                         env=env, check=False)
    return out.stdout + out.stderr


def converge(state, *extra):
    """ansible-playbook converge.yml on the twin inventory -> {host: recap counters}."""
    out = playbook(state, os.path.join(os.path.dirname(__file__), "converge.yml"), *extra)
    recap = {}
    for name, counters in re.findall(r"^(\S+)\s+:\s+(ok=\d+\s.*)$", out, re.M):
        recap[name] = dict((k, int(v)) for k, v in (f.split("=") for f in counters.split()))
    assert recap, out[-6000:]
    return recap


def wait_sessions(plan, timeout=30):
    """{router: {neighbor: state}} once every planned session is Established (or the timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        seen = {}
        for group in ("leafs", "spines"):
            for name in plan[group]:
                peers = vtysh_json(name, "show bgp ipv4 unicast summary").get("peers", {})
                seen[name] = dict((addr, p["state"]) for addr, p in peers.items())
        done = all(state == "Established" for peers in seen.values() for state in peers.values())
        if done or time.monotonic() > deadline:
            return seen
        time.sleep(0.5)


def validate(state, *extra):
    """playbooks/validate.yml on the twin inventory -> the validation report (drift-report.json)."""
    build = os.path.join(state, "build")
    out = playbook(state, os.path.join(ROOT, "playbooks", "validate.yml"), "-e", "aifabric_build_dir=%s" % build, *extra)
    with open(os.path.join(build, "validate", "drift-report.json")) as handle:
        return json.load(handle), out


def test_ecmp_spreads_roce_flows_within_the_bound_and_l3_hashing_polarises(twin):
    """The kernel's L4 hash (fib_multipath_hash_policy=1 on every router): 1024 RoCE-like flows (UDP to 4791, one
    source port each) of one source/destination pair spread over a leaf's uplinks (unpinned source, ip route get
    iif the host port) and over the bound spine's links to the destination leaf (real datagrams, counted, equal to
    the spine's own route lookups), each path within 25 % of its fair share. With L3-only hashing (policy 0) on
    that leaf and spine the same flows polarise onto one path and the check fails. First in this file: a link flap
    (the failover tests) leaves FRR 8.4's kernel nexthop group without the flapped uplink (docs/twin.md)."""
    plan = twin["plan"]
    wait_sessions(plan)
    model = paths.Twin(plan, PREFIX)
    report = paths.ecmp(model, 1024, 0.25)
    assert report["failures"] == [], report
    assert all(isinstance(figures, dict) for figures in report["leafs"].values()), report["leafs"]
    # counted per link = predicted by the spine's lookups, within a few packets (BGP keepalives share the links)
    assert all(abs(n - report["spine"]["predicted"][p]) <= 8 for p, n in report["spine"]["paths"].items()), report["spine"]
    print("\nECMP over uplinks (1024 flows): %s; spine %s: %s (predicted %s)" % (
        dict((name, (f["paths"], f["max_deviation"])) for name, f in sorted(report["leafs"].items())),
        report["spine"]["spine"], report["spine"]["paths"], report["spine"]["predicted"]))
    leaf_name, spine = sorted(plan["leafs"])[0], report["spine"]["spine"]
    try:
        for router in (leaf_name, spine):
            sh(ns(router), "sysctl", "-qw", "net.ipv4.fib_multipath_hash_policy=0")
        polarised = paths.ecmp(model, 1024, 0.25)
    finally:
        for router in (leaf_name, spine):
            sh(ns(router), "sysctl", "-qw", "net.ipv4.fib_multipath_hash_policy=1")
    assert sorted(set(f.split(":")[0] for f in polarised["failures"])) == sorted([leaf_name, spine]), polarised["failures"]
    assert sorted(polarised["leafs"][leaf_name]["paths"].values())[-1] == 1024, polarised["leafs"][leaf_name]


def pbr_sequences(router):
    """{source prefix: (pbr-map sequence header, nexthop-group)} of a leaf's PPD bindings, from its running config."""
    seqs, header, source = {}, None, None
    for line in sh(ns(router), "vtysh", "-N", ns(router), "-c", "show running-config").splitlines():
        if line.startswith("pbr-map "):
            header, source = line.strip(), None
        elif header and line.strip().startswith("match src-ip "):
            source = line.split()[-1]
        elif header and source and line.strip().startswith("set nexthop-group "):
            seqs[source] = (header, line.split()[-1])
        elif line.strip() == "exit":
            header = source = None
    return seqs


def test_gom_probes_reach_every_link_under_the_kernel_hash(twin):
    """GOM's probe plan with source ports chosen by asking the spines' kernels (L4 hash, policy 1), then every probe
    followed hop by hop with the kernels' route lookups for its exact 5-tuple: each takes its planned path and together
    they reach every reachable directed link (or the plan names each miss). The offline crc32 stand-in, checked the
    same way, sends probes over other spine links than planned (the kernel's siphash key is drawn at boot): that is
    what this check exists to catch."""
    plan = twin["plan"]
    wait_sessions(plan)
    result = gom.check(plan, PREFIX)
    print("\nGOM under the kernel hash: %d probes, %d/%d directed links reached, %d on the planned path, %d lookups" % (
        result["probes"], result["links_reached_by_kernel"], result["links_reachable"], result["probes_on_planned_path"],
        result["route_lookups_asked_while_planning"]))
    assert result["failures"] == [], result
    assert result["probes_on_planned_path"] == result["probes"]
    assert result["reached"] == 1.0 or all(m["why"] != "not named by the plan" for m in result["missed"]), result["missed"]
    assert result["hash"] == "asked the device" and "siphash" in result["hash_models"]["frr"]
    stand_in = gom.check(plan, PREFIX, stand_in=True)
    print("crc32 stand-in: %d/%d probes on the planned path, %d/%d links reached, %d links at risk" % (
        stand_in["probes_on_planned_path"], stand_in["probes"], stand_in["links_reached_by_kernel"],
        stand_in["links_reachable"], stand_in["at_risk"]))
    assert stand_in["off_plan"] and stand_in["at_risk"], "the stand-in agreed with the kernel on every probe"


def test_gom_live_names_each_fault_and_reports_a_drain_as_maintenance(twin, tmp_path):
    """GOM live (issue 38): the 1-identifiable probes (ports asked of the spines' kernels), the real agent in every GPU
    host namespace and the real collector; one fault at a time on one link of each class: 100 % loss (nftables egress
    drop), a host cable down (ip link set down at the switch end: both directions, named by loss), 20 % loss on a leaf
    uplink, 100 % loss on a spine link while a drain record of this collection says the spine is being drained, and a
    leaf-spine cable down (no probe lost: BGP moves them; named as link_down from the routers' `ip -j link show`).
    Each fault named exactly (the drained one as maintenance), no other event, 100 % loss and link down within 1 s
    median and 2 s worst."""
    plan = twin["plan"]
    wait_sessions(plan)
    started = time.monotonic()
    result = gom_live.run(plan, PREFIX, str(tmp_path / "gom"), "small")
    s = result["summary"]
    print("\nGOM live (%d probes, %.0f s): %s" % (result["probes"], time.monotonic() - started, json.dumps(s, sort_keys=True)))
    for row in result["rows"]:
        print("  %s %s %s -> %s %s detect %s s localise %s s" % (
            row["kind"], row["value"] or "", row["link"], row["events"], row["named"], row["detect_s"], row["localise_s"]))
    # every directed link of the plan probed (issue 38: 100 % coverage on the devices' own ECMP answers)
    assert result["links_crossed"] == result["links_all"] and len(result["links_all"]) == 64, (
        sorted(set(result["links_all"]) - set(result["links_crossed"])), result["uncovered_why"])
    assert result["uncovered"] == []
    assert result["identifiable"] == 1.0 and result["baseline_events"] == []
    assert all(row["exact"] for row in result["rows"]), result["rows"]
    assert s["false_alarms"] == 0
    for name in ("loss100", "down"):
        assert s[name]["median_s"] <= 1.0 and s[name]["worst_s"] <= 2.0, s
    assert s["drain"]["exact"] == 1
    assert [r["events"] for r in result["rows"] if r["kind"] == "down"][-1] == ["link_down", "link_down"]
    # 20 % loss: named exactly; the benchmark's 64 links say how fast (median 0.54 s, worst 1.05 s); one sample on a
    # loaded CI machine gets slack
    assert s["loss20"]["worst_s"] <= 3.0


def test_injected_host_and_switch_mistakes_are_found_by_traffic_validate_and_audit(twin):
    """On the twin site.yml converged (hosts and switches, the Molecule scenario): a wrong ip rule on a host (its first
    NIC's source looks up its second NIC's table) and a wrong PBR pin on a leaf (a bound host sent to another spine's
    nexthop-group) are each found by real traffic (paths.py: route lookups and counters), by validate.yml (host route
    probes, switch PPD paths) and by the audit (audit.yml: host_network and switch drift), on that host and that leaf
    only; site.yml limited to the two repairs them and the traffic follows the plan again. Early in this file: later
    engine tests may leave a router off the plan when they fail, which validate.yml and the audit would name too.
    The same audit also finds the router drift of test_drift_audit_of_the_routers_... (a removed BGP neighbor and a
    removed pbr rule on the last leaf, made after the traffic and validate.yml checks): one audit run for both."""
    if not twin["record"].get("host_endpoints"):
        pytest.skip("this twin's GPU hosts were configured by twin.py (--host-config), not by Ansible")
    plan = twin["plan"]
    wait_sessions(plan)
    host = sorted(plan["hosts"])[1]
    nic, other = plan["hosts"][host]["nics"][:2]
    rule = next(r for r in plan["hosts"][host]["rules"] if r["from"].split("/")[0] == nic["address"])
    leaf_name, last_leaf = sorted(plan["leafs"])[1], sorted(plan["leafs"])[-1]
    assert last_leaf != leaf_name
    leaf = plan["leafs"][leaf_name]
    binding = leaf["bindings"][1]
    wrong = next(b for b in leaf["bindings"] if b["spine"] != binding["spine"])
    seqs = pbr_sequences(leaf_name)
    header, group = seqs[binding["source"]]
    wrong_group = seqs[wrong["source"]][1]
    assert group != wrong_group
    twin_host = paths.Twin(plan, PREFIX)
    try:
        subprocess.run(["ip", "-n", ns(host), "-batch", "-"], check=True, text=True, input=(
            "rule del priority %d from %s table %s\nrule add priority %d from %s table %s\n" % (
                rule["priority"], rule["from"], rule["table"], rule["priority"], rule["from"], other["table"])))
        sh(ns(leaf_name), "vtysh", "-N", ns(leaf_name), "-c", "configure terminal", "-c", header,
           "-c", "set nexthop-group %s" % wrong_group)
        pinned = binding["source"].split("/")[0]
        # real traffic: the host's flows leave by the wrong NIC, the leaf's pinned flow takes the wrong spine
        report = paths.check(twin_host, 200)
        assert report["failures"], report
        assert all(nic["address"] in f or pinned in f for f in report["failures"]), report["failures"]
        assert any(f.startswith("%s %s: " % (host, nic["address"])) for f in report["failures"]), report["failures"]
        assert any(" flow %s -> " % pinned in f and " %s%s %s tx" % (PREFIX, leaf_name, wrong["uplink"]) in f
                   for f in report["failures"]), report["failures"]
        # validate.yml: the host's route probes and the leaf's PPD path, nothing else
        checked, out = validate(twin["state"])
        assert sorted(checked["summary"]["devices_fail"]) == sorted([host, leaf_name]), out[-3000:]
        items = dict((e["device"], e["items"]) for e in checked["entries"] if e["status"] == "fail")
        assert any(i["item"].startswith("route ") and i["item"].endswith(" from %s" % nic["address"])
                   and " dev %s" % other["netdev"] in " " + i["actual"] for i in items[host]), items[host]
        assert any(i["item"].startswith("pinned %s " % pinned) and " dev %s " % wrong["uplink"] in i["actual"]
                   for i in items[leaf_name]), items[leaf_name]
        # the routers' drift of test_drift_audit_of_the_routers_...: a removed BGP neighbor and pbr rule on the last leaf
        neighbor = remove_neighbor_and_pbr_rule(plan, last_leaf)
        # the audit: drift on that host (host_network: the rule), that leaf (switch: the nexthop-group) and the last
        # leaf (switch: its neighbor and pbr rule), nothing else
        audited, out = audit(twin["state"])
        assert sorted(audited["summary"]["devices_drift"]) == sorted([host, leaf_name, last_leaf]), out[-3000:]
        drift = dict(((e["device"], e["check"]), json.dumps(e["items"])) for e in audited["entries"] if e["status"] == "drift")
        assert set(drift) == {(host, "host_network"), (leaf_name, "switch"), (last_leaf, "switch")}, drift
        assert "table %s" % other["table"] in drift[(host, "host_network")], drift
        assert wrong_group in drift[(leaf_name, "switch")] and group in drift[(leaf_name, "switch")], drift
        assert neighbor["address"] in drift[(last_leaf, "switch")], drift
        assert "AIF-PBR seq 100" in drift[(last_leaf, "switch")], drift
    finally:
        out = playbook(twin["state"], os.path.join(ROOT, "playbooks", "site.yml"), "--limit",
                       ",".join((host, leaf_name, last_leaf)), "--skip-tags", "validate")
    recap = dict(re.findall(r"^(\S+)\s+:\s+ok=\d+\s+changed=(\d+)\s+unreachable=0\s+failed=0", out, re.M))
    assert set(recap) == {host, leaf_name, last_leaf} and all(int(n) >= 1 for n in recap.values()), out[-3000:]
    wait_sessions(plan)
    assert paths.check(twin_host, 200)["failures"] == []


def test_validate_playbook_passes_bgp_ppd_paths_and_failover(twin):
    """The product's switch checks (module switch_validate through validate.yml): BGP sessions = planned
    links on every router, the PPD path of every host port via its bound spine, same-leaf destinations
    not pinned, and the bound-uplink failover and return, on the real engine and kernel."""
    plan = twin["plan"]
    wait_sessions(plan)
    report, out = validate(twin["state"], "-e", "validate_failover=true")
    routers = set(plan["leafs"]) | set(plan["spines"])
    entries = [e for e in report["entries"] if e["device"] in routers]
    assert set((e["device"], e["check"]) for e in entries) == set(
        (r, c) for r in routers for c in ("switch_validate", "switch_failover")), out[-2000:]
    assert [(e["device"], e["check"], e["items"]) for e in entries if e["status"] not in ("ok", "skipped")] == []
    assert all(e["status"] == "ok" for e in entries if e["device"] in plan["leafs"]), entries
    # spines have no host ports: their failover entry says so instead of passing silently
    assert set(e["status"] for e in entries if e["device"] in plan["spines"] and e["check"] == "switch_failover") == {"skipped"}
    fallback = re.findall(r'"failover_ms": \{"back": (\d+), "fallback": (\d+)\}', out)
    assert len(fallback) == len(plan["leafs"]), out[-3000:]
    print("\nvalidate.yml failover (ms, measured on each leaf: back, fallback): %s" % fallback)


def test_validate_playbook_finds_an_injected_fault(twin):
    """A leaf uplink down: its session (seen from both ends) and the pinned path of the bound host are reported."""
    plan = twin["plan"]
    wait_sessions(plan)
    name, binding, _remote, _dst = failover.pinned_flow(plan)
    sh(ns(name), "ip", "link", "set", binding["uplink"], "down")
    try:
        time.sleep(1.0)
        report, _out = validate(twin["state"])
    finally:
        sh(ns(name), "ip", "link", "set", binding["uplink"], "up")
    assert sorted(report["summary"]["devices_fail"]) == sorted([name, binding["spine"]])
    items = [i["item"] for e in report["entries"] if e["device"] == name for i in e["items"]]
    assert "bgp %s" % binding["next_hop"] in items and "bgp_sessions" in items
    assert any(i.startswith("pinned %s " % binding["source"].split("/")[0]) for i in items), items
    wait_sessions(plan)


def test_every_nic_reaches_every_other_nic_with_df_at_the_planned_mtu(twin):
    plan = twin["plan"]
    wait_sessions(plan)
    nics = [(host, nic) for host, record in plan["hosts"].items() for nic in record["nics"]]
    failures = []
    for host, nic in nics:
        targets = [other["address"] for h, other in nics if other["address"] != nic["address"]]
        size = nic["mtu"] - 28          # IP 20 + ICMP 8
        got = json.loads(sh(ns(host), "python3", PROBE, "mesh", "--src", nic["address"], "--size", str(size),
                            "--to", *targets))
        failures += [(nic["address"], dst) for dst, rtt in got.items() if rtt is None]
    assert failures == []
    # one byte over the host MTU does not pass with DF: the MTU, not luck, is what was proven
    host, nic = nics[0]
    over = json.loads(sh(ns(host), "python3", PROBE, "mesh", "--src", nic["address"], "--size", str(nic["mtu"] - 27),
                         "--to", nics[-1][1]["address"]))
    assert list(over.values()) == [None]


def route_get(leaf, dst, src, iif):
    return sh(ns(leaf), "ip", "route", "get", dst, "from", src, "iif", iif).splitlines()[0]


def ingress(leaf):
    iface = leaf["host_interfaces"][0]
    return "vlan%d" % iface["vlan"] if iface["kind"] == "svi" else iface["port"]


def test_failover_when_the_bound_uplink_fails_and_back(twin):
    plan = twin["plan"]
    wait_sessions(plan)
    name, binding, _remote, dst = failover.pinned_flow(plan)
    leaf = plan["leafs"][name]
    src = binding["source"].split("/")[0]
    seen = {}

    def during():
        time.sleep(0.5)
        # FRR: the nexthop-group's only next hop is unreachable -> pbrd uninstalls the rule
        # ("Invalid NH-group") -> the packet meets no PBR rule and the main table's ECMP routes it
        seen["path"] = route_get(name, dst, src, ingress(leaf))
        seqs = vtysh_json(name, "show pbr map")[0]["policies"]
        seen["pinned"] = [s for s in seqs if s.get("nexthopGroup", {}).get("name", "").endswith(
            binding["next_hop"].replace(".", "-"))]
    figures = failover.uplink_down(plan, PREFIX, during=during)
    print("\nfailover (bound uplink down): %s" % figures)
    assert "table" not in seen["path"] and binding["uplink"] not in seen["path"], seen["path"]
    assert seen["pinned"] and all(not s["installed"] for s in seen["pinned"]), seen["pinned"]
    # traffic kept arriving: under 5 % of probes lost over the 4 s window (one burst at most)
    assert figures["lost"] <= figures["sent"] * 0.05, figures
    assert figures["longest_gap_ms"] < 1000, figures
    deadline = time.monotonic() + 10
    while "table" not in route_get(name, dst, src, ingress(leaf)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "via %s dev %s " % (binding["next_hop"], binding["uplink"]) in route_get(name, dst, src, ingress(leaf))


def test_no_blackhole_when_the_bound_spine_loses_the_destination_leaf(twin):
    """The pin's next hop stays up, its spine loses every link to the destination leaf: the pin still
    sends there (pbrd tracks only the next hop), and the spine, whose siblings share its ASN, reaches
    the leaf only because it accepts its own ASN once (allowas-in 1, docs/underlay.md)."""
    plan = twin["plan"]
    wait_sessions(plan)
    name, binding, _remote, dst = failover.pinned_flow(plan)
    leaf = plan["leafs"][name]
    src = binding["source"].split("/")[0]
    spine, ports = failover.lost_links(plan)
    assert ports, "the lab plan cables the bound spine to the destination leaf"
    seen = {}

    def during():
        time.sleep(1.0)
        seen["pin"] = route_get(name, dst, src, ingress(leaf))
        seen["spine"] = sh(ns(spine), "ip", "route", "get", dst, check=False)
    figures = failover.spine_loses_leaf(plan, PREFIX, during=during)
    print("\nfailover (bound spine lost the destination leaf): %s" % figures)
    # the pin stayed on the spine (this is the case pbrd cannot see) ...
    assert "via %s dev %s " % (binding["next_hop"], binding["uplink"]) in seen["pin"], seen["pin"]
    # ... and the spine forwards to another leaf instead of "Network is unreachable"
    assert " via " in seen["spine"] and not any(" dev %s " % p in seen["spine"] for p in ports), seen["spine"]
    # traffic arrives again: no loss in the last second of the window (the figure itself is the bench's)
    assert figures["recovery_ms"] is not None, figures
    assert figures["lost"] < figures["sent"] / 2, figures
    # links back: the spine takes its direct path to the leaf again
    deadline = time.monotonic() + 15
    while not any(" dev %s " % p in sh(ns(spine), "ip", "route", "get", dst, check=False) for p in ports):
        assert time.monotonic() < deadline, "the spine did not return to its direct path"
        time.sleep(0.2)


def _transaction(twin, name):
    """switch_config's applier for one twin router (shared flow: controller lock, compare-and-swap, verify, undo)."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import Applier
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import lock_key, netmiko_factory
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.frr import FrrDriver
    import twin as twin_lab
    driver = FrrDriver()
    plan = twin["plan"]
    intent = dict(plan["leafs"].get(name) or plan["spines"][name], name=name)
    params = twin_lab.connection_params(twin["record"], name, twin["state"])
    return Applier(driver, netmiko_factory(params, driver), intent, plan["qos"], sections=("underlay", "pbr"),
                   lock_key=lock_key(params))


def test_idempotent_and_an_injected_change_is_found_and_repaired(twin):
    name = next(iter(twin["plan"]["leafs"]))
    tx = _transaction(twin, name)
    try:
        before, after, cmds = tx.plan()
        assert cmds == [] and before == after
        neighbor = twin["plan"]["leafs"][name]["bgp"]["neighbors"][0]
        sh(ns(name), "vtysh", "-N", ns(name), "-c", "configure terminal", "-c",
           "router bgp %d" % twin["plan"]["leafs"][name]["bgp"]["asn"], "-c", "no neighbor %s" % neighbor["address"],
           "-c", "exit", "-c", "no pbr-map AIF-PBR seq 100")
        tx.close()
        before, after, cmds = tx.plan()
        assert "neighbor %s remote-as %d" % (neighbor["address"], neighbor["remote_as"]) in cmds
        assert "pbr-map AIF-PBR seq 100" in cmds
        tx.apply(before, after, cmds, save=False)
        assert tx.plan()[2] == []
    finally:
        tx.close()


def audit(state):
    """playbooks/audit.yml on the twin inventory -> the drift report (drift-report.json)."""
    build = os.path.join(state, "build")
    out = playbook(state, os.path.join(ROOT, "playbooks", "audit.yml"), "-e", "aifabric_build_dir=%s" % build)
    with open(os.path.join(build, "audit", "drift-report.json")) as handle:
        return json.load(handle), out


def remove_neighbor_and_pbr_rule(plan, name):
    """A leaf's first BGP neighbor and its pbr rule seq 100 removed by hand on the router -> that neighbor."""
    leaf = plan["leafs"][name]
    neighbor = leaf["bgp"]["neighbors"][0]
    sh(ns(name), "vtysh", "-N", ns(name), "-c", "configure terminal", "-c", "router bgp %d" % leaf["bgp"]["asn"],
       "-c", "no neighbor %s" % neighbor["address"], "-c", "exit", "-c", "no pbr-map AIF-PBR seq 100")
    return neighbor


def test_drift_audit_of_the_routers_is_clean_and_finds_an_injected_change(twin):
    """The operators' audit (playbooks/audit.yml, check mode) on the twin's routers: in sync after site.yml; a
    removed BGP neighbor and a removed pbr rule on one leaf are listed as that leaf's drift, nothing else. On the
    Molecule twin (its GPU hosts configured by Ansible) the injected half runs in the audit of
    test_injected_host_and_switch_mistakes_..., beside that test's host and leaf drift (one audit run instead of two)."""
    report, out = audit(twin["state"])
    routers = sorted(list(twin["plan"]["leafs"]) + list(twin["plan"]["spines"]))
    # on the Molecule twin the GPU hosts are audited too: in sync, and NOT READY (no RDMA hardware, preflight findings)
    assert report["verdict"].split(" / ")[0] == "IN SYNC", out[-3000:]
    assert report["summary"]["devices_unreachable"] == [] and report["summary"]["devices_fail"] == []
    if twin["record"].get("host_endpoints"):
        return
    name = sorted(twin["plan"]["leafs"])[-1]
    neighbor = remove_neighbor_and_pbr_rule(twin["plan"], name)
    try:
        report, out = audit(twin["state"])
        assert report["summary"]["devices_drift"] == [name], (report["summary"], out[-3000:])
        drifted = json.dumps(report)
        assert neighbor["address"] in drifted and "AIF-PBR seq 100" in drifted, drifted[:3000]
        assert set(routers) >= set(report["summary"]["devices_drift"])
    finally:
        tx = _transaction(twin, name)
        try:
            before, after, cmds = tx.plan()
            tx.apply(before, after, cmds, save=False)
            assert tx.plan()[2] == []
        finally:
            tx.close()


def test_role_is_idempotent_in_check_mode(twin):
    recap = converge(twin["state"], "--check")
    assert all(r["changed"] == 0 and r["failed"] == 0 for r in recap.values()), recap


def test_a_refused_change_leaves_the_router_as_it_was(twin):
    name = next(iter(twin["plan"]["spines"]))
    tx = _transaction(twin, name)
    try:
        before, _after, _cmds = tx.plan()
        from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import ApplyError
        from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import Command, Op
        # typed as switch_config sends lines (Applier.apply refuses a plain string): each command knows its op
        block, neighbor = "router bgp %d" % twin["plan"]["spines"][name]["bgp"]["asn"], "neighbor 10.254.0.1 remote-as 99999999999"
        bad = [Command(block, Op("set", (block,))), Command(neighbor, Op("set", (block, neighbor))), Command("exit")]
        with pytest.raises(ApplyError) as err:
            tx.apply(before, before, bad, save=False)
        assert "dry run" in str(err.value) and tx.attempted == []
        assert tx.plan()[0] == before
    finally:
        tx.close()


def test_a_line_a_daemon_refuses_mid_apply_is_undone_on_the_engine(twin):
    """`router bgp OTHER-ASN` passes vtysh's dry run but bgpd refuses it at apply time, after the line
    before it (a new neighbor) was applied; vtysh -f exits 0 all the same. The transaction must see
    the refusal, push the reverse, and prove the whole running config equals the before-image."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import ApplyError
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import Command, Op
    name = list(twin["plan"]["spines"])[-1]
    asn = twin["plan"]["spines"][name]["bgp"]["asn"]
    tx = _transaction(twin, name)
    try:
        before, _after, _cmds = tx.plan()
        whole = tx.read_image()
        # every line as switch_config sends it (Driver.commands: each command knows its op, so the run's own line is
        # never read back as someone else's; Applier.apply refuses a plain string), the refused block too (it never lands)
        block, neighbor = "router bgp %d" % asn, "neighbor 10.254.0.250 remote-as 65099"
        other, router_id = "router bgp %d" % (asn + 1), "bgp router-id 10.0.0.2"
        bad = [Command(block, Op("set", (block,))), Command(neighbor, Op("set", (block, neighbor))), Command("exit"),
               Command(other, Op("set", (other,))), Command(router_id, Op("set", (other, router_id))), Command("exit")]
        with pytest.raises(ApplyError) as err:
            tx.apply(before, before, bad, save=False)
        assert err.value.step == "stage" and "Failure to communicate" in err.value.device_error, str(err.value)
        assert err.value.rolled_back is True and "pushed the reverse" in str(err.value), str(err.value)
        tx.close()
        assert tx.read_image() == whole
        assert "10.254.0.250" not in sh(ns(name), "vtysh", "-N", ns(name), "-c", "show running-config")
    finally:
        tx.close()


def test_two_concurrent_runs_on_one_router_serialize_on_the_engine(twin):
    """Two runs repair one drifted leaf at once (one the underlay, one the PBR): the controller lock lets
    one apply; the other's compare-and-swap read then sees that change and refuses, sending nothing;
    replanned, it applies. The router ends as planned, nothing interleaved."""
    import threading
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import ApplyError
    name = list(twin["plan"]["leafs"])[-1]
    leaf = twin["plan"]["leafs"][name]
    neighbor = leaf["bgp"]["neighbors"][-1]
    sh(ns(name), "vtysh", "-N", ns(name), "-c", "configure terminal", "-c", "router bgp %d" % leaf["bgp"]["asn"],
       "-c", "no neighbor %s" % neighbor["address"], "-c", "exit", "-c", "no pbr-map AIF-PBR seq 100")
    runs = [_transaction(twin, name), _transaction(twin, name)]
    runs[0].sections, runs[1].sections = ("underlay",), ("pbr",)
    try:
        planned = [run.plan() for run in runs]
        assert all(p[2] for p in planned), planned
        outcome = {}

        def go(i):
            try:
                runs[i].apply(*planned[i], save=False)
                outcome[i] = "applied"
            except ApplyError as exc:
                outcome[i] = exc
        threads = [threading.Thread(target=go, args=(i,)) for i in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        applied = [i for i in (0, 1) if outcome[i] == "applied"]
        assert len(applied) == 1, outcome
        other = outcome[1 - applied[0]]
        assert other.step == "preflight" and "changed since this run read it" in str(other) and other.attempted == []
        loser = runs[1 - applied[0]]
        loser.close()
        loser.apply(*loser.plan(), save=False)
        check = _transaction(twin, name)
        assert check.plan()[2] == []
        check.close()
    finally:
        for run in runs:
            run.close()


def gor_event(link, kind, at, loss=0.5, fault="gor-t1"):
    """A GOM event (docs/gom.md, schema aifabric.gom.event/1) for a leaf->spine link."""
    return {"schema": "aifabric.gom.event/1", "id": fault + ("" if kind == "link_fault" else "-r"), "fault_id": fault,
            "kind": kind, "link": link, "link_class": "leaf_up", "loss": loss, "first_loss": at, "detected": at,
            "localised": at, "cleared": at if kind == "recovered" else None}


def test_gor_steers_a_congested_uplink_off_and_restores_it_after_repair(twin, tmp_path):
    """GOR on the engine: a leaf's bound uplink congested by tbf (the kernel drops what exceeds the rate) loses probes;
    playbooks/gor_steer.yml (GOM event in, switch_config's PBR transaction out) moves the binding to a healthy uplink
    of that leaf: the kernel's lookup for the pinned source takes the new uplink and the probes stop being lost; the
    audit says "steered by GOR because <link>", not drift; after the repair (recovered, hold-down 0) the planned
    binding is back and the record is empty."""
    plan = twin["plan"]
    wait_sessions(plan)
    name, binding, _remote, dst = failover.pinned_flow(plan)
    leaf = plan["leafs"][name]
    src = binding["source"].split("/")[0]
    up = [u for u in leaf["uplinks"] if u["port"] == binding["uplink"]][0]
    link = "%s:%s>%s:%s" % (name, up["port"], up["spine"], up["spine_port"])
    build = os.path.join(twin["state"], "build")    # audit() reads the same build dir
    record_path = os.path.join(build, "gor", "%s.json" % plan["fabric"])
    stop = str(tmp_path / "stop")
    watch = subprocess.Popen(["ip", "netns", "exec", ns(binding["server"]), "python3", PROBE, "watch", "--src", src,
                              "--dst", dst, "--seconds", "120", "--interval", "0.01", "--size", "1000", "--until", stop,
                              "--losses", "--reply-timeout", "0.2"], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)
        congested_at = time.time()
        # a 1000-byte probe takes 0.5 s at 16 kbit/s and the queue holds ~2 KB: most probes are dropped on this link
        sh(ns(name), "tc", "qdisc", "replace", "dev", up["port"], "root", "tbf", "rate", "16kbit", "burst", "2kb",
           "latency", "5ms")
        time.sleep(2.0)     # GOM's part (probe loss -> localised event) is stood in for by the event below
        events = tmp_path / "fault.json"
        events.write_text(json.dumps({"gor_events": [gor_event(link, "link_fault", congested_at)]}))
        started = time.time()
        out = playbook(twin["state"], os.path.join(ROOT, "playbooks", "gor_steer.yml"), "-e", "@%s" % events,
                       "-e", "aifabric_build_dir=%s" % build)
        steered_at = time.time()
        assert "failed=0" in out.split("PLAY RECAP")[-1], out[-6000:]
        with open(record_path) as handle:
            record = json.load(handle)
        moved = [e for e in record["steered"] if e["leaf"] == name and e["ingress"] == binding["ingress"]]
        assert moved and moved[0]["because"] == link and moved[0]["uplink"] != binding["uplink"], (record, out[-8000:])
        path = route_get(name, dst, src, ingress(leaf))
        assert "dev %s " % moved[0]["uplink"] in path and "via %s " % moved[0]["next_hop"] in path, path
        time.sleep(2.0)
        open(stop, "w").close()
        figures = json.loads(watch.communicate(timeout=60)[0])
        lost_after = [t for t in figures.get("lost_at", []) if t > steered_at]
        lost_congested = [t for t in figures.get("lost_at", []) if congested_at <= t <= started]
        print("\nGOR steer on the twin: %d probes lost in the 2 s congested before the event (%d of %d in all), event -> "
              "steered %.1f s, first loss -> steered %.1f s, lost after the steer: %d"
              % (len(lost_congested), figures["lost"], figures["sent"], steered_at - started, steered_at - congested_at,
                 len(lost_after)))
        assert len(lost_congested) >= 5, "tbf did not congest the uplink: %s" % figures   # a lost probe waits 0.2 s
        assert lost_after == [], figures
        # issue 39: steered <= 30 s from the first loss; make bench-gor holds the test to it (AIFABRIC_GOR_STRICT=1, an
        # otherwise idle machine); under make test's lanes (33 s seen at load 13 on 2 cores) only that it ends
        assert steered_at - congested_at <= (30.0 if os.environ.get("AIFABRIC_GOR_STRICT") else 120.0)
        # the audit: the steered binding is GOR's, not drift
        report, out = audit(twin["state"])
        assert report["verdict"].split(" / ")[0] == "IN SYNC", out[-3000:]
        steered = [e for e in report["entries"] if e["check"] == "gor_steer"]
        assert [e["device"] for e in steered] == [name] and "steered by GOR because %s since " % link in \
            steered[0]["message"], steered
    finally:
        sh(ns(name), "tc", "qdisc", "del", "dev", up["port"], "root", check=False)
        open(stop, "w").close()
        if watch.poll() is None:
            watch.kill()
    events = tmp_path / "repaired.json"
    events.write_text(json.dumps({"gor_events": [gor_event(link, "recovered", time.time())], "gor_hold_down": 0}))
    out = playbook(twin["state"], os.path.join(ROOT, "playbooks", "gor_steer.yml"), "-e", "@%s" % events,
                   "-e", "aifabric_build_dir=%s" % build)
    assert "failed=0" in out.split("PLAY RECAP")[-1], out[-6000:]
    with open(record_path) as handle:
        assert json.load(handle)["steered"] == []
    path = route_get(name, dst, src, ingress(leaf))
    assert "via %s dev %s " % (binding["next_hop"], binding["uplink"]) in path, path


def test_scheme_b_routed_host_ports(tmp_path, monkeypatch):
    """Addressing scheme p2p: a routed /31 per host port, the policy on each port (the lab fabric,
    scheme switched), configured with the frr driver directly."""
    import yaml
    with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml")) as handle:
        fabric = yaml.safe_load(handle)
    fabric["fabric"]["addressing"]["scheme"] = "p2p"
    inventory = tmp_path / "inventory"
    (inventory / "group_vars" / "all").mkdir(parents=True)
    (inventory / "group_vars" / "all" / "fabric.yml").write_text(yaml.safe_dump(fabric))
    state = str(tmp_path / "state")
    prefix, base_port = labid.twin_names("aifp")
    cmd = [sys.executable, os.path.join(TWIN, "twin.py"), "--state", state, "--ns-prefix", prefix,
           "--base-port", str(base_port)]
    try:
        out = subprocess.run(cmd[:2] + ["up", "--configure", "--host-config", "--inventory", str(inventory)] + cmd[2:],
                             capture_output=True, text=True, check=False)
        assert out.returncode == 0, out.stderr[-3000:]
        with open(os.path.join(state, "plan", "plan.json")) as handle:
            plan = json.load(handle)
        monkeypatch.setattr(sys.modules[__name__], "PREFIX", prefix)   # the helpers look up this twin
        seen = wait_sessions(plan)
        assert all(st == "Established" for peers in seen.values() for st in peers.values()), seen
        name, leaf = next(iter(plan["leafs"].items()))
        assert [i["kind"] for i in leaf["host_interfaces"]] == ["routed"] * len(leaf["downlinks"])
        remote_host = plan["leafs"][list(plan["leafs"])[-1]]["downlinks"][-1]["host_address"]
        for binding in leaf["bindings"]:
            src = binding["source"].split("/")[0]
            path = route_get(name, remote_host, src, binding["ingress"])
            assert "via %s dev %s " % (binding["next_hop"], binding["uplink"]) in path, path
        # validate.yml's switch checks on routed host ports (ingress = each port, locals are /31 neighbours)
        report, out = validate(state)
        entries = [e for e in report["entries"] if e["kind"] == "switch"]
        assert len(entries) == len(plan["leafs"]) + len(plan["spines"]), out[-2000:]
        assert [(e["device"], e["items"]) for e in entries if e["status"] != "ok"] == []
        host, record = next(iter(plan["hosts"].items()))
        nic = record["nics"][0]
        targets = [n["address"] for h, r in plan["hosts"].items() if h != host for n in r["nics"]]
        got = json.loads(sh(ns(host), "python3", PROBE, "mesh", "--src", nic["address"], "--size",
                            str(nic["mtu"] - 28), "--to", *targets))
        assert [dst for dst, rtt in got.items() if rtt is None] == []
    finally:
        subprocess.run(cmd[:2] + ["down"] + cmd[2:], capture_output=True, text=True, check=False)
