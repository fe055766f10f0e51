"""GOR's twin campaign (issue 39 item 4), every part real, on a lab twin of its own (root; ~5 min):

    python tools/bench_gor.py            (make bench-gor-twin)

GOM's agents in every GPU host and its collector (tests/lab/twin/gom_live.py) -> Prometheus scraping the collector
with monitoring/gom-alerts.yml -> Alertmanager -> ansible-rulebook (extensions/eda/rulebooks/gor.yml) ->
playbooks/gor_steer.yml (switch_config on the twin's FRR leafs) and playbooks/gor_drain.yml (a real slurmctld with a
slurmd per GPU host). The routers keep their lock markers in directories of their own (twin.py --lock-dirs), which the
collector reads: a leaf under GOR's own change is maintenance, never a fault.

1. A leaf->spine link of a pinned host port loses every UDP datagram (nftables, GOM's probes; BGP keeps its session):
   time to GOM's localised event, to the binding steered (the leaf's kernel routes the pinned source via another
   uplink), and to GOM's recovered event (its probes clean again). After the repair and the hold-down, one
   gor_steer.yml run without events (a periodic job) restores the planned binding.
2. The same uplink congested (tbf with a UDP load across it): the same figures.
3. A host->leaf link loses every UDP datagram: time until Slurm shows the node drained with the reason, and resumed
   after the repair.
Exit 1 when a figure misses the issue's targets: steered <= 30 s from the first loss, drained <= 10 s. Uses the
``aifp`` test twin's namespace prefix and ports, this checkout's Slurm and event-path ports: not while those tests run.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "twin"))

import event_path  # noqa: E402
import failover  # noqa: E402
import gom_live  # noqa: E402
import labid  # noqa: E402
import slurm_cluster  # noqa: E402
from ansible_collections.aifabric.roce.plugins.module_utils.gor import slurm  # noqa: E402

STEER_TARGET_S, DRAIN_TARGET_S, HOLD_DOWN_S = 30.0, 10.0, 5
# GOM reports a switch's links as maintenance while this collection changes it and for 10 s after (the collector's
# --maintenance-linger): each case starts after that, so a case does not measure the previous case's restore
LINGER_S = 12.0


def route(prefix, leaf, dst, src, iif):
    return subprocess.run(["ip", "netns", "exec", prefix + leaf, "ip", "route", "get", dst, "from", src, "iif", iif],
                          capture_output=True, text=True, check=False).stdout.splitlines()[:1]


def wait(predicate, limit):
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def events_of(live, link, kinds, since):
    """GOM's events of ``kinds`` naming ``link``, detected after ``since`` (a case's own, not an earlier case's)."""
    with open(live.events_path) as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return [e for e in rows if e["kind"] in kinds and link in (e.get("links") or [e.get("link")])
            and (e.get("detected") or e.get("cleared") or 0) >= since - 1.0]


def steer_case(ctx, kind, value):
    prefix, plan, live = ctx["prefix"], ctx["plan"], ctx["live"]
    name, binding, _remote, dst = failover.pinned_flow(plan)
    leaf = plan["leafs"][name]
    up = [u for u in leaf["uplinks"] if u["port"] == binding["uplink"]][0]
    link = "%s:%s>%s:%s" % (name, up["port"], up["spine"], up["spine_port"])
    iface = leaf["host_interfaces"][0]
    iif = "vlan%d" % iface["vlan"] if iface["kind"] == "svi" else iface["port"]
    src = binding["source"].split("/")[0]

    def steered():
        return not any(" dev %s " % binding["uplink"] in line for line in route(prefix, name, dst, src, iif))
    row = {"case": kind, "link": link}
    load = live.load(link, 60) if kind == "congestion" else None
    injected = time.time()
    live.inject(kind, link, value)
    try:
        row["steered"] = wait(steered, 90)
        row["steered_s"] = round(time.time() - injected, 1)
        faults = events_of(live, link, ("link_fault",), injected)
        row["localised_s"] = round(faults[0]["localised"] - injected, 1) if faults else None
        row["first_loss_to_steered_s"] = round(time.time() - faults[0]["first_loss"], 1) if faults else None
        wait(lambda: events_of(live, link, ("recovered",), injected), 30)
        rec = events_of(live, link, ("recovered",), injected)
        row["probes_clean_s"] = round(rec[0]["cleared"] - injected, 1) if rec else None
    finally:
        live.clear(kind, link)
        if load:
            load.kill()
    time.sleep(HOLD_DOWN_S + 2)
    started = time.time()
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", ctx["inventory"],
                          os.path.join(ROOT, "playbooks", "gor_steer.yml")], capture_output=True, text=True,
                         env=ctx["env"], check=False)
    row["restored"] = wait(lambda: not steered(), 30) and out.returncode == 0
    row["restore_run_s"] = round(time.time() - started, 1)
    time.sleep(LINGER_S)
    return row


