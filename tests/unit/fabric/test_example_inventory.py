"""inventories/example (the real-gear starting point, playbooks/new_fabric.yml copies it) plans
cleanly, names exactly the planned devices, and carries nothing lab-only."""
import os

import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "inventories", "example")
LAB_ONLY = ("podman", "/opt/aifabric-hw", "127.0.0.1", "_persist: false", "aifabric-lab", ": admin")


def _load(*parts):
    with open(os.path.join(EXAMPLE, *parts)) as handle:
        return yaml.safe_load(handle)


def test_example_plans_and_its_inventory_names_the_planned_devices():
    plan = build_plan(_load("group_vars", "all", "fabric.yml")["fabric"])
    hosts = set(_load("hosts.yml")["gpu_hosts"]["hosts"])
    children = _load("switches.yml")["switches"]["children"]
    switches = set(children["leafs"]["hosts"]) | set(children["spines"]["hosts"])
    assert hosts == set(plan["hosts"])
    assert switches == set(plan["leafs"]) | set(plan["spines"])


def test_example_has_no_lab_only_settings_and_no_clear_text_password():
    for folder, _dirs, files in os.walk(EXAMPLE):
        for name in files:
            with open(os.path.join(folder, name)) as handle:
                text = handle.read()
            assert not [word for word in LAB_ONLY if word in text], (name, [w for w in LAB_ONLY if w in text])
    connection = _load("group_vars", "switches", "connection.yml")
    assert "vault_switch_password" in connection["ansible_password"] and "ANSIBLE_NET_PASSWORD" in connection["ansible_password"]
    assert _load("group_vars", "gpu_hosts", "connection.yml")["ansible_become"] is True


def test_the_example_says_its_server_group_is_sized_full_in_report_md():
    """4 servers in a group of 32 (issue 41 item 6): the plan and report.md say the leafs' uplinks, the spines and
    the fabric-side optics are counted for 32 servers, how many leaf downlinks have no server yet, and the fix."""
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.artifacts import report_markdown
    plan = build_plan(_load("group_vars", "all", "fabric.yml")["fabric"])
    warning = ("server group 1 holds 4 of its 32 servers: its 8 leafs, their 32 uplinks each, the spines and the "
               "fabric-side optics are sized for the full group (growth to 32 servers without recabling the spine "
               "side): 224 of its 256 leaf downlinks have no server yet. To size for today's servers only: "
               "fabric.servers.servers_per_group: 4, or fewer uplink ports in the leaf model")
    assert plan["sizing"]["warnings"][0] == warning
    assert "- **%s**" % warning in report_markdown(plan)
    fabric = _load("group_vars", "all", "fabric.yml")["fabric"]
    fabric["servers"]["servers_per_group"] = 4   # the fix it names: no such warning, 4 downlinks per leaf
    assert not [w for w in build_plan(fabric)["sizing"]["warnings"] if w.startswith("server group")]


def test_a_port_name_that_is_not_the_platforms_naming_is_said_at_plan_time():
    """Issue 41 item 4: the example's port_name Ethernet{port} on community SONiC (which names a port by its first
    lane) or on its own dell_sonic leafs (standard naming Eth1/<port>) is named at plan time with the platform's rule
    from fabric/platforms.py; on EOS (Ethernet<port> on single-lane ports) it is the platform's naming: no word."""
    fabric = _load("group_vars", "all", "fabric.yml")["fabric"]
    naming = [w for w in build_plan(fabric)["sizing"]["warnings"] if "port_name" in w]
    assert naming == ["fabric.switch_models.leaf-64x400.port_name 'Ethernet{port}' names the leaf ports of dell_sonic "
                      "switches Ethernet1, Ethernet2, ...; dell_sonic names them by standard naming `Eth1/<port>`; "
                      "breakout `Eth1/<port>/<sub>` (e.g. Eth1/5; with this model's lanes 1: Eth1/1, Eth1/2, ...). Check "
                      "them against the switch (its interface list), or leave port_name out for the platform's naming "
                      "and set lanes to the cage's serdes lanes"]
    fabric["leafs"]["platform"] = "community_sonic"
    fabric["switch_models"]["leaf-64x400"]["lanes"] = 8
    naming = [w for w in build_plan(fabric)["sizing"]["warnings"] if "port_name" in w]
    assert len(naming) == 1 and "community_sonic names them by SONiC native naming `Ethernet<first lane index>`" in naming[0]
    assert "with this model's lanes 8: Ethernet0, Ethernet8, ...)" in naming[0] and "set lanes" not in naming[0]
    fabric["leafs"]["platform"] = "eos"
    fabric["switch_models"]["leaf-64x400"]["lanes"] = 1
    assert not [w for w in build_plan(fabric)["sizing"]["warnings"] if "port_name" in w]
    del fabric["switch_models"]["leaf-64x400"]["port_name"]   # the platform's own naming: nothing to check
    fabric["leafs"]["platform"] = "community_sonic"
    assert not [w for w in build_plan(fabric)["sizing"]["warnings"] if "port_name" in w]


def test_growing_the_example_past_one_group_names_every_problem_at_once():
    """40 servers (issue 41 item 6): the spine model's capacity and the leaf{rail} name collision come in one
    answer (before, the collision surfaced only after the spines were fixed), each with its fix."""
    import pytest
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError
    fabric = _load("group_vars", "all", "fabric.yml")["fabric"]
    fabric["servers"]["count"] = 40
    with pytest.raises(FabricError) as err:
        build_plan(fabric)
    text = str(err.value)
    assert "(2 problems, nothing was planned or applied)" in text, text
    assert "fabric.spines.model: each spine needs 256 leaf-facing ports" in text
    assert ("fabric.leafs.name_pattern: the leaf of group 1 rail 0 and the leaf of group 2 rail 0 are both named 'leaf0' "
            "(name_pattern 'leaf{rail}'). Fix: put {group} in it (the fabric has 2 server groups), e.g. "
            "'leaf{group}-{rail}'") in text
    fabric["leafs"]["name_pattern"] = "leaf{group}-{rail}"
    fabric["spines"]["count"] = 4
    plan = build_plan(fabric)   # both fixes applied: it plans
    assert "leaf2-7" in plan["leafs"] and len(plan["leafs"]) == 16
