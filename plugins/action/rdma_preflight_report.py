# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin behind aifabric.roce.rdma_preflight_report: the fleet summary in the controller's process.

As a module delegated to localhost it cost a Python start and the Ansible imports on every run (about 0.4 CPU s on
the 2-core machine, the largest single item of a no-op host phase at the lab); the files go to the controller either
way. Same arguments, result, check mode and diff as the module (plugins/module_utils/host/preflight_report.py).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

from ansible.plugins.action import ActionBase

from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError
from ansible_collections.aifabric.roce.plugins.module_utils.host.preflight_report import ARGUMENT_SPEC, run


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=copy.deepcopy(ARGUMENT_SPEC))
        # task args carry Ansible's tagged types; the summary wants plain JSON data, as the module gets it
        args = json.loads(json.dumps(args, default=str))
        try:
            result.update(run(args, bool(self._task.check_mode)))
        except RunError as exc:
            result.update(failed=True, msg=str(exc))
        return result
