"""switch_facts against the simulators: managed state per section, PFC counters where one show gives them."""
import json
import os
import subprocess
import sys

import pytest
from helpers import applier, params, reset

from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import netmiko_factory
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
from ansible_collections.aifabric.roce.plugins.modules.switch_facts import collect

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def converged(switch_lab, name):
    reset(switch_lab, name)
    a = applier(switch_lab, name)
    before, after, cmds = a.plan()
    a.apply(before, after, cmds)
    a.close()
    return after


@pytest.mark.parametrize("name", ["leaf0", "leaf1", "leaf2", "leaf3"])
def test_sections_match_rendered_intent(switch_lab, name):
    dev = switch_lab["devices"][name]
    drv = get_driver(dev["platform"])
    secs = ["qos"] if drv.name == "asternos" else ["qos", "mtu", "pbr"]   # AsterNOS: Easy RoCE REST only
    reset(switch_lab, name)
    conn = netmiko_factory(params(switch_lab, name), drv)()
    fresh = collect(drv, conn, dev["intent"], secs, True)
    conn.disconnect()
    assert all(not fresh["sections"][s]["config"] for s in secs), "baseline has no managed config"
    converged(switch_lab, name)
    conn = netmiko_factory(params(switch_lab, name), drv)()
    got = collect(drv, conn, dev["intent"], secs, True)
    conn.disconnect()
    for sec in secs:
        assert got["sections"][sec]["config"] == drv.render(dev["intent"], switch_lab["plan"]["qos"], (sec,)), sec
    ports = [drv.port(p) for p in [d["port"] for d in dev["intent"]["downlinks"]]]
    if drv.pfc_counters_command:
        assert got["pfc_counters_command"] == drv.pfc_counters_command
        # PFC is on for every plan port after converge: the simulator counts frames there only
        for port in ports:
            num = int(port.rsplit("/", 1)[-1].replace("Ethernet", ""))
            assert got["pfc_counters"][port] == {"rx_pfc": 100 + num, "tx_pfc": 200 + num}, port
        assert all(c["rx_pfc"] == 0 for c in fresh["pfc_counters"].values())
    else:
        assert got["pfc_counters"] is None and got["pfc_counters_command"] is None


def test_module_through_ansible(switch_lab):
    converged(switch_lab, "leaf3")
    dev = switch_lab["devices"]["leaf3"]
    args = dict(platform="nxos", intent=dev["intent"], sections=["mtu"], host="127.0.0.1", port=switch_lab["ports"]["leaf3"],
                username="admin", password="admin", known_hosts=os.path.join(switch_lab["root"], "known_hosts"))
    env = dict(os.environ, ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible"), "localhost", "-m", "aifabric.roce.switch_facts",
                           "-a", json.dumps(args), "--check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = json.loads(proc.stdout[proc.stdout.index("{"):])["plays"][0]["tasks"][0]["hosts"]["localhost"]
    assert res["changed"] is False
    assert "mtu 9216" in res["sections"]["mtu"]["config"]
    assert res["ansible_facts"]["aifabric_switch"]["pfc_counters"]["Ethernet1/1"] == {"rx_pfc": 101, "tx_pfc": 201}


@pytest.mark.parametrize("name", ["leaf1", "leaf2", "spine1"])
def test_underlay_applies_reads_back_and_is_a_noop_again(switch_lab, name):
    """EOS and NVUE: the underlay with the other sections in one transaction, read back by switch_facts equal to the
    render, and a second run has nothing to do (the simulators print EOS's hidden defaults / NVUE's range keys)."""
    dev = switch_lab["devices"][name]
    drv = get_driver(dev["platform"])
    sections = ("qos", "mtu", "pbr", "underlay") if name.startswith("leaf") else ("qos", "mtu", "underlay")
    reset(switch_lab, name)
    a = applier(switch_lab, name, sections=sections)
    before, after, cmds = a.plan()
    assert cmds and after == drv.render(dev["intent"], switch_lab["plan"]["qos"], sections)
    a.apply(before, after, cmds)
    a.close()
    conn = netmiko_factory(params(switch_lab, name), drv)()
    got = collect(drv, conn, dev["intent"], ["underlay"], False)
    conn.disconnect()
    assert got["sections"]["underlay"]["config"] == drv.render(dev["intent"], switch_lab["plan"]["qos"], ("underlay",))
    assert str(dev["intent"]["bgp"]["asn"]) in got["sections"]["underlay"]["config"]
    b = applier(switch_lab, name, sections=sections)
    assert b.plan()[2] == [], "a second run changes nothing"
    b.close()
