# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin behind aifabric.roce.rdma_preflight_report: the fleet summary in the controller's process.

As a module delegated to localhost it cost a Python start and the Ansible imports on every run (about 0.4 CPU s on
the 2-core machine, the largest single item of a no-op host phase at the lab); the files go to the controller either
way. Same arguments, result, check mode and diff as the module (plugins/module_utils/host/preflight_report.py).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.aifabric.roce.plugins.action.rdma_preflight import ActionModule as PureAction
from ansible_collections.aifabric.roce.plugins.module_utils.host.preflight_report import ARGUMENT_SPEC, run


class ActionModule(PureAction):
    argument_spec = ARGUMENT_SPEC
    module_name = "rdma_preflight_report"

    def compute(self, args):
        return run(args, bool(self._task.check_mode))
