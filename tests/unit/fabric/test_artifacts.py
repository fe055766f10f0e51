import csv
import io

from ansible_collections.aifabric.roce.plugins.module_utils.nos.offline import switch_files
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.artifacts import DIAGRAM_SWITCH_LIMIT, render_all, topology_dot
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan

from .intents import lab, small


def test_artifact_set_for_the_lab():
    # plan.json and the per-device slices belong to the plan (planstore); artifacts never repeat them.
    files = render_all(build_plan(lab()), switch_files)
    assert sorted(f for f in files if "/" not in f) == ["cabling.csv", "report.md", "topology.dot"]
    assert sorted(f for f in files if "/" in f) == ["leafs/leaf%d-bindings.csv" % i for i in range(4)] + [
        "switches/leaf%d.cfg" % i for i in range(4)] + ["switches/spine1.cfg", "switches/spine2.cfg"]


def test_cabling_csv_has_a_row_per_cable():
    files = render_all(build_plan(lab()), switch_files)
    rows = list(csv.DictReader(io.StringIO(files["cabling.csv"])))
    assert len(rows) == 32
    assert rows[0] == {"label": "H-gpu01-R0", "kind": "host-leaf", "a_device": "gpu01", "a_port": "rail0",
                       "b_device": "leaf0", "b_port": "Ethernet0", "speed_gbps": "100"}


def test_binding_csv_lists_excluded_destinations():
    rows = list(csv.DictReader(io.StringIO(render_all(build_plan(lab()), switch_files)["leafs/leaf1-bindings.csv"])))
    assert rows[3]["ingress"] == "Ethernet4" and rows[3]["uplink"] == "Ethernet12"
    assert rows[3]["exclude_destinations"] == "10.101.0.0/29"


def test_report_names_sizing_and_every_leaf():
    report = render_all(build_plan(lab()), switch_files)["report.md"]
    assert "| leafs | 4 |" in report and "| spines (planes) | 2 (1) |" in report
    for leaf in ("leaf0", "leaf1", "leaf2", "leaf3"):
        assert "| %s |" % leaf in report


def test_diagram_is_per_server_for_small_and_per_group_for_large_fabrics():
    dot = topology_dot(build_plan(lab()))
    assert '"leaf0" -> "gpu01";' in dot and '"spine1" -> "leaf0" [label="2x"' in dot
    big = topology_dot(build_plan(small(servers=40, spg=8)))
    assert '"group5"' in big and '"h040"' not in big


def test_diagram_collapses_switches_into_groups_and_planes_past_the_limit():
    plan = build_plan(small(servers=8 * 16, rails=8, spg=8, spines=8))
    assert len(plan["leafs"]) + len(plan["spines"]) > DIAGRAM_SWITCH_LIMIT
    dot = topology_dot(plan)
    assert "\"plane1\"" in dot and "\"leafs1\"" in dot and "\"leafs16\"" in dot
    assert not any('"%s"' % name in dot for name in plan["leafs"])
    uplinks = sum(len(leaf["uplinks"]) for leaf in plan["leafs"].values())
    counted = sum(int(line.split('label="')[1].split("x")[0]) for line in dot.splitlines() if '"plane' in line and "->" in line)
    assert counted == uplinks


def test_rendering_is_deterministic():
    assert render_all(build_plan(lab()), switch_files) == render_all(build_plan(lab()), switch_files)


def test_every_switch_gets_its_rendered_config_offline():
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
    plan = build_plan(lab())
    files = render_all(plan, switch_files)
    switches = sorted(list(plan["leafs"]) + list(plan["spines"]))
    assert sorted(n[len("switches/"):-len(".cfg")] for n in files if n.startswith("switches/")) == switches
    eos = files["switches/leaf1.cfg"]
    # the full config to push (EOS defaults included), after a comment header naming the platform
    body = "".join(l + "\n" for l in eos.splitlines() if not l.startswith("!"))
    # with the underlay, which the EOS driver renders (interfaces first sorted by name: Ethernet1 opens with its switchport)
    assert body == get_driver("eos").render_explicit(plan["leafs"]["leaf1"], plan["qos"], ("qos", "mtu", "pbr", "underlay"))
    assert "router bgp 4200001001\n" in eos and "interface Vlan100\n" in eos
    assert "interface Ethernet1\n   switchport\n   switchport access vlan 100\n   switchport mode access\n   mtu 9214\n" in eos
    assert eos.startswith("! leaf1: Arista EOS")
    nvue = files["switches/leaf2.cfg"]
    assert nvue.startswith("# leaf2:") and "nv set interface swp1 link mtu 9216\n" in nvue
    assert "nv set qos traffic-pool default-lossless memory-percent 50\n" in nvue
    assert "interface Ethernet1/1\n" in files["switches/leaf3.cfg"]
    # AsterNOS is unverified: its config says so line by line
    assert "! unverified: port_naming" in files["switches/leaf0.cfg"]


def test_report_shows_unverified_platforms():
    report = render_all(build_plan(lab()), switch_files)["report.md"]
    section = report[report.index("## Platforms"):]
    assert "| asternos | 1 | **unverified** |" in section and "| eos | 3 | verified | - |" in section and "| nvue | 1 | verified | - |" in section
    assert "Unverified on `asternos` (leaf0):" in section and "Unverified on `eos`" not in section


def test_community_sonic_switches_get_their_config_db_as_json():
    """plan.yml on community_sonic: switches/<switch>.json holds the managed CONFIG_DB tables as `show
    runningconfiguration all` prints them (json.dumps indent 4, sorted), and the driver reads it back as the intent."""
    import json
    from ..nos.helpers import plan_on_platform
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
    plan = plan_on_platform("lab", "community_sonic")
    files = render_all(plan, switch_files)
    assert not [n for n in files if n.startswith("switches/") and n.endswith(".cfg")]
    text = files["switches/leaf0.json"]
    tables = json.loads(text)
    assert text == json.dumps(tables, indent=4, sort_keys=True) + "\n"
    assert {"PORT_QOS_MAP", "DSCP_TO_TC_MAP", "BGP_NEIGHBOR", "ACL_RULE"} <= set(tables)
    drv = get_driver("community_sonic")
    leaf = plan["leafs"]["leaf0"]
    assert drv.parse(text, leaf, drv.sections) == drv.render(leaf, plan["qos"], drv.sections)
    assert "BGP_NEIGHBOR" in json.loads(files["switches/spine1.json"])
