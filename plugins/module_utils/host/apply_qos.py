# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run of the RoCE QoS profile on a host (module aifabric.roce.rdma_qos): read the tool state and the
sysfs/configfs knobs, compare with the profile, apply (or, in check mode, only report) the difference.

Called by the module, and in check mode by the host read (module aifabric.roce.host_state), so the read
judges drift with exactly the comparison the module applies.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible_collections.aifabric.roce.plugins.module_utils.host import names, qos, stacks
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError, ensure_file, ensure_value, systemd_oneshot_unit
from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot, ToolRunner

REQUIRED_PROFILE_KEYS = ("roce_priority",)
# Trust modes both host tools accept (mlnx_qos --trust, dcb apptrust order).
TRUST_MODES = ("dscp", "pcp")
KNOBS = ("tool", "ecn", "roce_tos", "dcbx")

ARGUMENT_SPEC = dict(interfaces=dict(type="list", elements="dict", required=True),
                     profile=dict(type="dict", required=True),
                     tool=dict(type="str", choices=["auto", "dcb", "mlnx_qos", "none"], default="auto"),
                     require=dict(type="list", elements="str", default=[]),
                     persist=dict(type="bool", default=True),
                     root=dict(type="path", default="/"),
                     tool_output_dir=dict(type="path"))


def input_problems(interfaces, profile):
    """Names and strings that would reach sysfs paths or the boot script, checked before anything runs."""
    problems = []
    for index, nic in enumerate(interfaces):
        found = []
        if nic.get("netdev"):  # a missing netdev has its own message below
            found.append(names.netdev_problem(nic.get("netdev")))
        if nic.get("rdma") is not None:
            found.append(names.rdma_problem(nic.get("rdma")))
        problems += ["interfaces[%d]: %s" % (index, problem) for problem in found if problem]
    if profile.get("trust", "dscp") not in TRUST_MODES:
        problems.append("profile.trust: %r is not one of %s" % (profile.get("trust"), ", ".join(TRUST_MODES)))
    return problems


def driver_of(sysroot, netdev):
    """NIC driver key (stacks.NIC_DRIVERS) of a netdev from its sysfs driver link, or None."""
    return stacks.nic_driver_of(netdev_driver=sysroot.link_name("/sys/class/net/%s/device/driver" % netdev))


def ibdev_of(sysroot, netdev):
    """The RDMA device the kernel bound to the netdev's PCI function (/sys/class/net/<if>/device/infiniband/<dev>);
    the driver's configfs group is named after it, whatever the plan calls the NIC."""
    found = sysroot.listdir("/sys/class/net/%s/device/infiniband" % netdev)
    return sorted(found)[0] if found else None


def congestion_readback(sysroot, netdev, driver, readback, profile):
    """Compare a driver's congestion-control read-back (upstream bnxt_re debugfs cc_config, per PCI function; writable
    by root upstream, never written here)
    with the profile: status ok, or differs (a gap naming each value); nothing is written."""
    pci = sysroot.link_name("/sys/class/net/%s/device" % netdev)
    attr_dir = "%s/%s/%s" % (readback["base"], pci, readback["dir"])
    want = qos.cc_want(readback, profile)
    before = dict((attr, qos.cc_parse(sysroot.read("%s/%s" % (attr_dir, attr)), readback["format"])) for attr in want)
    report = {"driver": driver, "interface": attr_dir, "before": before, "after": before, "source": readback["source"],
              "read_only": True, "status": "ok", "why": None}
    unreadable = sorted(attr for attr, value in before.items() if value is None)
    if not pci or unreadable:
        report.update(status="not_run", why="%s: %s missing or unreadable (debugfs mounted? root?)"
                      % (attr_dir, ", ".join(unreadable) or "no PCI function"))
        return report
    wrong = ["%s %s (profile %s)" % (attr, before[attr], value) for attr, value in sorted(want.items()) if before[attr] != value]
    if wrong:
        why = ("read back %s: %s; upstream bnxt_re has no stable interface to set it (its debugfs cc_config takes "
               "writes from root, bnxt_re_cc_config_set, but this collection does not write a debugging interface): "
               "set it with Broadcom's tools or driver" % (attr_dir, ", ".join(wrong)))
        report.update(status="differs", why=why)
    return report


