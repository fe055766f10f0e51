# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin behind aifabric.roce.rdma_preflight: the check is pure (facts in, findings out), so it runs in
the controller's worker instead of a round trip to the host (issue 28: a no-op site.yml paid one module call per
host for it). Same arguments, result and failures as the module."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

from ansible.plugins.action import ActionBase

from ansible_collections.aifabric.roce.plugins.module_utils import bounds
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError
from ansible_collections.aifabric.roce.plugins.module_utils.host.preflight import ARGUMENT_SPEC, run


class ActionModule(ActionBase):
    """A pure module's logic run in the controller's worker: ``argument_spec`` and ``compute`` are what a subclass
    changes (action rdma_preflight_report)."""
    TRANSFERS_FILES = False
    _requires_connection = False
    argument_spec = ARGUMENT_SPEC
    module_name = "rdma_preflight"

    def compute(self, args):
        return run(args)

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=copy.deepcopy(self.argument_spec))
        # task args carry Ansible's tagged types; the logic wants plain JSON data, as the module gets it
        args = json.loads(json.dumps(args, default=str))
        problems = bounds.check(self.module_name, args, self.argument_spec)
        if problems:
            result.update(failed=True, msg="; ".join(problems), problems=problems)
            return result
        try:
            result.update(self.compute(args))
        except RunError as exc:
            result.update(failed=True, msg=str(exc))
        return result
