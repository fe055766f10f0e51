"""GOM's link-state feed (issue 38 item 3): a leaf-spine cable down is invisible to loss (routing moves the probes
at once), so the switches' own port state (iproute2's `ip -j link show`, a real capture) names the link, both
directions, with the GPUs whose bound path moved; it recovers when the port is up, and a switch under maintenance
reports no fault."""
import os
import time

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gom.collector import LinkStatePoller, Service
from ansible_collections.aifabric.roce.plugins.module_utils.gom.identify import plan_identifiable
from ansible_collections.aifabric.roce.plugins.module_utils.gom.linkstate import LinkStateError, ports_down
from ansible_collections.aifabric.roce.plugins.module_utils.gom.localise import Localiser, Topology

from ..fabric.intents import lab

CAPTURE = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "gom", "ip-link-veth.json")


def capture():
    with open(CAPTURE) as handle:
        return handle.read()


def test_ports_down_from_a_real_ip_link_capture():
    # swp11: up, no carrier (NO-CARRIER, LOWERLAYERDOWN); swp12: administratively down; Ethernet8/9 up; lo UNKNOWN
    # but up with LOWER_UP
    assert ports_down(capture()) == {"swp11", "swp12"}
    assert ports_down(capture(), ["Ethernet8", "swp11", "Ethernet99"]) == {"swp11"}   # unknown names: not judged
    with pytest.raises(LinkStateError, match="ip -j link show"):
        ports_down("Ethernet8 is up")
    with pytest.raises(LinkStateError, match="list"):
        ports_down('{"ifname": "x"}')


@pytest.fixture(scope="module")
def lab_topo():
    plan = build_plan(lab())
    report = plan_identifiable(plan, dport=4792)
    return Topology(plan, report["probes"])


def test_a_fabric_cable_down_is_two_link_down_events_naming_the_gpus_and_recovers(lab_topo):
    loc = Localiser(lab_topo, clock=lambda: 0.0)
    up, down = "leaf0:Ethernet8>spine1:Ethernet1", "spine1:Ethernet1>leaf0:Ethernet8"
    assert loc.tick(1.0) == []
    loc.set_ports_down("leaf0", {"Ethernet8"})
    events = loc.tick(2.0)
    assert [(e["kind"], e["link"]) for e in events] == [("link_down", up), ("link_down", down)]
    assert events[0]["link_class"] == "leaf_up" and events[0]["localised"] == events[0]["detected"] == 2.0
    # the GPUs whose bound path moved: the NIC bound to that uplink; the other direction: the NICs on that leaf
    assert [g["host"] for g in events[0]["gpus"]] and len(events[1]["gpus"]) == 4
    assert loc.state(up) == "down" and loc.tick(2.1) == []
    loc.set_ports_down("leaf0", None)            # the switch could not be read: nothing changes
    assert loc.tick(2.2) == [] and loc.state(up) == "down"
    loc.set_ports_down("leaf0", set())
    events = loc.tick(3.0)
    assert [(e["kind"], e["link"]) for e in events] == [("recovered", up), ("recovered", down)]
    assert events[0]["cleared"] == 3.0 and loc.state(up) != "down"
    # host ports are not read this way (loss names a host cable down, both directions, in under a second)
    loc.set_ports_down("leaf0", {"swp1", "Ethernet0"})
    assert loc.tick(4.0) == []


def test_losses_while_routing_moves_flows_off_a_down_cable_are_not_a_fault(lab_topo):
    """Probes planned across the siblings of a cable that went down (or came back) lose packets while the ECMP
    groups change: they belong to the link_down, not to a fault of the sibling; a loss elsewhere still is one."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools"))
    from gom_sim import Replay
    plan = build_plan(lab())
    report = plan_identifiable(plan, dport=4792)
    sim = Replay(report["probes"])
    loc = Localiser(lab_topo, clock=lambda: 0.0)
    sibling = "spine1:Ethernet2>leaf0:Ethernet10" if "spine1:Ethernet2>leaf0:Ethernet10" in lab_topo.sig else sorted(
        x for x in lab_topo.sig if x.startswith("spine1:") and ">leaf0:" in x and x != "spine1:Ethernet1>leaf0:Ethernet8")[0]
    events, t = [], 0.0
    for step in range(80):
        t = round(t + 0.1, 1)
        if step == 20:
            loc.set_ports_down("leaf0", {"Ethernet8"})
            sim.faults = {sibling: 1.0}             # its flows are being moved: lost in the meantime
        if step == 30:
            loc.set_ports_down("leaf0", set())
        if step == 40:
            sim.faults = {}
        if step == 60:
            sim.faults = {"gpu02:rail1>leaf1:Ethernet1": 1.0} if "gpu02:rail1>leaf1:Ethernet1" in lab_topo.sig else {
                sorted(x for x in lab_topo.sig if x.startswith("gpu02:rail1>"))[0]: 1.0}
        for batch in sim.step(t):
            loc.ingest(batch, t)
        events.extend(loc.tick(t))
    kinds = [(e["kind"], e["link_class"]) for e in events]
    assert kinds[:2] == [("link_down", "leaf_up"), ("link_down", "spine_down")]
    assert ("link_fault", "spine_down") not in kinds and ("link_fault", "host_up") in kinds


def test_a_cable_down_on_a_switch_under_maintenance_is_no_event(lab_topo):
    loc = Localiser(lab_topo, clock=lambda: 0.0)
    loc.set_maintenance({"spine1": {"by": "lock", "holder": "aif-x", "since": 0.0}})
    loc.set_ports_down("spine1", {"Ethernet1"})
    assert loc.tick(1.0) == [] and loc.state("spine1:Ethernet1>leaf0:Ethernet8") == "maintenance"
    loc.set_maintenance({})                       # the change ended and the port is still down: now it is reported
    assert [e["kind"] for e in loc.tick(2.0)] == ["link_down", "link_down"]


def test_the_poller_reads_each_switch_and_a_failing_read_is_unknown(lab_topo):
    calls = []

    def run(argv):
        calls.append(argv)
        if argv[0] == "broken":
            raise OSError("ssh: connect to host leaf1 port 22: Connection refused")
        return lambda: capture().replace('"ifname":"swp11"', '"ifname":"Ethernet8"')
    poller = LinkStatePoller({"leaf0": ["ip", "-j", "link", "show"], "leaf1": ["broken"]},
                             {"leaf0": {"Ethernet8", "Ethernet9"}, "leaf1": {"Ethernet9"}}, run=run)
    poller.poll_once()
    assert poller.take() == {"leaf0": {"Ethernet8"}, "leaf1": None} and "refused" in poller.errors["leaf1"]
    service = Service(Localiser(lab_topo, clock=lambda: 0.0))
    service.poller = poller
    events = service.tick(5.0)
    assert [(e["kind"], e["link"]) for e in events] == [("link_down", "leaf0:Ethernet8>spine1:Ethernet1"),
                                                        ("link_down", "spine1:Ethernet1>leaf0:Ethernet8")]
    # the real command path: a process per switch, all started before any is waited for
    real = LinkStatePoller({"a": ["sh", "-c", "sleep 0.3; cat %s" % CAPTURE], "b": ["sh", "-c", "sleep 0.3; exit 3"]},
                           {"a": {"swp11", "Ethernet8"}, "b": {"x"}})
    started = time.monotonic()
    real.poll_once()
    assert time.monotonic() - started < 0.55
    assert real.take() == {"a": {"swp11"}, "b": None} and "exit 3" in real.errors["b"]
