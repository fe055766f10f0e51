"""The NOS drivers' read path against real device output (tests/fixtures/switches/, sources in SOURCE.md there).

Each capture supplies the *format* a real switch prints (range-compressed NVUE keys, EOS hidden defaults and
grouped DSCP maps, Dell klish running-configuration layout and WRED units, NX-OS PFC counter tables); where no
capture of this project's own objects exists, the test writes our intent in exactly that format, next to the
real lines, and checks parse -> diff is a no-op and unrelated real lines stay unmanaged.
"""
import os
import sys

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.nos.eos import default_traffic_class
from ansible_collections.aifabric.roce.plugins.module_utils.nos.klish import normalize_running
from ansible_collections.aifabric.roce.plugins.module_utils.nos.nvue import expand_names, expand_path
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIX = os.path.join(ROOT, "tests", "fixtures", "switches")
sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))
from nvue_ranges import compress_commands  # noqa: E402  (test helper shared with the simulator)


def capture(nos, name):
    with open(os.path.join(FIX, nos, name)) as fh:
        return fh.read()


@pytest.fixture(scope="module")
def plan():
    with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml")) as fh:
        return build_plan(yaml.safe_load(fh)["fabric"])


def test_every_capture_is_listed_in_source_md():
    with open(os.path.join(FIX, "SOURCE.md")) as fh:
        listed = fh.read()
    for nos in sorted(os.listdir(FIX)):
        if os.path.isdir(os.path.join(FIX, nos)):
            for name in sorted(os.listdir(os.path.join(FIX, nos))):
                assert "%s/%s" % (nos, name) in listed, (nos, name)


# ----------------------------------------------------------------------------------------------- NVUE
def test_nvue_real_range_keys_expand_to_interfaces():
    # CL 5.9.2 on an MSN2010 (oxidized spec data): `nv config show` groups settings under range keys
    tree = yaml.safe_load(capture("nvue", "cl5.9.2-msn2010-nv-config-show.yaml"))
    keys = list(tree[1]["set"]["interface"])
    assert {"eth0,swp19-22", "swp1-18", "swp1-22", "swp19-22"} <= set(keys)
    assert expand_names("eth0,swp19-22") == ["eth0", "swp19", "swp20", "swp21", "swp22"]
    assert expand_names("swp1-22") == ["swp%d" % n for n in range(1, 23)]
    assert expand_names("swp1-18") == ["swp%d" % n for n in range(1, 19)]
    # every key of the real capture expands to names NVUE could hold (no key is lost or garbled)
    for key in keys:
        for name in expand_names(key):
            assert name in ("eth0", "lo") or name.startswith("swp") and name[3:].isdigit(), (key, name)


def test_nvue_real_commands_output_is_read_as_expanded_interfaces():
    # `nv config show -o commands` on a CL 5.x border leaf (NVIDIA DCI reference guide): `swp1-3 type swp`
    lines = [l.strip() for l in capture("nvue", "cl-dci-borderleaf01-nv-config-show-commands.txt").splitlines()]
    ranged = [l for l in lines if l.startswith("nv set interface swp1-3 ")]
    assert ranged == ["nv set interface swp1-3 type swp"]
    assert expand_path(ranged[0][len("nv set "):]) == ["interface swp1 type swp", "interface swp2 type swp", "interface swp3 type swp"]
    for other in ("interface lo type loopback", "router bgp autonomous-system 65110"):
        assert expand_path(other) == [other]
    # numeric keys NVUE takes as lists (NVUE reference QoS example `traffic-class 4,5,7 ecn enable`) are read per number too
    assert expand_path("qos congestion-control default-global traffic-class 0,3 ecn enable") == [
        "qos congestion-control default-global traffic-class 0 ecn enable", "qos congestion-control default-global traffic-class 3 ecn enable"]


