# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: gor_audit_entries
short_description: Drift report entries for the PPD bindings GOR has steered
version_added: "0.1.0"
author:
  - aifabric.roce developers (@aifabric)
description:
  - Takes GOR's steer record and returns one drift report entry per steered leaf (check C(gor_steer), status
    C(warn), not drift), each binding an item C(pbr <ingress>) with the planned uplink as expected and the steered
    one as actual, and the message C(steered by GOR because <link> <since>) (since in UTC).
  - Only leafs in O(switches) are reported (the audit's scope).
options:
  _input:
    description: GOR's steer record; empty or null gives no entries.
    type: dict
    required: true
  switches:
    description: The switches in the audit's scope.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Steered bindings as report entries
  ansible.builtin.set_fact:
    gor_entries: "{{ gor_record | aifabric.roce.gor_audit_entries(groups['switches']) }}"
"""

RETURN = r"""
_value:
  description: Drift report entries (M(aifabric.roce.drift_report)).
  type: list
  elements: dict
"""

import datetime

from ansible.errors import AnsibleFilterError

from ansible_collections.aifabric.roce.plugins.module_utils.gor.steer import SteerError, audit_entries


def _utc(epoch):
    return datetime.datetime.fromtimestamp(float(epoch), datetime.timezone.utc).strftime("since %Y-%m-%dT%H:%M:%SZ")


def gor_audit_entries(record, switches):
    try:
        return audit_entries(record or None, switches, _utc)
    except SteerError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {"gor_audit_entries": gor_audit_entries}
