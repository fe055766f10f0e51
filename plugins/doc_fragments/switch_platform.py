# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The switch platform every switch module takes: one NOS driver each (module_utils/nos/registry.py DRIVERS; the
    # argument specs read their choices from it, and tests/unit/nos/test_families.py holds this list to it).
    DOCUMENTATION = r"""
options:
  platform:
    description: Switch platform name from the plan record (its NOS driver, module_utils/nos/registry.py).
    type: str
    required: true
    choices: [asternos, community_sonic, dell_sonic, eos, frr, nvue, nxos]
"""
