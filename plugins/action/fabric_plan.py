# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin behind aifabric.roce.fabric_plan: plan in the controller process.

Running the planner as a module costs a JSON round trip of the whole plan (at 32K GPUs ~85 % of
the time went to exit_json scrubbing a 57 MB result). Here the library runs in the controller,
writes plan.json and one slice per device, and only a small handle travels back to Ansible
(the way AVD's action plugins call pyavd).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import traceback

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import read_bytes
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import EMPTY_DEST, HANDLE_FILE, intent_digest, write_plan
from ansible_collections.aifabric.roce.plugins.module_utils import bounds

ARGUMENT_SPEC = dict(
    fabric=dict(type="dict", required=True),
    dest=dict(type="path", required=True),
    as_fact=dict(type="bool", default=False),
)


def _plain(value):
    # Task args carry Ansible's tagged types; the planner wants plain JSON data.
    return json.loads(json.dumps(value, default=str))


def _previous_handle(dest):
    data = read_bytes(os.path.join(dest, HANDLE_FILE))
    try:
        return json.loads(data) if data else {}
    except ValueError:
        return {}


def _already_planned(task_vars, dest, digest):
    """The handle and batches this run already computed for the same intent and directory."""
    localhost = (task_vars.get("hostvars") or {}).get("localhost") or {}
    handle = localhost.get("aifabric_plan") or {}
    batches = localhost.get("aifabric_switch_batches")
    if (isinstance(handle, dict) and handle.get("input_digest") == digest and batches is not None
            and handle.get("dir") == os.path.abspath(dest) and os.path.exists(handle.get("path", ""))):
        return _plain(handle), _plain(batches)
    return None


def _summary(handle):
    if not handle:
        return ""
    return "".join("%s: %s\n" % (key, json.dumps(handle.get(key), sort_keys=True))
                   for key in ("fabric", "digest", "counts", "sizing"))


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        fabric = _plain(args["fabric"])
        if not str(args["dest"] or "").strip():
            raise AnsibleActionFail(EMPTY_DEST)
        problems = bounds.check("fabric_plan", {"dest": str(args["dest"])}, ARGUMENT_SPEC)
        if problems:
            raise AnsibleActionFail("; ".join(problems))
        dest = os.path.abspath(os.path.expanduser(args["dest"]))
        digest = intent_digest(fabric)
        reused = _already_planned(task_vars or {}, dest, digest)
        if reused:
            handle, batches = reused
            written, removed = [], []
        else:
            try:
                plan = build_plan(fabric)
            except FabricError as exc:
                result.update(failed=True, msg=str(exc), problems=[p.as_dict() for p in exc.problems])
                return result
            except Exception as exc:  # noqa: BLE001 - a planner bug must still fail the task cleanly, write nothing
                result.update(failed=True, exception=traceback.format_exc(),
                              msg="the planner failed on this fabric (a bug, please report it with the fabric): %s: %s"
                              % (type(exc).__name__, exc))
                return result
            before = _previous_handle(dest)
            try:
                handle, batches, written, removed = write_plan(plan, dest, input_digest=digest)
            except (IOError, OSError, ValueError) as exc:
                raise AnsibleActionFail("cannot write the plan to %s: %s" % (dest, exc))
            if self._task.diff and (written or removed):
                result["diff"] = {"before_header": os.path.join(dest, HANDLE_FILE), "after_header": os.path.join(dest, HANDLE_FILE),
                                  "before": _summary(before), "after": _summary(handle)}
        result.update(changed=bool(written or removed), written=written, removed=removed, reused=bool(reused))
        if not reused and handle.get("sizing", {}).get("warnings"):
            result["warnings"] = list(handle["sizing"]["warnings"])  # shown once per run, as [WARNING]
        if args["as_fact"]:
            result["ansible_facts"] = {"aifabric_plan": handle, "aifabric_switch_batches": batches}
        else:
            result.update(plan=handle, switch_batches=batches)
        return result
