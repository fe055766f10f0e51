# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Glue shared by the controller-side modules that read the plan (or, standalone, plan the intent)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import traceback

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import load_plan

# argument_spec entries and AnsibleModule keyword arguments of doc fragment aifabric.roce.fabric.
PLAN_ARGUMENTS = dict(plan=dict(type="path"), fabric=dict(type="dict"))
PLAN_CONSTRAINTS = dict(mutually_exclusive=[("plan", "fabric")], required_one_of=[("plan", "fabric")])


def plan_or_fail(module):
    """The plan read from module.params['plan'], or computed from module.params['fabric'];
    fail_json naming every problem (path, message, fix) or the missing plan file."""
    if module.params.get("plan"):
        try:
            return load_plan(module.params["plan"])
        except (IOError, OSError, ValueError) as exc:
            module.fail_json(msg="cannot read the plan: %s" % exc)
    try:
        return build_plan(module.params["fabric"])
    except FabricError as exc:
        module.fail_json(msg=str(exc), problems=[p.as_dict() for p in exc.problems])
    except Exception as exc:  # noqa: BLE001 - a planner bug must still fail the task cleanly, plan nothing
        module.fail_json(msg="the planner failed on this fabric (a bug, please report it with the fabric): %s: %s"
                         % (type(exc).__name__, exc), exception=traceback.format_exc())
