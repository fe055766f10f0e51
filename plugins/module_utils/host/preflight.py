# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_preflight: the facts of one host against its plan slice -> findings. Pure (no host access): the action
plugin runs it in the controller (no round trip to the host), the module wherever Ansible sends it."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.aifabric.roce.plugins.module_utils.host import checks
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError

ARGUMENT_SPEC = dict(
    facts=dict(type="dict", required=True), host=dict(type="str", required=True),
    nics=dict(type="list", elements="dict", required=True), gid_index=dict(type="int"), mtu=dict(type="int"),
    rdma_modules=dict(type="list", elements="str"),
    stack=dict(type="dict", default={}, options=dict(
        gpu_vendor=dict(type="str", choices=["nvidia", "amd"]),
        nic_driver=dict(type="str", choices=["mlx5", "bnxt_re", "irdma", "ionic"]))),
    firmware_baseline=dict(type="dict", default={}),
    gpu_nic_allowed=dict(type="list", elements="str", default=["PIX", "PXB", "P2C"]),
    require_gdr=dict(type="bool", default=True), require_acs_off=dict(type="bool", default=True),
    require_ats=dict(type="str", choices=["auto", "always", "never"], default="auto"),
    iommu_allowed=dict(type="list", elements="str", default=["off", "passthrough"]),
    severity=dict(type="dict", default={}),
)


def run(p):
    """Validated parameters -> the module result; RunError on bad input."""
    bad = sorted(k for k, v in p["severity"].items() if k not in checks.CHECKS or v not in ("error", "warning"))
    if bad:
        raise RunError("severity: unknown check id or severity for %s (checks: %s; severities: error, warning)"
                       % (", ".join(bad), ", ".join(sorted(checks.CHECKS))))
    shape = checks.baseline_errors(p["firmware_baseline"])
    if shape:
        raise RunError("firmware_baseline: %s" % "; ".join(shape))
    exp = checks.expectations(p["nics"], gid_index=p["gid_index"], mtu=p["mtu"], rdma_modules=p["rdma_modules"] or None,
                              stack=dict((k, v) for k, v in (p["stack"] or {}).items() if v),
                              firmware_baseline=p["firmware_baseline"], gpu_nic_allowed=p["gpu_nic_allowed"],
                              require_gdr=p["require_gdr"], require_acs_off=p["require_acs_off"], require_ats=p["require_ats"],
                              iommu_allowed=p["iommu_allowed"], severity=p["severity"])
    try:
        findings = checks.host_findings(p["facts"], exp, p["host"])
    except (KeyError, TypeError) as exc:
        raise RunError("facts do not look like aifabric_rdma facts from aifabric.roce.rdma_facts: missing %s" % exc)
    return dict(changed=False, findings=findings, nics=p["nics"],
                errors=sum(1 for f in findings if f["severity"] == "error"),
                warnings_count=sum(1 for f in findings if f["severity"] == "warning"))