def test_nvue_range_compressed_readback_of_our_intent_is_a_noop(plan):
    """What made every NVUE push roll back: after apply, NVUE prints our per-port lines range-compressed
    (`nv set interface swp1-4,9-12 link mtu 9216`); the parser used to drop them."""
    leaf = plan["leafs"]["leaf2"]
    drv = get_driver("nvue")
    want = drv.render(leaf, plan["qos"])
    paths = [l[len("nv set "):] for l in want.splitlines()]
    shown = compress_commands(paths)
    assert "interface swp1-4,9-12 link mtu 9216" in shown and "interface swp1-4,9-12 qos pfc-watchdog" in shown
    real = capture("nvue", "cl-dci-borderleaf01-nv-config-show-commands.txt").splitlines()[1:]
    running = "\n".join(real + ["nv set %s " % p for p in shown]) + "\n"   # trailing blanks as in the capture
    assert drv.parse(running, leaf) == want
    assert drv.commands(drv.diff(drv.parse(running, leaf), want)) == []
    # the old parser's failure, kept as a guard: without expansion nothing per-port would be read back
    assert "interface swp1 link mtu 9216" in drv.parse(running, leaf)


def test_nvue_range_drift_is_seen_per_port(plan):
    leaf = plan["leafs"]["leaf2"]
    drv = get_driver("nvue")
    want = drv.render(leaf, plan["qos"])
    paths = [l[len("nv set "):] for l in want.splitlines() if l != "nv set interface swp2 link mtu 9216"]
    paths.append("interface swp2 link mtu 1500")
    running = "".join("nv set %s\n" % p for p in compress_commands(paths))
    assert "nv set interface swp1,3-4,9-12 link mtu 9216" in running
    assert drv.commands(drv.diff(drv.parse(running, leaf), want)) == ["nv set interface swp2 link mtu 9216"]


# ----------------------------------------------------------------------------------------------- EOS
def test_eos_real_grouped_dscp_maps_are_read_per_dscp(plan):
    # EOS 4.35.1F session diff (aristanetworks/avd#6402): DSCPs sharing a class on one line, drop-precedence suffix
    leaf = plan["leafs"]["leaf1"]
    drv = get_driver("eos")
    text = "\n".join(l[1:] for l in capture("eos", "eos-4.35.1f-global-qos-pfc-session-diff.txt").splitlines())
    got = drv.parse(text, leaf).splitlines()
    assert "qos map dscp 26 to traffic-class 4 drop-precedence 2" in got
    assert "qos map dscp 63 to traffic-class 1" in got and "qos map dscp 8 to traffic-class 1" in got
    # the global PFC watchdog timers and action are managed too, in the real device form (seconds, `action drop`)
    watchdog = [l for l in got if not l.startswith("qos map dscp ")]
    assert watchdog == ["priority-flow-control pause watchdog action drop",
                        "priority-flow-control pause watchdog default recovery-time 1.22",
                        "priority-flow-control pause watchdog default timeout 0.05"]   # polling-interval is not ours
    assert len(got) == 44 + 9 + 3
    # our intent: 26 -> TC3 and 48 -> TC6 (EOS's defaults, hidden), every other DSCP -> TC0 (the complete map):
    # the remapped 26 goes back to its default, nothing is added for 48, and each DSCP whose EOS default is
    # not TC0 gets an explicit line (DSCP 0-7 default to TC1, 16-63 to DSCP // 8)
    cmds = drv.commands(drv.diff(drv.parse(text, leaf), drv.render(leaf, plan["qos"])))
    assert "no qos map dscp 26 to traffic-class 4 drop-precedence 2" in cmds
    added = [c for c in cmds if c.startswith("qos map dscp")]
    assert added == ["qos map dscp %d to traffic-class 0" % d for d in list(range(0, 8)) + list(range(16, 64)) if d not in (26, 48)]
    assert cmds.index("no qos map dscp 24 to traffic-class 1") < cmds.index("qos map dscp 24 to traffic-class 0")
    assert "priority-flow-control pause watchdog default timeout 0.2" in cmds
    assert not [c for c in cmds if "action" in c]   # the device already drops


