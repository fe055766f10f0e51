"""Shared by the NOS driver tests: a shipped inventory's plan with every leaf and spine on one platform."""
import os

import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def plan_on_platform(inventory, platform, scheme=None, **extra):
    """Plan of inventories/<inventory> with every switch on ``platform`` (its own port names), optionally
    with another addressing scheme and other fabric keys (``extra``). A fresh plan each call: callers may cache it."""
    with open(os.path.join(ROOT, "inventories", inventory, "group_vars", "all", "fabric.yml")) as handle:
        fabric = yaml.safe_load(handle)["fabric"]
    fabric["leafs"].pop("platform_overrides", None)
    fabric["leafs"]["platform"] = fabric["spines"]["platform"] = platform
    if scheme:
        fabric["addressing"]["scheme"] = scheme
    fabric.update(extra)
    return build_plan(fabric)