def congestion(check_mode, sysroot, netdev, rdma, driver, interface, profile):
    """Read back, and set where they differ, the congestion-control attributes of a non-mlx5 NIC through its driver's
    configfs interface (stacks.NIC_DRIVERS[driver]["cc"], each cited there). Returns (report, diff items, replay
    pairs); report status: ok, set, would change, or not_run with why."""
    report = {"driver": driver, "status": "not_run", "why": None, "interface": None, "before": {}, "after": {},
              "source": interface.get("source")}
    if not interface.get("base") or not sysroot.isdir(interface["base"]):
        readback = interface.get("readback")
        if readback and sysroot.isdir(readback["base"]):
            return congestion_readback(sysroot, netdev, driver, readback, profile), [], []
        report["why"] = interface["missing"]
        return report, [], []
    ibdev = ibdev_of(sysroot, netdev) or rdma
    if not ibdev:
        report["why"] = "no RDMA device bound to %s (/sys/class/net/%s/device/infiniband)" % (netdev, netdev)
        return report, [], []
    want = qos.cc_want(interface, profile)
    device_dir, attr_dir = qos.cc_paths(interface, ibdev)
    report["interface"] = attr_dir
    replay = qos.cc_replay(interface, ibdev, want)
    if not sysroot.isdir(device_dir):
        if check_mode:
            report["why"] = ("reading %s needs mkdir %s (the driver creates the group on mkdir); check mode creates "
                             "nothing" % (attr_dir, device_dir))
            return report, [], replay
        try:
            os.mkdir(sysroot.path(device_dir))
        except OSError as exc:
            report["why"] = "mkdir %s failed: %s" % (device_dir, exc)
            return report, [], replay
        report["created"] = device_dir
    fmt = interface["format"]
    before = dict((attr, qos.cc_parse(sysroot.read("%s/%s" % (attr_dir, attr)), fmt)) for attr in want)
    report["before"] = before
    unreadable = sorted(attr for attr, value in before.items() if value is None)
    if unreadable:
        report["why"] = "%s: %s missing or unreadable" % (attr_dir, ", ".join(unreadable))
        return report, [], replay
    wrong = dict((attr, value) for attr, value in want.items() if before[attr] != value)
    diff = [{"before_header": "%s/%s" % (attr_dir, attr), "after_header": "%s/%s" % (attr_dir, attr),
             "before": "%s\n" % qos.cc_format(before[attr], fmt), "after": "%s\n" % qos.cc_format(value, fmt)}
            for attr, value in sorted(wrong.items())]
    if not wrong:
        report.update(status="ok", after=before)
        return report, [], replay
    if check_mode:
        report.update(status="would change", after=dict(before, **wrong))
        return report, diff, replay
    writes = [("%s/%s" % (attr_dir, attr), qos.cc_format(value, fmt)) for attr, value in sorted(wrong.items())]
    if interface.get("apply"):
        writes.append(("%s/%s" % (attr_dir, interface["apply"][0]), qos.cc_format(interface["apply"][1], fmt)))
    done = []
    for path, value in writes:
        try:
            sysroot.write(path, value)
        except (IOError, OSError) as exc:
            raise RunError("%s: writing %s to %s failed: %s (written before it: %s; the driver keeps values not "
                           "yet applied until the next apply)" % (netdev, value, path, exc, done or "nothing"),
                           {"congestion": report})
        done.append("%s=%s" % (path, value))
    after = dict((attr, qos.cc_parse(sysroot.read("%s/%s" % (attr_dir, attr)), fmt)) for attr in want)
    report["after"] = after
    if after != dict(before, **wrong):
        raise RunError("%s: congestion control read back %s after writing %s" % (netdev, after, done), {"congestion": report})
    report["status"] = "set"
    return report, diff, replay


