"""What each platform of a plan will not configure and cannot verify (issue 41 item 4), from the drivers' declarations
(nos/capabilities.py): the lab's AsterNOS leaf, community SONiC's PBR opt-in, a verified platform that needs no word,
and a note that follows the driver when its declaration changes."""
import os

import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.artifacts import report_markdown
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.nos import capabilities
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")


def fabric(inventory):
    with open(os.path.join(ROOT, "inventories", inventory, "group_vars", "all", "fabric.yml")) as handle:
        return yaml.safe_load(handle)["fabric"]


def test_the_lab_asternos_leaf_is_named_with_what_it_will_not_get_and_why():
    notes = capabilities.platform_notes(build_plan(fabric("lab")))
    assert [n["platform"] for n in notes] == ["asternos"] and notes[0]["switches"] == ["leaf0"]
    assert [s for s, _why in notes[0]["not_configured"]] == ["mtu", "pbr", "underlay"]
    assert [c for c, _why in notes[0]["not_verified"]] == ["bgp_sessions", "ppd_paths"]
    assert notes[0]["not_verified"][0][1] == get_driver("asternos").bgp_summary.why   # the driver's own reason
    line = capabilities.warning_lines(notes)[0]
    assert line.startswith("platform asternos (leaf0): will not configure port MTU, PPD port binding (policy routes), "
                           "routed underlay (addresses, eBGP) (the asternos driver renders RoCE QoS only); cannot verify "
                           "BGP sessions ("), line


def test_community_sonic_pbr_is_named_until_the_opt_in_and_eos_needs_no_word():
    intent = fabric("example")
    intent["leafs"]["platform"] = "community_sonic"
    plan = build_plan(intent)
    notes = capabilities.platform_notes(plan)
    assert [n["platform"] for n in notes] == ["community_sonic"] and not notes[0]["not_verified"]
    (section, why), = notes[0]["not_configured"]
    assert section == "pbr" and "fabric.community_sonic_pbr: gcu_ignore_acl_rule (8 switches without it)" in why
    page = report_markdown(plan, platform_notes=capabilities.report_lines(notes))
    assert "## What each platform will not configure or cannot verify" in page
    assert "| community_sonic | leaf0, leaf1, leaf2, leaf3 and 4 more | PPD port binding (policy routes): " in page
    intent["community_sonic_pbr"] = "gcu_ignore_acl_rule"
    assert capabilities.platform_notes(build_plan(intent)) == []   # the spines run eos: nothing to say either


def test_a_note_follows_the_drivers_declaration(monkeypatch):
    plan = build_plan(fabric("lab"))
    eos = type(get_driver("eos"))
    monkeypatch.setattr(eos, "sections", ("qos", "mtu", "pbr"))   # as if EOS rendered no underlay
    monkeypatch.setattr(eos, "checks", ("bgp_sessions",))
    note = [n for n in capabilities.platform_notes(plan) if n["platform"] == "eos"][0]
    assert note["switches"] == ["leaf1", "spine1", "spine2"]
    assert note["not_configured"] == [("underlay", "the eos driver renders RoCE QoS, port MTU, PPD port binding "
                                                   "(policy routes) only")]
    assert [c for c, _why in note["not_verified"]] == ["ppd_paths"]
