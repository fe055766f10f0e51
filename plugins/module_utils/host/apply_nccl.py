# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run of the NCCL settings on a host (module aifabric.roce.nccl_config): render the files from the plan,
compare with what the host holds, write (or, in check mode, only report) the difference. Also called in check
mode by the host read (module aifabric.roce.host_state)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.aifabric.roce.plugins.module_utils.host import nccl
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError, ensure_file
from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot

ARGUMENT_SPEC = dict(nccl=dict(type="dict", required=True),
                     nics=dict(type="list", elements="dict", default=[]),
                     qos=dict(type="dict"),
                     cross_nic=dict(type="str", choices=["auto", "none", "0", "1", "2"], default="auto"),
                     topo_file=dict(type="str"),
                     extra=dict(type="dict", default={}),
                     outputs=dict(type="list", elements="str", choices=["conf", "profile"], default=["conf"]),
                     conf_path=dict(type="str", default=nccl.CONF_PATH),
                     profile_path=dict(type="str", default=nccl.PROFILE_PATH),
                     root=dict(type="path", default="/"))


def run(p, check_mode):
    """Write (or in check mode compare) the NCCL files. Returns the module result; raises RunError(msg, result)."""
    try:
        settings = nccl.build_settings(p["nccl"], p["nics"], p["qos"], p["cross_nic"], p["topo_file"], p["extra"])
    except nccl.NcclError as exc:
        raise RunError("refusing NCCL settings: %s" % exc)
    for key in ("conf_path", "profile_path"):
        if not p[key].startswith("/") or ".." in p[key].split("/"):
            raise RunError("%s: %r must be an absolute path without '..'" % (key, p[key]))
    sysroot = SysRoot(p["root"])
    changed, diffs, drift, files = False, [], [], []
    for output in sorted(set(p["outputs"])):
        if output == "conf":
            rel, content, reader, mode = p["conf_path"], nccl.render_conf(settings), nccl.parse_conf, 0o644
        else:
            rel, content, reader, mode = p["profile_path"], nccl.render_profile(settings), nccl.parse_profile, 0o644
        before = sysroot.read_bytes(rel)
        current = reader(before.decode("utf-8", "replace")) if before is not None else {}
        try:
            this, diff = ensure_file(sysroot, rel, content, mode, check_mode, durable=False)
        except (IOError, OSError) as exc:
            raise RunError("writing %s failed: %s" % (rel, exc), {"settings": settings, "files": files})
        files.append(rel)
        if this:
            changed = True
            diffs.append(diff)
            drift.extend(nccl.drift_items(rel, current, settings))
    result = dict(changed=changed, settings=settings, files=files, drift=drift, diff=diffs)
    warnings = nccl.variable_warnings(settings)
    if warnings:
        result["warnings"] = warnings  # AnsibleModule shows each one as a warning
    return result
