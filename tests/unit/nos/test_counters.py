"""Switch counter parsers (plugins/module_utils/nos/counters.py) on real captured output.

Captures: tests/fixtures/switches/<nos>/, each listed with its source in tests/fixtures/switches/SOURCE.md.
"""
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos import counters as C
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS, get_driver

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIX = os.path.join(ROOT, "tests", "fixtures", "switches")


def capture(nos, name):
    with open(os.path.join(FIX, nos, name)) as fh:
        return fh.read()


# ----------------------------------------------------------------------------------------------- SONiC
def test_sonic_pfc_counters_per_port_and_priority():
    got = C.parse_sonic_pfc(capture("sonic", "sonic-utilities-show-pfc-counters.txt"))
    assert sorted(got) == ["Ethernet0", "Ethernet4", "Ethernet8"]
    assert got["Ethernet0"]["0"] == {"pfc_rx": 1200, "pfc_tx": 1210}     # thousands separator
    assert got["Ethernet4"]["3"] == {"pfc_rx": 403, "pfc_tx": 413}
    assert got["Ethernet8"]["7"] == {"pfc_rx": 807, "pfc_tx": 817}


def test_sonic_pfc_counters_real_switch_tx_table():
    # Dell Z9332 (sonic-buildimage#9430): the storm's pause frames went out on Ethernet6 priority 3
    got = C.parse_sonic_pfc(capture("sonic", "sonic-z9332-show-pfc-counters-tx.txt"))
    assert got["Ethernet6"]["3"] == {"pfc_tx": 15437}
    assert all(v == {"pfc_tx": 0} for p, prios in got.items() for q, v in prios.items() if (p, q) != ("Ethernet6", "3"))
    assert len(got) == 6


def test_sonic_pfcwd_stats_storm_then_restore_on_a_real_switch():
    text = capture("sonic", "sonic-z9332-show-pfcwd-stats-storm-then-restore.txt")
    tables = text.split("root@sonic-10431:~# show pfcwd stats\n")[1:]
    states = [C.parse_sonic_pfcwd(t)["Ethernet4"]["3"] for t in tables]
    assert states[0] == {"wd_state": "stormed", "wd_storms": 1, "wd_restores": 0}
    assert states[1] == {"wd_state": "operational", "wd_storms": 1, "wd_restores": 1}
    assert states[2] == {"wd_state": "stormed", "wd_storms": 2, "wd_restores": 1}
    assert C.parse_sonic_pfcwd(text)["Ethernet4"]["3"] == states[2]     # the last table of the text wins


def test_sonic_pfcwd_stats_test_vector():
    got = C.parse_sonic_pfcwd(capture("sonic", "sonic-utilities-show-pfcwd-stats.txt"))
    assert got == {"Ethernet0": {"3": {"wd_state": "stormed", "wd_storms": 1, "wd_restores": 0}},
                   "Ethernet4": {"3": {"wd_state": "operational", "wd_storms": 2, "wd_restores": 2}},
                   "Ethernet8": {"4": {"wd_state": "stormed", "wd_storms": 3, "wd_restores": 2}}}


def test_sonic_queue_counters_unicast_drops():
    got = C.parse_sonic_queue(capture("sonic", "sonic-show-queue-counter-ethernet196-drops.txt"))
    assert got["Ethernet196"]["1"] == {"drops": 6841131615, "drop_bytes": 2893444514176}
    assert got["Ethernet196"]["3"] == {"drops": 0, "drop_bytes": 0}
    assert sorted(got["Ethernet196"], key=int) == [str(q) for q in range(8)]     # MC8.. are not unicast queues
    vec = C.parse_sonic_queue(capture("sonic", "sonic-utilities-show-queue-counters.txt"))
    assert vec["Ethernet0"]["3"] == {"drops": 19, "drop_bytes": 76}
    assert "20" not in vec["Ethernet0"]      # ALL20.. print N/A: nothing to keep


def test_asternos_documented_queue_counters_layout():
    # AsterNOS's own page prints single-spaced columns and ALLn queues
    text = capture("asternos/docs", "show-outputs.txt")
    block = text[text.index("do show queue counters 1"):]
    got = C.parse_sonic_queue(block[:block.index("--- end")])
    assert got == {"Ethernet1": dict((str(q), {"drops": 0, "drop_bytes": 0}) for q in range(8))}


