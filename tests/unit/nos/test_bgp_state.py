"""BGP session state of the vendor NOSes (nos/bgp_state.py), parsed from real captures (tests/fixtures/switches/SOURCE.md)
and judged against the plan as on FRR: every planned neighbor Established with the planned remote AS, no unplanned
session. Each NOS: all up passes; a session down, a wrong remote AS, an unplanned peer and a missing peer fail."""
import json
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos import bgp_state, sonic_db
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "switches")


def _load(*path):
    with open(os.path.join(FIXTURES, *path)) as handle:
        return handle.read()


EOS = _load("eos", "napalm-eos-show-ip-bgp-summary-vrf-all.json")
NXOS_SHUT = _load("nxos", "napalm-nxos-show-bgp-all-summary-vrf-all-admin-shut.json")
NXOS_EVPN = _load("nxos", "napalm-nxos-show-bgp-all-summary-vrf-all-l2vpn.json")
NVUE_512 = _load("nvue", "cl5.12-nv-show-vrf-default-router-bgp-neighbor.txt")
NVUE_514 = _load("nvue", "cl5.14-nv-show-vrf-default-router-bgp-neighbor.txt")
SONIC = _load("sonic", "sonic-utilities-show-ip-bgp-summary.txt")
SONIC_NONE = _load("sonic", "sonic-utilities-show-ip-bgp-summary-no-neighbor.txt")


def intent(*neighbors):
    return {"bgp": {"neighbors": [{"address": a, "remote_as": asn, "peer": "spine", "port": "p%d" % i}
                                  for i, (a, asn) in enumerate(neighbors)]}}


def by_probe(findings):
    return dict((f["probe"], f) for f in findings)


# --- parsers on the captures ---------------------------------------------------------------------------------------
def test_eos_summary_reads_state_and_as_of_each_default_vrf_peer():
    assert bgp_state.parse_eos(EOS) == {"10.0.0.1": {"state": "Established", "remote_as": 65002},
                                        "10.0.0.3": {"state": "Active", "remote_as": 65003}}


def test_as_numbers_in_asdot_and_blank():
    assert bgp_state.as_number("65001.1028") == 65001 * 65536 + 1028
    assert bgp_state.as_number("4200000000") == 4200000000
    assert bgp_state.as_number("") is None and bgp_state.as_number(65000) == 65000


def test_nxos_summary_reads_one_vrfs_ipv4_unicast_neighbors():
    # the capture's IPv4 unicast sessions are in VRFs; the parser is the same for every VRF name
    assert bgp_state.parse_nxos(NXOS_SHUT, "RED-PRE-PROD") == {
        "10.1.1.177": {"state": "Admin (Shut)", "remote_as": 64862},
        "10.1.1.179": {"state": "Established", "remote_as": 64862}}
    # the default VRF holds only L2VPN EVPN sessions there: not IPv4 unicast sessions, so none
    assert bgp_state.parse_nxos(NXOS_SHUT) == {} and bgp_state.parse_nxos(NXOS_EVPN) == {}


def test_nxos_single_row_comes_as_an_object():
    """NX-OS prints a table of one row as an object (the captures' ROW_saf): the same goes for one neighbor."""
    data = json.loads(NXOS_SHUT)
    vrf = next(r for r in data["TABLE_vrf"]["ROW_vrf"] if r.get("vrf-name-out") == "RED-PRE-PROD" and "TABLE_af" in r)
    saf = vrf["TABLE_af"]["ROW_af"][0]["TABLE_saf"]["ROW_saf"]
    assert isinstance(saf, dict)
    saf["TABLE_neighbor"]["ROW_neighbor"] = saf["TABLE_neighbor"]["ROW_neighbor"][1]
    assert bgp_state.parse_nxos(json.dumps(data), "RED-PRE-PROD") == {
        "10.1.1.179": {"state": "Established", "remote_as": 64862}}


