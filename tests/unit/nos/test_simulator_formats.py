"""The lab simulators print the formats of the real captures (tests/fixtures/switches/), in process, without SSH:
a config pushed through a simulated CLI and read back with the driver is a no-op, and the printed text has the
real-device shape (NVUE range keys, EOS hidden defaults, Dell klish WRED units). Covers the Dell klish simulator,
which the lab topology does not start."""
import copy
import re
import time

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

from .helpers import FakeDevice, plan_on_platform, push, simulator_module, simulator_session as session

simulator = simulator_module()


def test_eos_simulator_hides_defaults_and_readback_is_a_noop(plan):
    leaf = plan["leafs"]["leaf1"]
    drv = get_driver("eos")
    sess = session("eos")
    # push every line, defaults included (as an operator might), then read back as EOS shows it
    explicit = drv.render_explicit(leaf, plan["qos"])
    push(sess, explicit.splitlines())
    shown = sess.handle("show running-config")
    assert "qos map dscp 26 to traffic-class 3" not in shown and "priority strict" not in shown
    assert "   mtu 9214" in shown
    assert drv.parse(shown, leaf) == drv.render(leaf, plan["qos"])
    # a remapped DSCP is printed grouped, like EOS 4.35
    push(sess, ["qos map dscp 24 25 to traffic-class 1"])
    assert "qos map dscp 24 25 to traffic-class 1" in sess.handle("show running-config")
    cmds = drv.commands(drv.diff(drv.parse(sess.handle("show running-config"), leaf), drv.render(leaf, plan["qos"])))
    assert cmds == ["no qos map dscp 24 to traffic-class 1", "no qos map dscp 25 to traffic-class 1",
                    "qos map dscp 24 to traffic-class 0", "qos map dscp 25 to traffic-class 0"], cmds
    push(sess, cmds)
    assert drv.parse(sess.handle("show running-config"), leaf) == drv.render(leaf, plan["qos"])


def test_nvue_simulator_prints_range_keys_and_readback_is_a_noop(plan):
    leaf = plan["leafs"]["leaf2"]
    drv = get_driver("nvue")
    sess = session("nvue")
    push(sess, drv.commands(drv.diff("", drv.render(leaf, plan["qos"]))))
    shown = sess.handle("nv config show -o commands")
    assert "nv set interface swp1-4,9-12 link mtu 9216 \n" in shown
    assert drv.parse(shown, leaf) == drv.render(leaf, plan["qos"])


def test_dell_klish_simulator_answers_running_configuration_in_device_units(plan):
    leaf = dict(copy.deepcopy(plan["leafs"]["leaf0"]), platform="dell_sonic")
    drv = get_driver("dell_sonic")
    sess = session("dell_sonic")
    want = drv.render(leaf, plan["qos"])
    push(sess, drv.commands(drv.diff("", want)))
    shown = sess.handle(drv.show_running)
    assert drv.show_running == "show running-configuration"
    assert " green minimum-threshold 146.484375 maximum-threshold 1464.84375 drop-probability 100" in shown
    assert drv.parse(shown, leaf) == want
    assert drv.commands(drv.diff(drv.parse(shown, leaf), want)) == []


@pytest.mark.parametrize("nos", ["nxos", "dell_sonic"])
def test_underlay_pushed_into_the_simulator_reads_back_as_a_noop(nos):
    """The underlay + L3-ingress PBR of a leaf and a spine through the simulated CLI, read back: a no-op. Dell
    prints ` !` before nested blocks (dellemc sonic_bgp_af output); a neighbor change is a small diff."""
    drv = get_driver(nos)
    sections = ("qos", "mtu", "pbr", "underlay")
    plan = plan_on_platform("lab", nos)   # the NOS's own port names
    for name in ("leaf0", "spine1"):
        intent = plan["leafs"].get(name) or plan["spines"][name]
        sess = session(nos)
        want = drv.render(intent, plan["qos"], sections)
        push(sess, drv.commands(drv.diff("", want)))
        shown = sess.handle(drv.show_running)
        assert drv.parse(shown, intent, sections) == want, name
        if nos == "dell_sonic":
            assert "\n !\n address-family ipv4 unicast\n" in shown
        nbr = intent["bgp"]["neighbors"][0]
        push(sess, ["router bgp %d" % intent["bgp"]["asn"], "no neighbor %s" % nbr["address"], "exit"])
        cmds = drv.commands(drv.diff(drv.parse(sess.handle(drv.show_running), intent, sections), want))
        assert any(c.strip() == "neighbor %s" % nbr["address"] for c in cmds), cmds
        push(sess, cmds)
        assert drv.parse(sess.handle(drv.show_running), intent, sections) == want


ALL = ("qos", "mtu", "pbr", "underlay")


