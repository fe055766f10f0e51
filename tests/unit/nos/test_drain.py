"""Maintenance drain (issue 18 item 4): the drain line per NOS, kept out of the managed view (a maintenance
state, never drift), seen in the Image's outside part, and the changes that call for a drain."""
import copy

import pytest
from .helpers import plan_on_platform

from ansible_collections.aifabric.roce.plugins.module_utils.nos import drain
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import image
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

SECTIONS = ("qos", "mtu", "pbr", "underlay")
CASES = {"frr": ("bgp graceful-shutdown", " bgp graceful-shutdown"),
         "nxos": ("graceful-shutdown activate", "  graceful-shutdown activate"),
         "nvue": ("nv set router bgp graceful-shutdown on", None)}


def leaf(platform):
    plan = plan_on_platform("lab", platform)
    name = sorted(plan["leafs"])[0]
    return get_driver(platform), plan["leafs"][name], plan["qos"]


def running_with_drain(driver, managed, on):
    """What the switch prints after the drain commands: the managed config plus the drain line where the NOS
    prints it (FRR 8.4.4: after `no bgp ebgp-requires-policy`, seen on the engine)."""
    cmds = driver.drain.commands(driver, managed, on)
    if driver.name == "nvue":
        return managed + cmds[0] + "\n"
    lines = managed.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip() == "no bgp ebgp-requires-policy") + 1 \
        if driver.name == "frr" else next(i for i, ln in enumerate(lines) if ln.startswith("router bgp ")) + 1
    return "\n".join(lines[:at] + [cmds[1]] + lines[at:]) + "\n"


@pytest.mark.parametrize("platform", sorted(CASES))
def test_drain_line_is_outside_the_managed_view(platform):
    driver, intent, qos = leaf(platform)
    managed = driver.render(intent, qos, SECTIONS)
    cmds = driver.drain.commands(driver, managed, True)
    assert CASES[platform][1] is None or cmds[1] == CASES[platform][1], cmds
    running = running_with_drain(driver, managed, True)
    plain, drained = image(driver, managed, intent, SECTIONS), image(driver, running, intent, SECTIONS)
    # the managed view is the same: a drained switch is not drift, and no plan removes someone's drain
    assert drained.managed == plain.managed == managed
    assert driver.commands(driver.diff(drained.managed, managed)) == []
    # the drain line is the one thing the outside part gained
    assert set(drained.outside) - set(plain.outside) == set(driver.drain.paths(driver, drained.outside))
    assert len(driver.drain.paths(driver, drained.outside)) == 1
    assert driver.drain.paths(driver, plain.outside) == []


@pytest.mark.parametrize("platform", sorted(CASES))
def test_undrain_commands_take_back_only_the_drain_line(platform):
    driver, intent, qos = leaf(platform)
    managed = driver.render(intent, qos, SECTIONS)
    off = driver.drain.commands(driver, managed, False)
    assert [c for c in off if "graceful-shutdown" in c] == [
        {"frr": " no bgp graceful-shutdown", "nxos": "  no graceful-shutdown activate",
         "nvue": "nv unset router bgp graceful-shutdown"}[platform]]


def test_no_router_bgp_no_drain():
    driver, intent, qos = leaf("nxos")
    assert driver.drain.commands(driver, driver.render(intent, qos, ("qos", "mtu", "pbr")), True) is None


@pytest.mark.parametrize("platform", ["eos", "dell_sonic", "asternos"])
def test_unsupported_nos_says_why(platform):
    driver = get_driver(platform)
    assert not driver.drain and driver.drain.why


def test_reasons_name_the_disturbing_change():
    driver, intent, qos = leaf("nxos")
    converged = driver.render(intent, qos, SECTIONS)
    assert drain.reasons(driver, converged, intent, qos, SECTIONS) == []
    # an MTU change and an underlay change call for a drain; a first QoS apply does too
    other = copy.deepcopy(intent)
    other["mtu"] = 9000 if intent.get("mtu") != 9000 else 9100
    assert "mtu changes" in drain.reasons(driver, converged, other, qos, SECTIONS)
    no_qos = driver.render(intent, qos, ("mtu", "pbr", "underlay"))
    assert drain.reasons(driver, no_qos, intent, qos, SECTIONS) == ["first QoS/lossless buffer init"]
    no_bgp = driver.render(intent, qos, ("qos", "mtu", "pbr"))
    assert drain.reasons(driver, no_bgp, intent, qos, SECTIONS) == ["underlay changes"]


def test_any_drain_is_seen_ours_or_eos_maintenance():
    """drained_by_anyone (what switch_facts, switch_config's drain_state and the audit read): our GRACEFUL_SHUTDOWN
    line on NX-OS, EOS maintenance mode `quiesce` (unverified shape, Arista EOS User Manual), nothing on a clean switch."""
    eos = get_driver("eos")
    run = "hostname leaf1\n!\nmaintenance\n   unit System\n      quiesce\n!\nrouter bgp 65001\n   router-id 1.1.1.1\n!\n"
    assert drain.drained_by_anyone(eos, image(eos, run, {"name": "leaf1", "ports": []}, ("qos",)).outside) == [
        "maintenance > unit System > quiesce"]
    assert drain.drained_by_anyone(eos, image(eos, run.replace("      quiesce\n", ""), {"name": "leaf1", "ports": []},
                                              ("qos",)).outside) == []
    nxos = get_driver("nxos")
    run = "hostname leaf3\nrouter bgp 65003\n  router-id 1.1.1.3\n  graceful-shutdown activate\n"
    assert drain.drained_by_anyone(nxos, image(nxos, run, {"name": "leaf3", "ports": []}, ("qos",)).outside) == [
        "router bgp 65003 > graceful-shutdown activate"]
