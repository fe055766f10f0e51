#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: probe_plan
short_description: Probe flows covering every host-leaf and leaf-spine link (controller side)
description:
  - From the fabric plan, computes a small set of UDP probe flows (source NIC, destination NIC,
    UDP source port where the spine's ECMP choice matters) whose paths together cover every
    host-leaf and leaf-spine link in both directions (docs/probe-plan.md).
  - Upstream paths follow the leaf port binding (PPD); the spine's choice among parallel links is
    ECMP. No spine platform's hash can be computed offline (RV(hash_models) states each one), so the
    UDP source ports come from a crc32 stand-in and every spine->leaf link whose coverage depends on
    it is listed in RV(at_risk). Planned against the devices (the twin's C(tests/lab/twin/gom.py) asks
    the spines' kernels), the ports come from the devices' own answers and nothing is at risk.
  - With O(identifiable) (the default) more probes are added until every single directed-link failure
    fails a set of probes no other link's failure fails (1-identifiable, docs/gom.md), so the GOM collector
    can name the failed link; RV(identifiable) and RV(ambiguous) say how far that holds.
  - Optionally writes the probe list as JSON for a monitoring agent; C(changed) is true only when
    that file's content changes.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  dest:
    description: Path of a JSON file to write (probes by source host, plus coverage figures).
    type: path
  udp_dport:
    description:
      - UDP destination port of the probes; the agents must send to the same port (it enters the spines' ECMP hash).
      - Not 4791 by default, the RoCEv2 port, which a RoCE NIC's own engine takes before the host stack sees it
        (docs/gom.md says how the hash then differs from RoCE traffic).
    type: int
    default: 4792
  identifiable:
    description: Add probes until single-link failures are told apart (false - the covering set only).
    type: bool
    default: true
extends_documentation_fragment:
  - aifabric.roce.fabric
attributes:
  check_mode:
    support: full
    description: Computes everything; in check mode the file is not written, C(changed) says whether it would be.
  diff_mode:
    support: full
    description: Before and after text of O(dest) when it changes (summarised past 20,000 characters).
"""

EXAMPLES = r"""
- name: Plan the link-coverage probes and write them for the agents
  aifabric.roce.probe_plan:
    plan: "{{ hostvars['localhost'].aifabric_plan.path }}"
    dest: "{{ build_dir }}/probes.json"
  delegate_to: localhost
  run_once: true
  register: probes
"""

RETURN = r"""
count:
  description: Number of probe flows.
  returned: success
  type: int
  sample: 16
bound:
  description: Reachable directed links divided by the links one path covers (4), rounded up.
  returned: success
  type: int
tight_bound:
  description: Lower bound that also counts one probe per source NIC and per leaf's incoming links.
  returned: success
  type: int
coverage:
  description: Fraction of reachable directed links the probes cover.
  returned: success
  type: float
  sample: 1.0
unreachable_under_ppd:
  description: Directed links no host flow can cross under the port binding (left out of coverage).
  returned: success
  type: list
  elements: str
hash:
  description: How the source ports were chosen (the crc32 stand-in here).
  returned: success
  type: str
hash_models:
  description: Per spine platform in the plan, its ECMP hash and why it cannot be computed offline.
  returned: success
  type: dict
  sample: {"eos": "eos: the switch ASIC's ECMP hash (fields, seed and polynomial set per device, ...)"}
at_risk:
  description:
    - Spine->leaf links (of spines with parallel links to a leaf) counted as covered only because the
      stand-in chose the source port; the real hash may send the probe over a sibling link.
  returned: success
  type: list
  elements: str
at_risk_why:
  description: Why RV(at_risk) links are at risk and how to plan without risk; null when none.
  returned: success
  type: str
coverage_assured:
  description: Fraction of reachable directed links covered without relying on the stand-in hash.
  returned: success
  type: float
  sample: 0.75
uncovered_why:
  description: Per uncovered reachable link, why no probe reaches it.
  returned: success
  type: dict
identifiable:
  description: Fraction of reachable directed links whose single failure fails a probe set of its own (identifiable only).
  returned: when O(identifiable)
  type: float
  sample: 1.0
ambiguous:
  description: Groups of links that fail the same probes (identifiable only; empty when every link is identifiable).
  returned: when O(identifiable)
  type: list
  elements: list
ambiguous_why:
  description: Per group of RV(ambiguous) the planner could not split, why (identifiable only).
  returned: when O(identifiable)
  type: list
  elements: dict
cover_count:
  description: Probes of the covering set before probes were added for identifiability.
  returned: when O(identifiable)
  type: int
ident_bound:
  description: Lower bound on the probes of a 1-identifiable host-sourced set (identifiable only; docs/gom.md).
  returned: when O(identifiable)
  type: int
ratio_ident:
  description: Probes divided by RV(ident_bound) (identifiable only).
  returned: when O(identifiable)
  type: float
probes_by_host:
  description: Per source host, its probes (id, src_netdev, src_rdma, src_address, dst_host, dst_address, udp_sport, udp_dport).
  returned: success
  type: dict
"""

import json

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import read_bytes, write_if_changed
from ansible_collections.aifabric.roce.plugins.module_utils.plan_module import PLAN_ARGUMENTS, PLAN_CONSTRAINTS, plan_or_fail
from ansible_collections.aifabric.roce.plugins.module_utils.gom.identify import plan_identifiable
from ansible_collections.aifabric.roce.plugins.module_utils.gom.probes import GOM_UDP_PORT, by_host, plan_probes
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


DIFF_LIMIT = 20000


def main():
    module = AnsibleModule(
        argument_spec=dict(PLAN_ARGUMENTS, dest=dict(type="path"),
                           udp_dport=dict(type="int", default=GOM_UDP_PORT),
                           identifiable=dict(type="bool", default=True)),
        supports_check_mode=True,
        **PLAN_CONSTRAINTS)
    bounds.enforce(module, "probe_plan")
    plan = plan_or_fail(module)
    dport = module.params["udp_dport"]
    if not 1 <= dport <= 65535:
        module.fail_json(msg="udp_dport: %d is not a UDP port; give 1-65535 (default %d)" % (dport, GOM_UDP_PORT))
    ident = module.params["identifiable"]
    report = plan_identifiable(plan, dport=dport) if ident else plan_probes(plan, dport=dport)
    keys = ("count", "bound", "tight_bound", "ratio", "ratio_tight", "coverage", "coverage_all", "links", "links_all",
            "links_covered", "uncovered", "unreachable_under_ppd", "hash", "hash_models", "at_risk", "at_risk_why",
            "coverage_assured", "uncovered_why")
    if ident:
        keys += ("identifiable", "ambiguous", "ambiguous_why", "cover_count", "ident_bound", "ratio_ident")
    figures = dict((k, report[k]) for k in keys)
    agent = by_host(report)
    changed, diff = False, None
    dest = module.params["dest"]
    if dest:
        content = json.dumps(dict(figures, probes=report["probes"], probes_by_host=agent), indent=1, sort_keys=True) + "\n"
        before = read_bytes(dest)
        changed = write_if_changed(dest, content, check_mode=module.check_mode, before=before)
        if changed and module._diff:
            before_text = (before or b"").decode("utf-8", "replace")
            if len(before_text) + len(content) > DIFF_LIMIT:
                before_text, content = "%d bytes\n" % len(before_text), "%d bytes, %d probes\n" % (len(content), figures["count"])
            diff = dict(before=before_text, after=content, before_header=dest, after_header=dest)
    module.exit_json(changed=changed, probes_by_host=agent, **dict(figures, **({"diff": diff} if diff else {})))


if __name__ == "__main__":
    main()