def test_sonic_wred_counters_ecn_marked_per_queue():
    got = C.parse_sonic_wred(capture("sonic", "sonic-utilities-show-queue-wredcounters.txt"))
    assert got["Ethernet0"]["3"] == {"ecn_marked": 19}
    assert got["Ethernet4"]["3"] == {"ecn_marked": 48}


# ----------------------------------------------------------------------------------------------- NVUE
def test_nvue_counters_qos_sections():
    got = C.parse_nvue_counters_qos(capture("nvue", "cl-nv-show-interface-swp1-counters-qos.txt"), "swp1")["swp1"]
    assert got["3"] == {"pfc_rx": 0, "pfc_tx": 0, "drops": 0, "drop_bytes": 0}
    assert sorted(got) == ["0", "1", "2", "3", "4", "5", "6", "7", "all"]
    assert got["all"] == {"ecn_marked": 0}
    # the same layout with numbers: the columns land in the right counters
    text = capture("nvue", "cl-nv-show-interface-swp1-counters-qos.txt").replace(
        "    3                0                0                  0                0                ",
        "    3                41               900                7                0                ").replace(
        "    3              0          0 Bytes   0 Bytes                0            ",
        "    3              0          0 Bytes   512 Bytes              5            ").replace(
        "ecn-marked-packets  n/a      0", "ecn-marked-packets  n/a      12")
    got = C.parse_nvue_counters_qos(text, "swp1")["swp1"]
    assert got["3"] == {"pfc_rx": 41, "pfc_tx": 7, "drops": 5, "drop_bytes": 512}
    assert got["all"] == {"ecn_marked": 12}


def test_nvue_pfc_watchdog_deadlocks():
    got = C.parse_nvue_pfc_watchdog(capture("nvue", "cl-nv-show-interface-swp1-qos-pfc-watchdog.txt"), "swp1")["swp1"]
    assert got["2"] == {"wd_state": "DEADLOCK", "wd_storms": 2}
    assert got["7"] == {"wd_state": "DEADLOCK", "wd_storms": 3}
    assert got["3"] == {"wd_state": "OK", "wd_storms": 0}
    assert len(got) == 8


# ----------------------------------------------------------------------------------------------- EOS
def test_eos_pfc_counters_json_per_port():
    # Arista's ANTA fixture of `show priority-flow-control counters` (JSON, revision 3): rxFrames / txFrames per port
    got = C.parse_eos_pfc(capture("eos", "anta-show-priority-flow-control-counters-json.json"))
    assert got == {"Ethernet3/1/1": {"all": {"pfc_rx": 1, "pfc_tx": 0}}, "Ethernet3/2/1": {"all": {"pfc_rx": 0, "pfc_tx": 2}},
                   "Ethernet3/3/1": {"all": {"pfc_rx": 2, "pfc_tx": 0}}, "Ethernet3/4/1": {"all": {"pfc_rx": 0, "pfc_tx": 1}}}
    assert C.parse_eos_pfc("") == {} and C.parse_eos_pfc('{"interfaceCounters": {}}') == {}


def test_eos_ecn_counters_json_per_tx_queue():
    # ANTA's fixture of `show qos interfaces ecn counters queue`: counts are strings, "-" = no ECN on that queue
    got = C.parse_eos_ecn(capture("eos", "anta-show-qos-interfaces-ecn-counters-queue-json.json"))
    assert got["Ethernet10/20/1"] == {"0": {"ecn_marked": 0}, "1": {"ecn_marked": 2}, "2": {"ecn_marked": 0}}
    assert got["Ethernet10/3/1"]["2"] == {"ecn_marked": 2}
    assert "0" not in got["Ethernet10/28/1"] and "2" not in got["Ethernet10/16/1"]     # "-": not configured
    assert sorted(got) == ["Ethernet10/16/1", "Ethernet10/20/1", "Ethernet10/28/1", "Ethernet10/3/1"]


