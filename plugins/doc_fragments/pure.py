# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The attributes of a module that only computes (plans, orders, renders): one place instead of a copy per module.
    # A module says what it renders instead of a diff by giving diff_mode's description itself.
    DOCUMENTATION = r"""
attributes:
  check_mode:
    support: full
    description: Pure computation; same result in check mode.
  diff_mode:
    support: none
    description: Nothing changes.
"""