def drain_case(ctx):
    plan, live, cluster = ctx["plan"], ctx["live"], ctx["slurm"]
    steered_leaf = failover.pinned_flow(plan)[0]
    host = sorted(plan["hosts"])[1]
    nic = [n for n in plan["hosts"][host]["nics"] if n["leaf"] != steered_leaf][0]     # a leaf GOR did not change
    link = "%s:%s>%s:%s" % (host, nic["netdev"], nic["leaf"], nic["leaf_port"])

    def node():
        return slurm.parse_node(slurm_cluster.scontrol(cluster, "-o", "show", "node", host).stdout)
    row = {"case": "host link loss", "link": link}
    injected = time.time()
    live.inject("loss", link, 100)
    try:
        row["drained"] = wait(lambda: node()["drain"], 60)
        row["drained_s"] = round(time.time() - injected, 1)
        row["reason"] = node()["reason"]
    finally:
        live.clear("loss", link)
    cleared = time.time()
    row["resumed"] = wait(lambda: not node()["drain"], 60)
    row["resumed_s"] = round(time.time() - cleared, 1)
    return row


def main():
    prefix, base_port = labid.twin_names("aifp")
    state = tempfile.mkdtemp(prefix="aif-gor-bench-")
    twin = [sys.executable, os.path.join(ROOT, "tests", "lab", "twin", "twin.py")]
    common = ["--state", os.path.join(state, "twin"), "--ns-prefix", prefix, "--base-port", str(base_port)]
    subprocess.run(twin + ["up", "--host-config", "--configure", "--lock-dirs"] + common, check=True,
                   stdout=subprocess.DEVNULL)
    path = live = None
    cluster = os.path.join(state, "slurm")
    rows = []
    try:
        with open(os.path.join(state, "twin", "plan", "plan.json")) as handle:
            plan = json.load(handle)
        time.sleep(10)      # BGP sessions up
        slurm_cluster.up(cluster, sorted(plan["hosts"]))
        with open(os.path.join(state, "twin", "inventory.yml")) as handle:
            text = handle.read()
        inventory = os.path.join(state, "inventory.yml")
        with open(inventory, "w") as handle:
            handle.write(text.replace("all:\n  vars:\n", "all:\n  vars:\n    gor_slurm_conf: %s\n    gor_hold_down: %d\n"
                                      % (os.path.join(cluster, "slurm.conf"), HOLD_DOWN_S), 1))
        ports = event_path.ports()
        os.makedirs(os.path.join(state, "live"), exist_ok=True)
        live = gom_live.Live(plan, prefix, os.path.join(state, "live"))
        live.http = "127.0.0.1:%d" % ports["metrics"]
        live.markers = os.path.join(state, "twin", "locks")     # the routers' own lock dirs: GOR's changes are maintenance
        live.plan_probes()
        live.start()
        path = event_path.EventPath(os.path.join(state, "events"), inventory).up(live.http)
        time.sleep(5)
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
        ctx = {"prefix": prefix, "plan": plan, "live": live, "slurm": cluster, "inventory": inventory, "env": env}
        rows.append(steer_case(ctx, "loss", 100))
        rows.append(steer_case(ctx, "congestion", "1mbit"))
        rows.append(drain_case(ctx))
    finally:
        if path:
            path.down()
        if live:
            live.stop()
        slurm_cluster.down(cluster)
        subprocess.run(twin + ["down"] + common, check=False, stdout=subprocess.DEVNULL)
    missed = []
    for row in rows:
        print(json.dumps(row, sort_keys=True))
        if "steered" in row and not (row["steered"] and (row["first_loss_to_steered_s"] or 1e9) <= STEER_TARGET_S):
            missed.append("%s: steered %s, %s s from the first loss (target %s s)" % (
                row["case"], row["steered"], row["first_loss_to_steered_s"], STEER_TARGET_S))
        if "steered" in row and not row["restored"]:
            missed.append("%s: planned binding not restored" % row["case"])
        if "drained" in row and not (row["drained"] and row["drained_s"] <= DRAIN_TARGET_S and row["resumed"]):
            missed.append("%s: drained %s in %s s (target %s s), resumed %s" % (
                row["case"], row["drained"], row["drained_s"], DRAIN_TARGET_S, row["resumed"]))
    print("MISSED: %s" % "; ".join(missed) if missed else "all targets met")
    print("state (logs): %s" % state)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
