# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The plan (or, standalone, the fabric intent) shared by every controller-side planning module.
    DOCUMENTATION = r"""
options:
  plan:
    description:
      - Path of the plan written by role aifabric.roce.plan (C(plan.json), or the directory holding it),
        normally C(hostvars['localhost'].aifabric_plan.path). The module reads it instead of planning again.
      - Exactly one of O(plan) and O(fabric) is required.
    type: path
  fabric:
    description:
      - The fabric intent (docs/fabric-schema.md), for standalone use without role aifabric.roce.plan, in which case
        the module plans it itself. Playbooks pass O(plan) instead, so a run plans once.
      - It is validated as a whole first; bad input fails with one line per problem in C(msg) and the
        list C(problems) (C(path), C(message), C(fix)), and nothing else runs.
    type: dict
"""