def test_nvue_table_5_12_reads_neighbors_with_the_as_blank_while_idle():
    assert bgp_state.parse_nvue(NVUE_512) == {
        "peerlink.4094": {"state": "established", "remote_as": 65102},
        "swp51": {"state": "established", "remote_as": 65199},
        "swp52": {"state": "established", "remote_as": 65199},
        "swp53": {"state": "idle", "remote_as": None},
        "swp54": {"state": "idle", "remote_as": None}}


def test_nvue_table_5_14_reads_wide_uptimes_and_connect():
    peers = bgp_state.parse_nvue(NVUE_514)
    assert sorted(peers) == ["swp%d" % n for n in range(1, 7)]
    assert peers["swp1"] == {"state": "connect", "remote_as": 65101}
    assert peers["swp6"] == {"state": "established", "remote_as": 65254}   # its uptime "1 day, 2:34:17" has blanks


def test_nvue_neighbor_without_an_ipv4_unicast_line_is_not_an_ipv4_session():
    lines = NVUE_514.splitlines()
    cut = [ln.replace("ipv4-unicast", "ipv6-unicast") if ln.startswith("swp2 ") else ln for ln in lines]
    assert "swp2" not in bgp_state.parse_nvue("\n".join(cut))


def test_sonic_table_reads_the_prefix_count_as_established_and_the_state_otherwise():
    peers = sonic_db.parse_bgp_summary(SONIC)
    assert len(peers) == 24
    assert peers["10.0.0.1"] == {"state": "Established", "remote_as": 65200}
    assert peers["10.0.0.63"] == {"state": "Active", "remote_as": 64016}
    assert sorted(a for a, p in peers.items() if p["state"] == "Established") == [
        "10.0.0.%d" % n for n in (1, 13, 17, 21, 25, 29, 5, 9)]
    # SONiC's table without a neighbor (its header laid out otherwise): no session
    assert sonic_db.parse_bgp_summary(SONIC_NONE) == {}


# --- judged against the plan ---------------------------------------------------------------------------------------
CASES = {
    # platform: (output, a peer up with its AS, a peer down with its AS and state as printed)
    "eos": (EOS, ("10.0.0.1", 65002), ("10.0.0.3", 65003, "Active")),
    "nvue": (NVUE_514, ("swp3", 65103), ("swp1", 65101, "connect")),
    "community_sonic": (SONIC, ("10.0.0.1", 65200), ("10.0.0.33", 64001, "Active")),
}


@pytest.mark.parametrize("platform", sorted(CASES))
def test_planned_sessions_up_pass_and_each_fault_fails(platform):
    text, (up, up_as), (down, down_as, down_state) = CASES[platform]
    # every session the capture shows up, planned as shown: all pass (the judge on the established ones)
    peers = get_driver(platform).bgp_summary.parser(text)
    shown_up = dict((a, p) for a, p in peers.items() if bgp_state.established(p["state"]))
    assert up in shown_up and down not in shown_up
    passed = bgp_state.judge(intent(*[(a, p["remote_as"]) for a, p in shown_up.items()]), shown_up)
    assert [f["status"] for f in passed] == ["ok"] * (len(shown_up) + 1)
    assert passed[-1]["actual"] == "%d of %d Established" % (len(shown_up), len(shown_up))
    # a session down: named with the NOS's state
    f = by_probe(bgp_state.findings(get_driver(platform), intent((up, up_as), (down, down_as)), text))
    assert f["bgp %s" % up]["status"] == "ok" and f["bgp %s" % down]["status"] == "fail"
    assert f["bgp %s" % down]["actual"] == "%s, AS %d" % (down_state, down_as)
    assert f["bgp_sessions"]["status"] == "fail"
    # a wrong remote AS
    f = by_probe(bgp_state.findings(get_driver(platform), intent((up, up_as + 1)), text))
    assert f["bgp %s" % up]["status"] == "fail" and f["bgp %s" % up]["actual"].endswith("AS %d" % up_as)
    # an unplanned peer: the session the plan does not have
    f = by_probe(bgp_state.findings(get_driver(platform), intent((up, up_as)), text))
    assert f["bgp %s" % down]["expected"] == "no session (not in the plan)" and f["bgp_sessions"]["status"] == "fail"
    # a missing peer
    f = by_probe(bgp_state.findings(get_driver(platform), intent((up, up_as), ("10.9.9.9", 65999)), text))
    assert f["bgp 10.9.9.9"]["actual"] == "not configured" and f["bgp_sessions"]["status"] == "fail"