def test_eos_default_map_and_strict_priority_are_hidden():
    # EOS default DSCP -> TC map (docs/switch-commands-sources.md#eos-defaults-hidden-from-running-config)
    assert [default_traffic_class(d) for d in (0, 7, 8, 15, 16, 26, 46, 48, 63)] == [1, 1, 0, 0, 2, 3, 5, 6, 7]


def test_eos_readback_without_default_lines_is_a_noop(plan):
    """EOS leaves lines equal to its defaults out of show running-config: `qos map dscp 26 to traffic-class 3`,
    `qos map dscp 48 to traffic-class 6` (default map) and `tx-queue 6` / `priority strict` (the tx-queue
    default; the non-default form EOS prints is `no priority`, captured in eos-qos-profile-session-diff.txt).
    A satisfied intent read back without them must not be a change, nor fail verification."""
    leaf = plan["leafs"]["leaf1"]
    drv = get_driver("eos")
    explicit = drv.render_explicit(leaf, plan["qos"])
    assert "qos map dscp 26 to traffic-class 3" in explicit and "      priority strict" in explicit
    # EOS shows the map without the DSCPs at their default class (26 -> 3, 48 -> 6, 8-15 -> 0)
    hidden = set([26, 48] + list(range(8, 16)))
    shown_map = ["qos map dscp %d to traffic-class 0" % d for d in range(64) if d not in hidden]
    shown = "\n".join([l for l in explicit.splitlines() if not l.startswith("qos map dscp ")
                       and l.strip() not in ("tx-queue 6", "priority strict")] + shown_map) + "\n"
    assert "priority strict" not in shown
    assert drv.parse(shown, leaf) == drv.render(leaf, plan["qos"])
    assert drv.commands(drv.diff(drv.parse(shown, leaf), drv.render(leaf, plan["qos"]))) == []
    # and a device that does print them (explicitly configured) reads the same
    assert drv.parse(explicit, leaf) == drv.render(leaf, plan["qos"])


def test_eos_no_priority_on_the_cnp_queue_is_repaired_with_priority_strict(plan):
    leaf = plan["leafs"]["leaf1"]
    drv = get_driver("eos")
    # the real non-default form (capture: `tx-queue 3` / `no priority`)
    assert "      no priority" in capture("eos", "eos-qos-profile-session-diff.txt")
    want = drv.render(leaf, plan["qos"])
    running = want.replace("interface Ethernet1\n", "interface Ethernet1\n   tx-queue 6\n      no priority\n", 1)
    cur = drv.parse(running, leaf)
    assert "no priority" in cur
    cmds = [c.strip() for c in drv.commands(drv.diff(cur, want))]
    assert cmds[cmds.index("interface Ethernet1"):][:3] == ["interface Ethernet1", "tx-queue 6", "priority strict"], cmds


def test_eos_mtu_is_clamped_to_the_arista_ceiling(plan):
    leaf = dict(plan["leafs"]["leaf1"], mtu=9216)
    text = get_driver("eos").render(leaf, plan["qos"])
    assert "   mtu 9214" in text and "9216" not in text
    assert "   mtu 9000" in get_driver("eos").render(dict(leaf, mtu=9000), plan["qos"])


# ----------------------------------------------------------------------------------------------- klish
def test_klish_reads_running_configuration():
    assert get_driver("dell_sonic").show_running == "show running-configuration"


def test_dell_real_running_configuration_interface_is_parsed():
    # dellemc.enterprise_sonic sonic_qos_interfaces "After state": `show running-configuration interface Eth 1/5`
    text = capture("sonic", "dell-qos-interfaces-running-configuration-eth1-5.txt")
    intent = {"downlinks": [{"port": "Eth1/5"}], "uplinks": []}
    state = get_driver("dell_sonic").state(get_driver("dell_sonic").parse(text, intent, ("qos",)))
    assert state["interfaces"]["Eth1/5"][:3] == ["cable-length 40m", "priority-flow-control asymmetric",
                                                 "priority-flow-control priority 0"]
    # the watchdog lines in the real form the driver renders (action, on detect-time, restore-time)
    assert "priority-flow-control watchdog on detect-time 100" in state["interfaces"]["Eth1/5"]
    assert "priority-flow-control watchdog restore-time 200" in state["interfaces"]["Eth1/5"]
    assert "queue 0 wred-policy profile1" in state["interfaces"]["Eth1/5"]
    assert "qos-map dscp-tc dscp_map1" in state["interfaces"]["Eth1/5"]
    # the prompt line and '!' separators of the real output are not config
    assert get_driver("dell_sonic").parse(text, {"downlinks": [{"port": "Eth1/6"}]}) == ""