@pytest.mark.parametrize("name", ["leaf1", "spine1"])
def test_eos_simulator_takes_the_underlay_and_prints_it_as_eos_does(plan, name):
    intent = plan["leafs"].get(name) or plan["spines"][name]
    drv = get_driver("eos")
    sess = session("eos")
    push(sess, drv.render_explicit(intent, plan["qos"], ALL).splitlines())
    shown = sess.handle("show running-config")
    # EOS leaves out access-port defaults and (4.21) prints each neighbor's default maximum-routes
    assert "switchport mode access" not in shown and "maximum-routes 12000" in shown
    assert drv.parse(shown, intent, ALL) == drv.render(intent, plan["qos"], ALL)
    assert drv.commands(drv.diff(drv.parse(shown, intent, ALL), drv.render(intent, plan["qos"], ALL))) == []


def test_eos_underlay_from_scratch_sends_no_switchport_before_the_address(plan):
    leaf = plan["leafs"]["leaf1"]
    drv = get_driver("eos")
    sess = session("eos")
    cmds = drv.commands(drv.diff("", drv.render(leaf, plan["qos"], ALL)))
    at = cmds.index("interface Ethernet9")
    assert [c.strip() for c in cmds[at + 1:at + 3]] == ["no switchport", "ip address 10.254.0.9/31"], cmds[at:at + 3]
    push(sess, cmds)
    assert drv.parse(sess.handle("show running-config"), leaf, ALL) == drv.render(leaf, plan["qos"], ALL)


def test_nvue_simulator_takes_the_underlay_and_readback_is_a_noop(plan):
    leaf = plan["leafs"]["leaf2"]
    drv = get_driver("nvue")
    sess = session("nvue")
    push(sess, drv.commands(drv.diff("", drv.render(leaf, plan["qos"], ALL))))
    shown = sess.handle("nv config show -o commands")
    assert "nv set interface swp1-4 bridge domain br_default access 100 \n" in shown
    assert drv.parse(shown, leaf, ALL) == drv.render(leaf, plan["qos"], ALL)


