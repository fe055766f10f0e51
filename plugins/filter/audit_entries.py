# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: audit_entries
short_description: Turn registered check-mode results of many hosts into drift report entries
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
description:
  - Reads, for every host in O(hosts), the registered variables named in O(checks) and returns one
    drift report entry per host and check (see M(aifabric.roce.drift_report)).
  - A variable with C(findings) (preflight) becomes an entry per finding severity; any other task
    result becomes drift items from its C(drift) list or before/after C(diff).
options:
  _input:
    description: C(hostvars).
    type: dict
    required: true
  hosts:
    description: Host names to read.
    type: list
    elements: str
    required: true
  checks:
    description: Check name to registered variable name.
    type: dict
    required: true
  kind:
    description: C(host) or C(switch).
    type: str
    default: host
  category:
    description:
      - C(config) for checks whose differences are drift (network, QoS, IRQ, switch config);
        C(readiness) for findings that are reported but are not configuration drift (preflight).
    type: str
    default: config
"""

EXAMPLES = r"""
- name: Entries for the GPU hosts
  ansible.builtin.set_fact:
    audit_host_entries: "{{ hostvars | aifabric.roce.audit_entries(groups['gpu_hosts'], {'host_network': 'host_network_result'}) }}"
"""

RETURN = r"""
_value:
  description: Drift report entries.
  type: list
  elements: dict
"""

from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import collect_entries


def audit_entries(hostvars, hosts, checks, kind="host", category="config"):
    return collect_entries(hostvars, hosts, checks, kind, category)


class FilterModule(object):
    def filters(self):
        return {"audit_entries": audit_entries}
