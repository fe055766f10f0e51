#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: rail_validate
short_description: Run post-bring-up probes on a GPU host (MTU pings, route lookups, LLDP)
description:
  - Runs the probes planned by M(aifabric.roce.validation_probes) on the host - C(ping -M do) at the
    planned MTU from each rail NIC to its peer, C(ip -j route get <dst> from <src>) compared with the
    expected device and gateway - and, where the tools exist, compares C(lldpctl -f json) neighbours
    with the cabling plan.
  - The RDMA bandwidth mesh (perftest) is not implemented yet; the probe is always reported as skipped,
    with the reason (tools or devices missing, or not implemented).
  - A missing tool or RDMA device is reported as a skipped probe with the reason, never as an error.
  - Read-only; never changes the host.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  probes:
    description: This host's probes from M(aifabric.roce.validation_probes).
    type: list
    elements: dict
    default: []
  lldp:
    description: Expected LLDP neighbour per netdev, as C([leaf, port]); checked only when C(lldpctl) exists.
    type: dict
    default: {}
  ping_count:
    description: Echo requests per ping probe.
    type: int
    default: 2
  timeout:
    description: Seconds to wait for each echo reply.
    type: int
    default: 1
attributes:
  check_mode:
    support: full
    description: Read-only; runs the same probes in check mode.
  diff_mode:
    support: none
    description: Nothing changes.
"""

EXAMPLES = r"""
- name: Run this host's probes
  aifabric.roce.rail_validate:
    probes: "{{ hostvars['localhost'].validation_plan.probes[inventory_hostname] }}"
    lldp: "{{ hostvars['localhost'].validation_plan.lldp[inventory_hostname] }}"
  register: validation
"""

RETURN = r"""
findings:
  description: One record per probe - C(probe), C(status) (ok, fail, skipped), C(expected), C(actual).
  returned: always
  type: list
  elements: dict
  sample: [{"probe": "route 10.101.0.2 from 10.100.0.1", "status": "ok", "expected": "dev rail0 via 10.100.0.6", "actual": "dev rail0 via 10.100.0.6"}]
failed_probes:
  description: Number of probes with status fail.
  returned: always
  type: int
  sample: 0
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.validate.probes import (
    judge_lldp, judge_ping, judge_route, parse_lldp, parse_ping, parse_route_get)


def _skip(probe, reason):
    return {"probe": probe, "status": "skipped", "expected": "", "actual": reason}


def main():
    module = AnsibleModule(
        argument_spec=dict(probes=dict(type="list", elements="dict", default=[]), lldp=dict(type="dict", default={}),
                           ping_count=dict(type="int", default=2), timeout=dict(type="int", default=1)),
        supports_check_mode=True,
    )
    ip_bin = module.get_bin_path("ip")
    ping_bin = module.get_bin_path("ping")
    findings = []
    for probe in module.params["probes"]:
        if probe.get("kind") == "route":
            if not ip_bin:
                findings.append(_skip("route %s" % probe.get("dst"), "iproute2 'ip' not installed"))
                continue
            rc, out, err = module.run_command([ip_bin, "-j", "route", "get", probe["dst"], "from", probe["src"]])
            findings.append(judge_route(probe, parse_route_get(out) if rc == 0 else None))
        elif probe.get("kind") == "mtu_ping":
            if not ping_bin:
                findings.append(_skip("ping %s" % probe.get("dst"), "ping not installed (iputils-ping)"))
                continue
            rc, out, err = module.run_command([ping_bin, "-n", "-q", "-M", "do", "-s", str(probe["size"]), "-c",
                                               str(module.params["ping_count"]), "-W", str(module.params["timeout"]),
                                               "-I", probe["src"], probe["dst"]])
            findings.append(judge_ping(probe, parse_ping(out + err, rc)))
        else:
            module.fail_json(msg="unknown probe kind %r" % (probe.get("kind"),))
    if module.params["lldp"]:
        lldpctl = module.get_bin_path("lldpctl")
        if lldpctl:
            rc, out, err = module.run_command([lldpctl, "-f", "json"])
            expected = dict((k, tuple(v)) for k, v in module.params["lldp"].items())
            findings.extend(judge_lldp(expected, parse_lldp(out) if rc == 0 else {}))
        else:
            findings.append(_skip("lldp", "lldpctl (lldpd) not installed: neighbours not compared with the cabling plan"))
    if not module.get_bin_path("ib_write_bw") or not _has_rdma_devices():
        findings.append(_skip("rdma bandwidth", "perftest (ib_write_bw) or RDMA devices missing"))
    else:
        findings.append(_skip("rdma bandwidth", "perftest present, but the RDMA bandwidth mesh is not implemented in this version"))
    module.exit_json(changed=False, findings=findings, failed_probes=sum(1 for f in findings if f["status"] == "fail"))


def _has_rdma_devices():
    path = "/sys/class/infiniband"
    return os.path.isdir(path) and bool(os.listdir(path))


if __name__ == "__main__":
    main()