def test_eos_parse_merges_pfc_ecn_and_watchdog_for_plan_ports():
    answers = {"show priority-flow-control counters | json": capture("eos", "anta-show-priority-flow-control-counters-json.json"),
               "show qos interfaces ecn counters queue | json":
                   capture("eos", "anta-show-qos-interfaces-ecn-counters-queue-json.json").replace("Ethernet10/3/1", "Ethernet3/2/1"),
               "show priority-flow-control counters watchdog | json": '{"interfaces": {}}'}
    got = C.parse(get_driver("eos"), answers, ["Ethernet3/2/1"])
    assert got == {"Ethernet3/2/1": {"all": {"pfc_rx": 0, "pfc_tx": 2}, "0": {"ecn_marked": 0}, "1": {"ecn_marked": 0},
                                     "2": {"ecn_marked": 2}}}
    assert C.evidence(get_driver("eos")) == dict(pfc_rx="verified", pfc_tx="verified", ecn_marked="verified", drops=None,
                                                 drop_bytes=None, wd_storms="unverified", wd_restores="unverified")


# ----------------------------------------------------------------------------------------------- NX-OS
def test_nxos_pfc_counters_per_port():
    got = C.parse_nxos_pfc(capture("nxos", "ucs-fi-show-interface-priority-flow-control.txt"))
    assert got and all(set(v) == {"all"} for v in got.values())
    assert all(set(v["all"]) == {"pfc_rx", "pfc_tx"} for v in got.values())


# ----------------------------------------------------------------------------------------------- Linux
def test_linux_drops_from_ip_json():
    got = C.parse_linux_ip_link(capture("frr", "iproute2-6.1-ip-s-j-link-show.json"))
    assert got["v0"] == {"all": {"drops": 0}}
    assert C.parse_linux_ip_link('[{"ifname": "swp1", "stats64": {"rx": {"dropped": 3}, "tx": {"dropped": 4}}}]') == \
        {"swp1": {"all": {"drops": 7}}}


def test_linux_tc_ecn_marks_summed_per_device():
    got = C.parse_linux_tc(capture("frr", "linux-tc-s-qdisc-fq-codel-ecn-mark.txt"))
    assert got == {"eth0.2": {"all": {"ecn_marked": 1}}}


# ----------------------------------------------------------------------------------------------- per NOS
def test_commands_and_parse_keep_plan_ports_only():
    cmds = C.commands(get_driver("nvue"), ["swp1", "swp2"])
    assert [c[0] for c in cmds] == ["nv show interface swp1 counters qos", "nv show interface swp2 counters qos",
                                    "nv show interface swp1 qos pfc-watchdog", "nv show interface swp2 qos pfc-watchdog"]
    answers = {"show pfc counters": capture("sonic", "sonic-utilities-show-pfc-counters.txt"),
               "show pfcwd stats": capture("sonic", "sonic-utilities-show-pfcwd-stats.txt")}
    got = C.parse(get_driver("dell_sonic"), answers, ["Ethernet0"])
    assert list(got) == ["Ethernet0"]
    assert got["Ethernet0"]["3"] == {"pfc_rx": 203, "pfc_tx": 213, "wd_state": "stormed", "wd_storms": 1, "wd_restores": 0}


@pytest.mark.parametrize("platform", sorted(DRIVERS))
def test_every_platform_has_commands_and_evidence(platform):
    assert C.commands(get_driver(platform), ["x1"])
    ev = C.evidence(get_driver(platform))
    assert set(ev) == set(C.COUNTERS) and set(ev.values()) <= {"verified", "unverified", None}
    assert any(ev.values())


