# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Glue shared by the controller-side modules that plan from the fabric intent."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import traceback

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan


def plan_or_fail(module):
    """The plan of module.params['fabric'], or fail_json naming every problem (path, message, fix)."""
    try:
        return build_plan(module.params["fabric"])
    except FabricError as exc:
        module.fail_json(msg=str(exc), problems=[p.as_dict() for p in exc.problems])
    except Exception as exc:  # noqa: BLE001 - a planner bug must still fail the task cleanly, plan nothing
        module.fail_json(msg="the planner failed on this fabric (a bug, please report it with the fabric): %s: %s"
                         % (type(exc).__name__, exc), exception=traceback.format_exc())
