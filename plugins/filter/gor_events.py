# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: gor_events
short_description: What GOR acts on, from GOM's events or Alertmanager's alerts
version_added: "0.1.0"
author:
  - aifabric.roce developers (@aifabric)
description:
  - >-
    Takes GOM's events (schema C(aifabric.gom.event/1), a list or one), an Alertmanager webhook payload or one of
    its alerts, or an ansible-rulebook event of the alertmanager source (C(alert)), and returns C(links) (fabric
    link states for M(aifabric.roce.gor_steer)), C(drains) (host-side faults for M(aifabric.roce.slurm_node):
    id, link, node, status firing or resolved) and C(ignored) (maintenance and unlocalised events, in words).
  - >-
    A fabric C(link_fault) (C(leaf_up), C(spine_down)) is bad (loss 1.0) or congested since its first lost probe;
    C(recovered) makes it healthy since C(cleared); a host-side fault (C(host_up), C(host_down)) drains the host.
    Maintenance (this collection's own changes) and unlocalised events never act (docs/gor.md).
options:
  _input:
    description: GOM events, an Alertmanager payload or alert, or a rulebook event.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Drain the hosts of the host-side faults among the events
  aifabric.roce.slurm_node:
    node: "{{ item.node }}"
    state: "{{ 'drained' if item.status == 'firing' else 'resumed' }}"
    link: "{{ item.link }}"
    event_id: "{{ item.id }}"
  loop: "{{ (gor_events | aifabric.roce.gor_events).drains }}"
"""

RETURN = r"""
_value:
  description: C(links), C(drains) and C(ignored).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.aifabric.roce.plugins.module_utils.gor.events import EventError, read


def gor_events(data):
    try:
        return read(data)
    except (EventError, KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("gor_events: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"gor_events": gor_events}