def test_nxos_judged_on_the_capture():
    peers = bgp_state.parse_nxos(NXOS_SHUT, "RED-PRE-PROD")
    f = by_probe(bgp_state.judge(intent(("10.1.1.177", 64862), ("10.1.1.179", 64862)), peers))
    assert f["bgp 10.1.1.179"]["status"] == "ok"
    assert f["bgp 10.1.1.177"]["status"] == "fail" and f["bgp 10.1.1.177"]["actual"] == "Admin (Shut), AS 64862"
    assert f["bgp_sessions"]["actual"] == "1 of 2 Established"
    wrong = by_probe(bgp_state.judge(intent(("10.1.1.179", 64863)), peers))
    assert wrong["bgp 10.1.1.179"]["status"] == "fail" and wrong["bgp 10.1.1.177"]["expected"].startswith("no session")
    # the default VRF of the capture has no IPv4 unicast session: every planned one is missing, never passed
    f = by_probe(bgp_state.findings(get_driver("nxos"), intent(("10.1.1.134", 64861)), NXOS_EVPN))
    assert f["bgp 10.1.1.134"]["actual"] == "not configured" and f["bgp_sessions"]["status"] == "fail"


def test_sonic_without_neighbors_every_planned_session_is_missing():
    f = by_probe(bgp_state.findings(get_driver("community_sonic"), intent(("10.0.0.1", 65200)), SONIC_NONE))
    assert f["bgp 10.0.0.1"]["actual"] == "not configured" and f["bgp_sessions"]["actual"] == "0 of 0 Established"
    assert f["bgp_sessions"]["status"] == "fail"


def test_nvue_idle_session_shows_no_as_and_fails():
    f = by_probe(bgp_state.findings(get_driver("nvue"), intent(("swp51", 65199), ("swp53", 65199)), NVUE_512))
    assert f["bgp swp53"]["status"] == "fail" and f["bgp swp53"]["actual"] == "idle, AS not shown"
    assert f["bgp swp51"]["status"] == "ok"


@pytest.mark.parametrize("platform, answer", [
    ("eos", "% Invalid input (at token 1: 'ip')"),
    ("nxos", "% Invalid command at '^' marker."),
    ("nvue", "Error: Invalid command: nv show vrf default router bgp neighbor"),
    ("nvue", ""),
    ("eos", ""),
    ("community_sonic", "Usage: summary [OPTIONS]\nTry 'summary --help' for help.\n\n"
                        "Error: bgp summary from bgp container not in json format\n"),
])
def test_an_answer_that_is_not_the_summary_fails_never_passes(platform, answer):
    (got,) = bgp_state.findings(get_driver(platform), intent(("10.0.0.1", 65002)), answer)
    assert got["probe"] == "bgp_sessions" and got["status"] == "fail" and "cannot read" in got["message"]
    assert get_driver(platform).bgp_summary.command in got["expected"]


def test_an_empty_plan_with_an_empty_summary_still_says_what_ran():
    """A spine or leaf whose plan has no neighbor and whose switch shows none passes with 0 of 0: nothing was
    expected. Any session it shows is unplanned and fails."""
    assert bgp_state.findings(get_driver("eos"), intent(), '{"vrfs": {}}')[-1]["status"] == "ok"
    assert bgp_state.findings(get_driver("eos"), intent(), EOS)[-1]["status"] == "fail"
