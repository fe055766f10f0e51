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
