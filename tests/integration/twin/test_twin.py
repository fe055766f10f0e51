"""The routed twin of the lab plan, configured by the frr driver over SSH, validated with real traffic.

FRR 8.4 (zebra, bgpd, pbrd) per router namespace, the Linux kernel forwarding: every assertion
below is about what the real engine and kernel do. Needs root and the Debian `frr` package.
"""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TWIN = os.path.join(ROOT, "tests", "lab", "twin")
PROBE = os.path.join(TWIN, "probe.py")
PORT_OFFSET = int(os.environ.get("AIFABRIC_TEST_PORT_OFFSET", "300"))
PREFIX = "aift%d-" % PORT_OFFSET     # one twin per test port offset: parallel runs do not meet
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, TWIN)

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
           "--base-port", str(24000 + PORT_OFFSET)]
    out = subprocess.run(cmd[:2] + ["up"] + cmd[2:], capture_output=True, text=True, check=False)
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


def converge(state, *extra):
    """ansible-playbook converge.yml on the twin inventory -> {host: recap counters}."""
    # the project's ansible.cfg only: a caller's ANSIBLE_* (Molecule's colours, callbacks, paths) would change the recap
    env = dict(((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_")),
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), PYTHONPATH=os.path.join(ROOT, ".collections"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""), ANSIBLE_NOCOLOR="1")
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i",
                          os.path.join(state, "inventory.yml"), os.path.join(os.path.dirname(__file__), "converge.yml")]
                         + list(extra), capture_output=True, text=True, env=env, check=False)
    recap = {}
    for line in out.stdout.splitlines():
        parts = line.split(":", 1)
        if len(parts) == 2 and "ok=" in parts[1] and "changed=" in parts[1]:
            recap[parts[0].strip()] = dict((k, int(v)) for k, v in (f.split("=") for f in parts[1].split()))
    assert recap, out.stdout[-3000:] + out.stderr[-3000:]
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


def test_bgp_sessions_up_equal_planned_links(twin):
    plan = twin["plan"]
    seen = wait_sessions(plan)
    for group in ("leafs", "spines"):
        for name, record in plan[group].items():
            planned = sorted(n["address"] for n in record["bgp"]["neighbors"])
            assert sorted(seen[name]) == planned, name
            assert set(seen[name].values()) == {"Established"}, (name, seen[name])
    links = sum(len(leaf["uplinks"]) for leaf in plan["leafs"].values())
    assert sum(len(p) for p in seen.values()) == 2 * links


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


def test_each_host_port_takes_its_bound_spine_and_locals_are_not_pinned(twin):
    plan = twin["plan"]
    wait_sessions(plan)
    for name, leaf in plan["leafs"].items():
        remote = next(other for other_name, other in plan["leafs"].items() if other_name != name)
        remote_host = remote["downlinks"][0]["host_address"]
        for binding in leaf["bindings"]:
            src = binding["source"].split("/")[0]
            path = route_get(name, remote_host, src, ingress(leaf))
            assert "via %s dev %s " % (binding["next_hop"], binding["uplink"]) in path, (name, binding, path)
            for down in leaf["downlinks"]:
                if down["host_address"] != src:
                    local = route_get(name, down["host_address"], src, ingress(leaf))
                    assert " via " not in local and "table" not in local, (name, local)


def _bound(plan):
    name, leaf = next(iter(plan["leafs"].items()))
    binding = leaf["bindings"][0]
    remote = [lf for n, lf in plan["leafs"].items() if n != name][-1]
    return name, leaf, binding, remote["downlinks"][-1]["host_address"]


def test_failover_when_the_bound_uplink_fails_and_back(twin):
    plan = twin["plan"]
    wait_sessions(plan)
    name, leaf, binding, dst = _bound(plan)
    src = binding["source"].split("/")[0]
    watch = subprocess.Popen(["ip", "netns", "exec", ns(binding["server"]), "python3", PROBE, "watch", "--src", src,
                              "--dst", dst, "--seconds", "4", "--interval", "0.01"], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)
        sh(ns(name), "ip", "link", "set", binding["uplink"], "down")
        time.sleep(0.5)
        # FRR: the nexthop-group's only next hop is unreachable -> pbrd uninstalls the rule
        # ("Invalid NH-group") -> the packet meets no PBR rule and the main table's ECMP routes it
        path = route_get(name, dst, src, ingress(leaf))
        assert "table" not in path and binding["uplink"] not in path, path
        seqs = vtysh_json(name, "show pbr map")[0]["policies"]
        pinned = [s for s in seqs if s.get("nexthopGroup", {}).get("name", "").endswith(binding["next_hop"].replace(".", "-"))]
        assert pinned and all(not s["installed"] for s in pinned), pinned
        out = watch.communicate(timeout=30)[0]
    finally:
        sh(ns(name), "ip", "link", "set", binding["uplink"], "up", check=False)
        if watch.poll() is None:
            watch.kill()
    figures = json.loads(out)
    print("\nfailover: %s" % figures)
    # traffic kept arriving: under 5 % of probes lost over the 4 s window (one burst at most)
    assert figures["lost"] <= figures["sent"] * 0.05, figures
    assert figures["longest_gap_ms"] < 1000, figures
    deadline = time.monotonic() + 10
    while "table" not in route_get(name, dst, src, ingress(leaf)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "via %s dev %s " % (binding["next_hop"], binding["uplink"]) in route_get(name, dst, src, ingress(leaf))


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


def test_role_is_idempotent_in_check_mode(twin):
    recap = converge(twin["state"], "--check")
    assert all(r["changed"] == 0 and r["failed"] == 0 for r in recap.values()), recap


def test_a_refused_change_leaves_the_router_as_it_was(twin):
    name = next(iter(twin["plan"]["spines"]))
    tx = _transaction(twin, name)
    try:
        before, _after, _cmds = tx.plan()
        from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import ApplyError
        bad = ["router bgp %d" % twin["plan"]["spines"][name]["bgp"]["asn"], "neighbor 10.254.0.1 remote-as 99999999999",
               "exit"]
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
    name = list(twin["plan"]["spines"])[-1]
    asn = twin["plan"]["spines"][name]["bgp"]["asn"]
    tx = _transaction(twin, name)
    try:
        before, _after, _cmds = tx.plan()
        whole = tx.read_image()
        bad = ["router bgp %d" % asn, "neighbor 10.254.0.250 remote-as 65099", "exit",
               "router bgp %d" % (asn + 1), "bgp router-id 10.0.0.2", "exit"]
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
    prefix = "aifp%d-" % PORT_OFFSET
    cmd = [sys.executable, os.path.join(TWIN, "twin.py"), "--state", state, "--ns-prefix", prefix,
           "--base-port", str(24100 + PORT_OFFSET)]
    try:
        out = subprocess.run(cmd[:2] + ["up", "--configure", "--inventory", str(inventory)] + cmd[2:],
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
        host, record = next(iter(plan["hosts"].items()))
        nic = record["nics"][0]
        targets = [n["address"] for h, r in plan["hosts"].items() if h != host for n in r["nics"]]
        got = json.loads(sh(ns(host), "python3", PROBE, "mesh", "--src", nic["address"], "--size",
                            str(nic["mtu"] - 28), "--to", *targets))
        assert [dst for dst, rtt in got.items() if rtt is None] == []
    finally:
        subprocess.run(cmd[:2] + ["down"] + cmd[2:], capture_output=True, text=True, check=False)