def test_dell_real_fbs_policy_map_layout_is_parsed():
    # dellemc.enterprise_sonic sonic_fbs_policies: `show running-configuration policy-map` (indented '!' closers)
    text = capture("sonic", "dell-fbs-policies-running-configuration.txt").replace("policy-map policy5 ", "policy-map AIF-BIND-x ")
    got = get_driver("dell_sonic").parse(text, {"downlinks": []}, ("pbr",))
    assert got.splitlines()[0] == "policy-map AIF-BIND-x type forwarding"
    assert " class class1 priority 0" in got and "  set ip next-hop 1.1.1.1 vrf default priority 1" in got
    assert "policy1" not in got   # not ours


@pytest.mark.parametrize("shown_min, shown_max", [
    ("150", "1500"),              # bytes/1000, integer
    ("150.0", "1500.0"),          # bytes/1000 on Python 3 (float division)
    ("146.484375", "1464.84375"),  # bytes/1024 (older mgmt-framework renderer, Python 3)
])
def test_klish_wred_thresholds_in_other_units_read_back_equal(plan, shown_min, shown_max):
    leaf = plan["leafs"]["leaf0"]
    drv = get_driver("dell_sonic")
    want = drv.render(leaf, plan["qos"])
    line = " green minimum-threshold 150 maximum-threshold 1500 drop-probability 100"
    assert line in want
    running = want.replace(line, " green minimum-threshold %s maximum-threshold %s drop-probability 100" % (shown_min, shown_max))
    running = running.replace("priority-flow-control priority 3", "pfc priority 3")   # older renderer's spelling
    assert drv.parse(running, leaf) == want
    assert drv.commands(drv.diff(drv.parse(running, leaf), want)) == []


def test_klish_wred_value_off_by_units_is_drift():
    assert "minimum-threshold 146 " in normalize_running(" green minimum-threshold 146 maximum-threshold 1464 drop-probability 5")


# ----------------------------------------------------------------------------------------------- NX-OS
def test_nxos_real_pfc_counter_table_parses():
    # `show interface priority-flow-control` on a UCS fabric interconnect (NX-OS), quoted by a Cisco engineer
    got = get_driver("nxos").parse_pfc_counters(capture("nxos", "ucs-fi-show-interface-priority-flow-control.txt"))
    assert got["Ethernet1/1"] == {"rx_pfc": 0, "tx_pfc": 0}
    assert got["Br-Ethernet1/17/1"] == {"rx_pfc": 373112640, "tx_pfc": 5422273}
    assert got["Ethernet7/1/33"] == {"rx_pfc": 0, "tx_pfc": 0} and len(got) == 5


def test_nxos_pfc_counters_with_thousands_separators():
    # the same table with separated counters (as a community capture shows them; unverified for NX-OS itself)
    text = capture("nxos", "ucs-fi-show-interface-priority-flow-control.txt").replace("373112640  5422273", "373,112,640 5,422,273")
    got = get_driver("nxos").parse_pfc_counters(text)
    assert got["Br-Ethernet1/17/1"] == {"rx_pfc": 373112640, "tx_pfc": 5422273}
    # EOS is read in its JSON form (ANTA's fixture): numbers, no separators
    eos = get_driver("eos").parse_pfc_counters(capture("eos", "anta-show-priority-flow-control-counters-json.json"))
    assert eos["Ethernet3/3/1"] == {"rx_pfc": 2, "tx_pfc": 0} and eos["Ethernet3/2/1"] == {"rx_pfc": 0, "tx_pfc": 2}