# ----------------------------------------------------------------------------------------------- the lab simulators
def test_simulator_prints_what_the_parsers_read_from_real_captures():
    """The lab's counter shows (tests/lab/switches/counters_show.py) print the captures' layouts: the parsers that
    read the real captures read injected values back from them."""
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))
    import counters_show as S
    table = {"Ethernet1": {"3": {"pfc_rx": 12345, "pfc_tx": 2, "ecn_marked": 9, "drops": 4, "drop_bytes": 4096,
                                 "wd_storms": 2, "wd_restores": 1, "wd_state": "stormed"}}}
    ports = ["Ethernet0", "Ethernet1"]
    got = C.merge(C.parse_sonic_pfc(S.sonic_pfc(ports, table)), C.parse_sonic_queue(S.sonic_queue(ports, table)),
                  C.parse_sonic_wred(S.sonic_queue(ports, table, wred=True)), C.parse_sonic_pfcwd(S.sonic_pfcwd(ports, table)))
    assert got["Ethernet1"]["3"] == table["Ethernet1"]["3"]
    assert got["Ethernet0"]["3"] == {"pfc_rx": 0, "pfc_tx": 0, "ecn_marked": 0, "drops": 0, "drop_bytes": 0}
    # same header and rule shapes as the sonic-utilities output
    real = capture("sonic", "sonic-utilities-show-pfc-counters.txt").splitlines()
    sim = S.sonic_pfc(["Ethernet0"], {}).splitlines()
    assert sim[0].split() == real[0].split() and set(sim[1]) == set(real[1])
    nv = {"swp2": {"3": {"pfc_rx": 77, "pfc_tx": 1, "drops": 3, "drop_bytes": 10, "wd_storms": 1, "wd_state": "DEADLOCK"},
                   "0": {"ecn_marked": 5}}}
    got = C.merge(C.parse_nvue_counters_qos(S.nvue_counters_qos("swp2", nv), "swp2"),
                  C.parse_nvue_pfc_watchdog(S.nvue_pfc_watchdog("swp2", nv), "swp2"))["swp2"]
    assert got["3"] == {"pfc_rx": 77, "pfc_tx": 1, "drops": 3, "drop_bytes": 10, "wd_storms": 1, "wd_state": "DEADLOCK"}
    assert got["all"] == {"ecn_marked": 5}
    real_nv = [ln.split() for ln in capture("nvue", "cl-nv-show-interface-swp1-counters-qos.txt").splitlines()[1:]]
    assert [ln.split() for ln in S.nvue_counters_qos("swp1", {}).splitlines()] == real_nv
    assert C.parse_eos_pfc_watchdog(S.eos_pfc_watchdog_json(table)) == {"Ethernet1": {"3": {"wd_storms": 2, "wd_restores": 1}}}
    # EOS: the JSON keys of ANTA's fixtures
    assert C.parse_eos_pfc(S.eos_pfc_json([("Ethernet1", 12345, 2)])) == {"Ethernet1": {"all": {"pfc_rx": 12345, "pfc_tx": 2}}}
    assert C.parse_eos_ecn(S.eos_ecn_json(ports, table))["Ethernet1"]["3"] == {"ecn_marked": 9}
    import json
    real = json.loads(capture("eos", "anta-show-qos-interfaces-ecn-counters-queue-json.json"))
    sim = json.loads(S.eos_ecn_json(["Ethernet1"], {}))
    assert set(sim) == set(real) and set(sim["intfQueueCounters"]["Ethernet1"]) == {"queueCounters"}
    assert all(isinstance(v, str) for v in sim["intfQueueCounters"]["Ethernet1"]["queueCounters"].values())


def test_community_sonic_reads_the_sonic_utilities_tables_in_its_login_shell():
    """community_sonic lands in bash: the same sonic-utilities commands, sent as they are (no klish hop), parsed
    by the parsers checked on sonic-utilities' own test outputs."""
    cmds = C.commands(get_driver("community_sonic"), ["Ethernet0"])
    assert [c[0] for c in cmds] == [c[0] for c in C.commands(get_driver("dell_sonic"), ["Ethernet0"])]
    assert set(c[2] for c in cmds) == {"cli"}
    answers = {"show pfc counters": capture("sonic", "sonic-utilities-show-pfc-counters.txt"),
               "show pfcwd stats": capture("sonic", "sonic-utilities-show-pfcwd-stats.txt")}
    assert C.parse(get_driver("community_sonic"), answers, ["Ethernet0"]) == C.parse(get_driver("dell_sonic"), answers, ["Ethernet0"])
    assert C.parse(get_driver("community_sonic"), answers, ["Ethernet0"])["Ethernet0"]["3"]["pfc_rx"] == 203