def run(p, check_mode, run_command):
    """Converge (or in check mode compare) the QoS knobs. ``p``: the module's parameters; ``run_command(argv)``
    -> (rc, out, err). Returns the module result (with ``warnings``: the gaps that are not required); raises
    RunError(msg, result) where the module fails."""
    missing = [k for k in REQUIRED_PROFILE_KEYS if p["profile"].get(k) is None]
    if missing:
        raise RunError("profile: missing %s (pass the plan's qos profile)" % ", ".join(missing))
    bad_input = input_problems(p["interfaces"], p["profile"])
    if bad_input:
        raise RunError("refusing unsafe input: %s" % "; ".join(bad_input), {"problems": bad_input})
    bad_req = sorted(set(p["require"]) - set(KNOBS))
    if bad_req:
        raise RunError("require: unknown knob(s) %s (known: %s)" % (", ".join(bad_req), ", ".join(KNOBS)))
    sysroot = SysRoot(p["root"])
    runner = ToolRunner(capture_dir=p["tool_output_dir"], live=sysroot.live)
    can_run = sysroot.live and not p["tool_output_dir"]
    tool = qos.choose_tool(runner, p["tool"])
    want = qos.desired(p["profile"])
    changed = False
    ran, pending, gaps, diff, per_if, replay = [], [], [], [], {}, []
    for nic in p["interfaces"]:
        netdev, rdma = nic.get("netdev"), nic.get("rdma")
        if not netdev:
            raise RunError("interfaces: every item needs netdev (and rdma for the RoCE ToS)")
        item = {"tool": tool, "tool_state": None, "commands": [], "sysfs": []}
        if tool is None and p["tool"] == "none":
            pass  # trust/PFC/DSCP map explicitly left to someone else: not a gap
        elif tool is None:
            gaps.append("%s: trust/PFC/DSCP map not set (no dcb or mlnx_qos%s)" % (netdev, "" if can_run else " output for this root"))
        else:
            state, problem = qos.read_tool_state(runner, tool, netdev)
            if problem:
                gaps.append("%s: %s" % (netdev, problem))
            elif state.get("dcbx") == qos.DCBX_FIRMWARE:
                # the firmware's DCBX owns trust/PFC: read and report, never set (docs/host-rdma.md, "Host stacks")
                item.update(tool_state=state, dcbx=qos.DCBX_FIRMWARE)
                matches, text = qos.firmware_dcbx_report(netdev, driver_of(sysroot, netdev), state, want)
                item["dcbx_report"] = text
                if not matches:
                    gaps.append(text + " (dcbx)")
            else:
                item["tool_state"] = state
                cmds = qos.mlnx_qos_commands(netdev, state, want) if tool == "mlnx_qos" else qos.dcb_commands(netdev, state, want)
                if state.get("trust") == "unsupported":
                    cmds = [c for c in cmds if c[1] != "apptrust"]
                    gaps.append("%s: dcb apptrust unsupported (iproute2 < 6.1 or driver); trust not set" % netdev)
                item["commands"] = cmds
                if cmds:
                    diff.append({"before_header": "%s qos" % netdev, "after_header": "%s qos" % netdev,
                                 "before": "trust %s pfc %s dscp->prio %s\n" % (state["trust"], state["pfc"], sorted(state["dscp_prio"].items())),
                                 "after": "trust %s pfc %s dscp->prio %s (merged)\n" % (want["trust"], want["pfc"], sorted(want["dscp_prio"].items()))})
                for argv in cmds:
                    if check_mode or not can_run:
                        pending.append(argv)
                        # check mode on a host whose tool this module runs: the run would change it
                        changed = changed or (check_mode and can_run)
                        continue
                    rc, dummy, err = run_command(argv)
                    ran.append(argv)
                    if rc != 0:
                        raise RunError("%s failed (rc=%d): %s" % (" ".join(argv), rc, err.strip()), {"commands": ran})
                    changed = True
        targets = qos.sysfs_targets(netdev, rdma, p["profile"])
        driver = driver_of(sysroot, netdev)
        interface = qos.cc_interface(driver) if driver and driver != "mlx5" else None
        cc_replay = []
        if interface is not None:
            # not a ConnectX: the MLNX_OFED ECN sysfs is not there; the driver's own interface is used instead
            targets = [(path, value) for path, value in targets if not path.startswith("/sys/class/net/")]
            item["congestion"], cc_diff, cc_replay = congestion(check_mode, sysroot, netdev, rdma, driver, interface, p["profile"])
            diff += cc_diff
            if item["congestion"]["status"] in ("set", "would change"):
                changed = True
            elif item["congestion"]["status"] == "not_run":
                gaps.append("%s: %s congestion control not run - %s (ecn)" % (netdev, driver, item["congestion"]["why"]))
            elif item["congestion"]["status"] == "differs":
                gaps.append("%s: %s congestion control %s (ecn)" % (netdev, driver, item["congestion"]["why"]))
        for path, value in targets:
            if path.startswith(qos.CONFIGFS) and not sysroot.exists(path):
                dev_dir = "/".join(path.split("/")[:6])
                if sysroot.isdir(qos.CONFIGFS) and not sysroot.exists(dev_dir) and not check_mode:
                    try:
                        # the kernel populates ports/<n>/ when the device directory is created
                        os.mkdir(sysroot.path(dev_dir))
                    except OSError as exc:
                        gaps.append("%s: mkdir %s failed: %s" % (netdev, dev_dir, exc))
            res = ensure_value(sysroot, path, value, check_mode)
            item["sysfs"].append(res)
            if res["status"] == "missing":
                knob = "roce_tos" if path.startswith(qos.CONFIGFS) else "ecn"
                why = ""
                if knob == "ecn" and driver and driver != "mlx5":
                    why = ": %s congestion control - %s" % (driver, stacks.NIC_DRIVERS[driver]["congestion"])
                gaps.append("%s: %s missing%s (%s)" % (netdev, path, why, knob))
            elif res["status"].startswith("failed"):
                raise RunError("%s: writing %s failed: %s" % (netdev, path, res["status"]), {"interfaces": per_if})
            if res["changed"]:
                changed = True
                diff.append({"before_header": path, "after_header": path, "before": "%s\n" % res["before"], "after": "%s\n" % value})
        per_if[netdev] = item
        replay.append({"tool_commands": qos.full_commands(tool, netdev, want) if tool and not item.get("dcbx") else [],
                       "sysfs": [(path, value) for path, value in targets if sysroot.exists(path)] + cc_replay})
    required_gaps = [g for g in gaps if any(("(%s)" % k) in g or (k == "tool" and "trust/PFC" in g) for k in p["require"])]
    files = []
    if p["persist"]:
        for rel, content, mode in ((qos.REPLAY_SCRIPT, qos.replay_script(replay), 0o755),
                                   (qos.UNIT, systemd_oneshot_unit("aifabric.roce RoCE QoS", qos.REPLAY_SCRIPT,
                                                                   after="systemd-modules-load.service network-pre.target"), 0o644)):
            this, d = ensure_file(sysroot, rel, content, mode, check_mode)
            files.append(rel)
            if this:
                changed = True
                diff.append(d)
    result = dict(changed=changed, interfaces=per_if, commands=ran, pending_commands=pending, gaps=gaps, files=files, diff=diff)
    if required_gaps:
        raise RunError("required QoS knobs unavailable: %s" % "; ".join(required_gaps), result)
    result["warnings"] = list(gaps)
    return result