def test_eos_underlay_leaves_the_outside_view_unchanged(plan):
    """Verification compares everything outside the managed view before and after: the underlay's own objects
    (Loopback0, the SVI, our VLAN inside EOS's `vlan 10,100` list, router bgp) must not show up there."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import image
    leaf = plan["leafs"]["leaf1"]
    drv = get_driver("eos")
    sess = session("eos")
    # a real switch always shows its physical ports; the simulator once they were entered
    ports = [d["port"] for d in leaf["downlinks"]] + [u["port"] for u in leaf["uplinks"]]
    push(sess, ["hostname leaf1", "vlan 10", "interface Ethernet20", "description other"] + ["interface %s" % p for p in ports])
    before = image(drv, sess.handle("show running-config"), leaf, ALL)
    push(sess, drv.commands(drv.diff(before.managed, drv.render(leaf, plan["qos"], ALL))))
    shown = sess.handle("show running-config")
    assert "vlan 10,100" in shown
    after = image(drv, shown, leaf, ALL)
    assert after.outside == before.outside and "vlan 10" in after.outside
    assert after.managed == drv.render(leaf, plan["qos"], ALL)
    # a change outside (another VLAN) is still seen
    push(sess, ["vlan 30"])
    assert image(drv, sess.handle("show running-config"), leaf, ALL).outside != before.outside


def test_nvue_underlay_leaves_the_outside_view_unchanged(plan):
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import image
    leaf = plan["leafs"]["leaf2"]
    drv = get_driver("nvue")
    sess = session("nvue")
    for cmd in ("nv set system hostname leaf2", "nv set interface swp20 link mtu 1500"):
        assert not sess.handle(cmd)
    sess.handle("nv config apply -y")
    before = image(drv, sess.handle("nv config show -o commands"), leaf, ALL)
    for cmd in drv.commands(drv.diff(before.managed, drv.render(leaf, plan["qos"], ALL))):
        assert not sess.handle(cmd), cmd
    sess.handle("nv config apply -y")
    after = image(drv, sess.handle("nv config show -o commands"), leaf, ALL)
    assert after.outside == before.outside and after.managed == drv.render(leaf, plan["qos"], ALL)


def test_eos_simulator_counters_speak_the_json_of_antas_fixtures(tmp_path):
    """EOS counter commands on the simulator: JSON with the keys of Arista's ANTA fixtures, read back by the parsers
    of nos/counters.py (the injected storm and ECN marks land on the right port and queue)."""
    import json
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import counters as C
    dev = FakeDevice("eos")
    dev.state_dir = str(tmp_path)
    dev.running = [("interface Ethernet1", [("priority-flow-control on", [])]), ("interface Ethernet2", [])]
    (tmp_path / "counters.json").write_text(json.dumps({"Ethernet2": {"3": {"pfc_rx": 40, "ecn_marked": 7}}}))
    sess = simulator.SESSIONS["eos"](dev, None)
    answers = dict((cmd, sess.handle(cmd)) for cmd in [read.command for read in get_driver("eos").counters])
    got = C.parse(get_driver("eos"), answers, ["Ethernet1", "Ethernet2"])
    assert got["Ethernet2"]["all"] == {"pfc_rx": 40, "pfc_tx": 0} and got["Ethernet2"]["3"] == {"ecn_marked": 7}
    assert got["Ethernet1"]["all"]["pfc_rx"] > 0        # PFC on: the simulator's base count
    assert get_driver("eos").parse_pfc_counters(sess.handle(get_driver("eos").pfc_counters_command))["Ethernet2"] == \
        {"rx_pfc": 40, "tx_pfc": 0}


@pytest.mark.parametrize("nos", ["nxos", "eos"])
def test_simulator_records_who_typed_what_in_the_nos_format(nos):
    """The lab's accounting record (NX-OS `show accounting log`, EOS `show logging` command accounting) reads back
    through the parsers held to public captures (tests/fixtures/switches/accounting/SOURCE.md) as the lines typed."""
    import calendar
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import eos_accounting, nxos_accounting
    sess = session(nos)
    port = "Ethernet1/1" if nos == "nxos" else "Ethernet1"
    for cmd in ["configure terminal", "interface %s" % port, "mtu 1500", "end"]:
        sess.handle(cmd)
    if nos == "nxos":
        text = sess.handle("show accounting log")
        got = nxos_accounting(text)
        assert "user=admin:cmd=configure terminal ; interface Ethernet1/1 ; mtu 1500 (SUCCESS)" in text
    else:
        text = sess.handle("show logging last 5 minutes")
        got = eos_accounting(text, time.time(), {"interface Ethernet1 > mtu 9216"})
        assert "Aaa: %ACCOUNTING-6-CMD: admin vty" in text and "cmd=mtu 1500" in text
    assert [e.path for e in got][-1] == "interface %s > mtu 1500" % port
    assert abs(got[-1].at - calendar.timegm(time.gmtime())) < 5 and got[-1].user == "admin"


def test_simulator_numbers_nxos_accounting_records_as_ciscos_reference():
    """`show accounting log last-index` and `start-seqnum N` (Cisco's NX-API CLI reference; the answer's shape as
    zongzw/ruby-monit-ng reads it): the records from N on, each with its number, read back through the parsers."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import nxos_accounting, nxos_last_index
    sess = session("nxos")
    for cmd in ["configure terminal", "interface Ethernet1/1", "mtu 1500", "end"]:
        sess.handle(cmd)
    last = nxos_last_index(sess.handle("show accounting log last-index"))
    for cmd in ["configure terminal", "interface Ethernet1/2", "mtu 1400", "end"]:
        sess.handle(cmd)
    text = sess.handle("show accounting log start-seqnum %d" % (last + 1))
    assert re.match(r"^%d:\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4}:update:127\.0\.0\.1@pts/\d+:admin:configure terminal ; "
                    r"interface Ethernet1/2 \(SUCCESS\)$" % (last + 1), text.splitlines()[0]), text
    got = nxos_accounting(text)
    assert [(e.seq, e.path) for e in got] == [(last + 1, "interface Ethernet1/2"),
                                              (last + 2, "interface Ethernet1/2 > mtu 1400")]
    assert nxos_last_index(sess.handle("show accounting log last-index")) == last + 2


@pytest.mark.parametrize("nos", ["eos", "nxos"])
def test_switch_facts_reads_each_show_command_once(nos, tmp_path):
    """switch_facts on the simulator: the PFC counters command its `pfc_counters` reads is also one of the RoCE
    counters' commands on EOS and NX-OS; its answer serves both, so no command is sent twice in one run (it was: the
    same `show priority-flow-control counters | json` twice per EOS switch), and both results still read it."""
    from ansible_collections.aifabric.roce.plugins.modules import switch_facts
    plan = plan_on_platform("lab", nos)
    intent = plan["leafs"]["leaf1"]
    dev = FakeDevice(nos)
    dev.state_dir = str(tmp_path)
    sess = session(nos, dev)
    drv = get_driver(nos)
    push(sess, drv.commands(drv.diff("", drv.render(intent, plan["qos"], ("qos", "mtu")))))
    sent = []

    class Conn(object):
        def send_command(self, command, **_kw):
            sent.append(command)
            return sess.handle(command)

    facts = switch_facts.collect(drv, Conn(), intent, ["qos", "mtu"], counters=True)
    assert drv.pfc_counters_command in facts["counters_commands"]
    assert sorted(set(sent)) == sorted(sent), sent
    assert facts["pfc_counters"] and facts["counters"], facts
