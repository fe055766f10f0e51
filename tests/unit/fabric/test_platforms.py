"""The platform table: device-true port names per vendor (breakouts included), MTU limits, unverified rows."""

import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric import platforms
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import PLATFORMS, port_name
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.mark.parametrize("platform, lanes, breakout, expected", [
    # EOS: one interface per lane of a multi-lane cage, a logical port named after its first lane (Arista L1 profiles)
    ("eos", 1, 1, ["Ethernet7"]),
    ("eos", 8, 1, ["Ethernet7/1"]),
    ("eos", 8, 2, ["Ethernet7/1", "Ethernet7/5"]),
    ("eos", 8, 4, ["Ethernet7/1", "Ethernet7/3", "Ethernet7/5", "Ethernet7/7"]),
    ("eos", 4, 4, ["Ethernet7/1", "Ethernet7/2", "Ethernet7/3", "Ethernet7/4"]),
    ("eos", 8, 8, ["Ethernet7/%d" % n for n in range(1, 9)]),
    # NX-OS: module 1, sequential breakout sub-ports
    ("nxos", 8, 1, ["Ethernet1/7"]),
    ("nxos", 8, 2, ["Ethernet1/7/1", "Ethernet1/7/2"]),
    ("nxos", 4, 4, ["Ethernet1/7/1", "Ethernet1/7/2", "Ethernet1/7/3", "Ethernet1/7/4"]),
    # Cumulus: swpN, children from s0
    ("nvue", 8, 1, ["swp7"]),
    ("nvue", 8, 2, ["swp7s0", "swp7s1"]),
    ("nvue", 4, 4, ["swp7s0", "swp7s1", "swp7s2", "swp7s3"]),
    # Dell standard naming
    ("dell_sonic", 4, 1, ["Eth1/7"]),
    ("dell_sonic", 8, 2, ["Eth1/7/1", "Eth1/7/2"]),
    # SONiC native: first lane index, 0-based
    ("asternos", 1, 1, ["Ethernet6"]),
    ("asternos", 8, 1, ["Ethernet48"]),
    ("asternos", 8, 2, ["Ethernet48", "Ethernet52"]),
    ("asternos", 4, 4, ["Ethernet24", "Ethernet25", "Ethernet26", "Ethernet27"]),
])
def test_breakout_port_names_per_vendor(platform, lanes, breakout, expected):
    assert [port_name(platform, 7, sub, breakout, lanes) for sub in range(1, breakout + 1)] == expected


def test_every_platform_has_a_driver_agreeing_with_the_table():
    assert sorted(DRIVERS) == sorted(PLATFORMS)
    for name, entry in PLATFORMS.items():
        driver = DRIVERS[name]()
        assert driver.device_type == entry["device_type"], name
        assert driver.show_running == entry["read_command"], name
        for feature in platforms.FEATURES:
            assert entry["features"][feature]["status"] in (platforms.VERIFIED, platforms.UNVERIFIED)
            assert entry["features"][feature]["source"], (name, feature)


def test_unverified_rows_are_listed():
    assert platforms.is_verified("eos")
    assert not platforms.is_verified("asternos")
    items = [item for item, _source in platforms.unverified("asternos")]
    # Easy RoCE REST: the plan's port names and the REST request details no readable page shows; the switch
    # computes the lossless settings (documented), MTU and PPD are not configured without the opt-in
    assert items == ["port_naming", "transaction"]
    assert platforms.not_rendered("asternos") == ["pfc_watchdog", "ets", "pbr"]


def test_eos_mtu_ceiling_is_9214():
    assert platforms.max_mtu("eos") == 9214 and platforms.max_mtu("nxos") == 9216


def test_platforms_doc_is_generated_from_the_table():
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.verification import platforms_page
    with open(os.path.join(ROOT, "docs", "platforms.md")) as handle:
        assert handle.read() == platforms_page(), "run tools/gen_docs.py"


def test_the_docs_say_exactly_what_is_verified_per_nos():
    """docs/platforms.md's verification table comes from the tables the code runs on: NX-OS reads PFC only,
    AsterNOS its drops only (verified), switch_validate runs on FRR only so far, EOS has no drain line."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import counters, validation, verification
    page = verification.verification_doc()
    nxos = next(line for line in page.splitlines() if line.startswith("| `nxos` |"))
    assert "| PFC pause rx, PFC pause tx | none | ECN marked, lossless drops" in nxos
    aster = next(line for line in page.splitlines() if line.startswith("| `asternos` |"))
    assert aster.startswith("| `asternos` | lossless drops, dropped bytes | PFC pause rx")
    for platform in ("eos", "nxos", "nvue", "dell_sonic", "community_sonic", "asternos", "frr"):
        row = next(line for line in page.splitlines() if line.startswith("| `%s` |" % platform))
        run, not_run = verification.checks_row(get_driver(platform))
        assert set(run) == set(get_driver(platform).checks) and set(run) | set(not_run) == set(validation.CHECKS)
        verified = verification.counters_row(get_driver(platform))[0]
        assert len(verified) == sum(1 for v in get_driver(platform).counter_evidence.values() if v == "verified"), row
    assert "| `eos` |" in page and "none: EOS drains through maintenance mode" in page


def test_no_shipped_inventory_defaults_to_an_unverified_platform():
    import yaml
    for inventory in ("rail512", "lab"):
        with open(os.path.join(ROOT, "inventories", inventory, "group_vars", "all", "fabric.yml")) as handle:
            fabric = yaml.safe_load(handle)["fabric"]
        for role in ("leafs", "spines"):
            assert platforms.is_verified(fabric[role]["platform"]), (inventory, role)


def test_bare_sonic_is_refused_naming_both_families():
    """Breaking change (issue 25): `sonic` was Dell Enterprise SONiC; now one clear error names both families."""
    import yaml
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    with open(os.path.join(root, "inventories", "lab", "group_vars", "all", "fabric.yml")) as handle:
        fabric = yaml.safe_load(handle)["fabric"]
    fabric["spines"]["platform"] = "sonic"
    with pytest.raises(FabricError) as err:
        build_plan(fabric)
    text = str(err.value)
    assert "fabric.spines.platform" in text and "dell_sonic" in text and "community_sonic" in text


def test_readme_switch_table_is_generated_from_the_table():
    """README's first screen lists every NOS with what it does not render and what no source backs; a new platform
    or a newly verified item changes it through tools/gen_docs.py, never by hand."""
    with open(os.path.join(ROOT, "README.md")) as handle:
        readme = handle.read()
    assert readme.count(platforms.README_BEGIN) == 1
    assert platforms.with_readme_table(readme) == readme, "run tools/gen_docs.py"
    table = platforms.readme_table()
    assert all("| `%s` |" % name in table for name in platforms.PLATFORMS)
    assert "| `eos` | Arista EOS | configure session (commit / commit timer / abort) | - | none" in table
    assert "port_naming, transaction |" in next(row for row in table.splitlines() if row.startswith("| `asternos` |"))
