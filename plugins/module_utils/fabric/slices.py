# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-device slices of a plan: everything one GPU host or one switch needs, nothing else.

Roles and modules read their own device's slice (``devices/<name>.json`` beside plan.json), so
the controller's cost per device does not grow with the fabric. Pure: no I/O, no Ansible.
"""

from __future__ import annotations

SLICE_KINDS = ("host", "leaf", "spine")


def _common(plan, name, kind, plan_digest):
    return {"name": name, "kind": kind, "fabric": plan["fabric"], "plan_digest": plan_digest,
            "schema_version": plan["schema_version"], "qos": plan["qos"]}


def host_slice(plan, name, plan_digest=""):
    """A GPU host's record (NICs, routes, rules, sysctls, NCCL) with the QoS profile and the
    routing tables / rule priorities the fabric reserves for rails (the host owns exactly these)."""
    record = dict(plan["hosts"][name])
    record.update(_common(plan, name, "host", plan_digest))
    record["routing"] = plan["routing"]
    record["addressing_scheme"] = plan["addressing_scheme"]
    return record


def switch_slice(plan, name, plan_digest=""):
    """A leaf's or spine's record with the QoS profile; ``kind`` says which."""
    if name in plan["leafs"]:
        record, kind = dict(plan["leafs"][name]), "leaf"
    else:
        record, kind = dict(plan["spines"][name]), "spine"
    record.update(_common(plan, name, kind, plan_digest))
    if kind == "leaf":
        record["addressing_scheme"] = plan["addressing_scheme"]
    return record


def device_slices(plan, plan_digest=""):
    """(name, slice) for every device of the plan: hosts, then leafs, then spines."""
    for name in plan["hosts"]:
        yield name, host_slice(plan, name, plan_digest)
    for name in plan["leafs"]:
        yield name, switch_slice(plan, name, plan_digest)
    for name in plan["spines"]:
        yield name, switch_slice(plan, name, plan_digest)
