"""Shared helpers: the lab plan's host intents and the captured `ip -j` fixtures."""
import copy
import json
import os

import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
FIXTURES = os.path.join(HERE, "fixtures")
_PLAN = {}


def lab_intent(host="gpu04"):
    if not _PLAN:
        with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml"), encoding="utf-8") as handle:
            _PLAN.update(build_plan(yaml.safe_load(handle)["fabric"]))
    return copy.deepcopy(_PLAN["hosts"][host])


def fixture(state, name):
    with open(os.path.join(FIXTURES, state, name + ".json"), encoding="utf-8") as handle:
        return json.load(handle)
