# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host RoCE QoS: desired state from the fabric QoS profile, current state, and the commands between.

Knobs and their documented interfaces:
- trust DSCP, DSCP->priority, PFC: iproute2 ``dcb apptrust|app|pfc`` (dcb-apptrust(8), dcb-app(8),
  dcb-pfc(8)), or NVIDIA ``mlnx_qos -i <if> --trust dscp --pfc ... --dscp2prio set,<dscp>,<prio>``
  (MLNX_OFED/DOCA-OFED user manual, "mlnx_qos").
- ECN (DCQCN) per priority and CNP DSCP/802.1p: /sys/class/net/<if>/ecn/roce_{np,rp}/enable/<prio>,
  roce_np/cnp_dscp, roce_np/cnp_802p_prio (MLNX_OFED "Explicit Congestion Notification" sysfs; absent
  with the inbox driver, which enables DCQCN by default).
- default RoCE ToS for rdma_cm connections: configfs /sys/kernel/config/rdma_cm/<dev>/ports/<n>/default_roce_tos
  (Documentation/ABI/testing/configfs-rdma_cm).
- congestion control on Broadcom and Intel NICs: the configfs interfaces of their drivers (stacks.NIC_DRIVERS[...]["cc"]).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
import shlex

REPLAY_SCRIPT = "/usr/local/sbin/aifabric-rdma-qos"
UNIT = "/etc/systemd/system/aifabric-rdma-qos.service"
CONFIGFS = "/sys/kernel/config/rdma_cm"


def sysfs_targets(netdev, rdma, profile, port="1"):
    """[(path, value)] of the sysfs/configfs attributes the profile sets on one rail NIC."""
    prio = int(profile["roce_priority"])
    out = []
    if profile.get("ecn", True):
        out += [("/sys/class/net/%s/ecn/roce_np/enable/%d" % (netdev, prio), "1"),
                ("/sys/class/net/%s/ecn/roce_rp/enable/%d" % (netdev, prio), "1")]
    if profile.get("cnp_dscp") is not None:
        out.append(("/sys/class/net/%s/ecn/roce_np/cnp_dscp" % netdev, str(int(profile["cnp_dscp"]))))
    if profile.get("cnp_priority") is not None:
        out.append(("/sys/class/net/%s/ecn/roce_np/cnp_802p_prio" % netdev, str(int(profile["cnp_priority"]))))
    if rdma and profile.get("roce_tos") is not None:
        out.append(("%s/%s/ports/%s/default_roce_tos" % (CONFIGFS, rdma, port), str(int(profile["roce_tos"]))))
    return out


def desired(profile):
    pfc = sorted(int(p) for p in profile.get("lossless_priorities") or [profile["roce_priority"]])
    mapping = dict((int(d), int(p)) for d, p in (profile.get("dscp_to_priority") or {}).items())
    return {"trust": profile.get("trust", "dscp"), "pfc": pfc, "dscp_prio": mapping}


# ---- mlnx_qos -------------------------------------------------------------------------------

# Who owns DCB on the port. mlnx_qos prints "DCBX mode: OS controlled" or "DCBX mode: Firmware controlled" (a public
# capture of the latter: search index file 310222282); iproute2 `dcb dcbx show` prints the DCB_CAP_DCBX_* flags
# (dcb/dcb_dcbx.c: host, lld-managed, cee, ieee, static). With the firmware's DCBX agent (lld-managed) the host's
# settings are refused (bnxt: bnxt_dcb.c bnxt_dcbnl_ieee_setpfc -EINVAL without DCB_CAP_DCBX_HOST) or would take
# DCB away from the switch's DCBX, so they are read back and reported, never set (docs/host-rdma.md).
DCBX_FIRMWARE = "firmware"
DCBX_HOST = "host"


def parse_dcbx(text):
    """``dcb dcbx show dev X`` -> firmware | host | None."""
    words = (text or "").split()
    if "lld-managed" in words:
        return DCBX_FIRMWARE
    if "host" in words:
        return DCBX_HOST
    return None


def parse_mlnx_qos(text):
    state = {"trust": None, "pfc": None, "dscp_prio": {}, "dcbx": None}
    match = re.search(r"DCBX mode:\s*(\w+)", text or "", re.I)
    if match:
        state["dcbx"] = DCBX_FIRMWARE if match.group(1).lower() == "firmware" else DCBX_HOST
    match = re.search(r"Priority trust state:\s*(\w+)", text or "")
    if match:
        state["trust"] = match.group(1)
    match = re.search(r"PFC configuration:\s*\n\s*priority[^\n]*\n\s*enabled\s+([0-9 ]+)", text or "")
    if match:
        state["pfc"] = [i for i, v in enumerate(match.group(1).split()) if v == "1"]
    for prio, dscps in re.findall(r"prio:(\d+)\s+dscp:([0-9,]+)", text or ""):
        for dscp in dscps.strip(",").split(","):
            if dscp:
                state["dscp_prio"][int(dscp)] = int(prio)
    return state


def mlnx_qos_commands(netdev, state, want):
    argv = ["mlnx_qos", "-i", netdev]
    extra = []
    if state["trust"] != want["trust"]:
        extra += ["--trust", want["trust"]]
    if state["pfc"] != want["pfc"]:
        extra += ["--pfc", ",".join("1" if p in want["pfc"] else "0" for p in range(8))]
    cmds = [argv + extra] if extra else []
    for dscp, prio in sorted(want["dscp_prio"].items()):
        if state["dscp_prio"].get(dscp) != prio:
            cmds.append(argv + ["--dscp2prio", "set,%d,%d" % (dscp, prio)])
    return cmds


# ---- iproute2 dcb ---------------------------------------------------------------------------

# DSCP names ``dcb app show`` prints without -N: dcb_app.c dcb_app_print_pid_dscp looks up DSCP << 2 with
# rtnl_dsfield_get_name (iproute2 ee2a4a866256 dcb/dcb_app.c:410-418, lib/rt_names.c:623-632), i.e. the ToS-byte
# names of /etc/iproute2/rt_dsfield; the table iproute2 ships (etc/iproute2/rt_dsfield at ee2a4a866256) is below as
# DSCP values. DSCP 0 prints "0" (rt_names.c's static entry 0 answers before the file is read; dcb-app(8) example
# "dscp-prio 0:0 CS3:2 CS3:3 CS6:6"), "default" where the file was read first. A host may add names to its own
# rt_dsfield: a name outside this table is refused with the way to read the table numerically.
DSCP_NAMES = {"default": 0, "AF11": 10, "AF12": 12, "AF13": 14, "AF21": 18, "AF22": 20, "AF23": 22, "AF31": 26,
              "AF32": 28, "AF33": 30, "AF41": 34, "AF42": 36, "AF43": 38, "CS1": 8, "CS2": 16, "CS3": 24, "CS4": 32,
              "CS5": 40, "CS6": 48, "CS7": 56, "EF": 46}


class DcbError(ValueError):
    """``dcb`` output this reader cannot read as the tool meant it; the message says how to read it instead."""


def dscp_value(token):
    """DSCP of a ``dcb app`` key: a number 0-63, or a standard rt_dsfield name (DSCP_NAMES)."""
    if token.isdigit() and int(token) <= 63:
        return int(token)
    if token in DSCP_NAMES:
        return DSCP_NAMES[token]
    raise DcbError("dcb app: DSCP %r is neither 0-63 nor a name of iproute2's standard rt_dsfield (%s); the host's "
                   "/etc/iproute2/rt_dsfield may define it - read the table with `dcb -N app show dev <if>`"
                   % (token, " ".join(sorted(DSCP_NAMES))))


def parse_dcb(apptrust, pfc, app, dcbx=None):
    """State from ``dcb apptrust/pfc/app/dcbx show``; ``app`` may be numeric (-N) or symbolic (DSCP names).
    ``dscp_prio`` holds one priority per DSCP; a DSCP the table maps to several priorities (dcb-app(8): ``CS3:2
    CS3:3``) is in ``dscp_prio_multi`` and never counts as set (``dcb app replace`` leaves one). Raises DcbError."""
    state = {"trust": None, "pfc": None, "dscp_prio": {}, "dcbx": parse_dcbx(dcbx)}
    match = re.search(r"order\s+([\w -]+)", apptrust or "")
    if match:
        order = match.group(1).split()
        state["trust"] = order[0] if order else "none"
    match = re.search(r"prio-pfc\s+((?:\d:\w+\s*)+)", pfc or "")
    if match:
        state["pfc"] = [int(p) for p, v in re.findall(r"(\d):(\w+)", match.group(1)) if v == "on"]
    match = re.search(r"dscp-prio\s+(.*)$", app or "", re.M)
    seen = {}
    for token in (match.group(1).split() if match else []):
        key, sep, prio = token.rpartition(":")
        if not sep or not prio.isdigit() or int(prio) > 7:
            raise DcbError("dcb app: %r is not DSCP:PRIO (dcb-app(8) DSCP-MAP)" % token)
        seen.setdefault(dscp_value(key), []).append(int(prio))
    for dscp, prios in seen.items():
        if len(prios) == 1:
            state["dscp_prio"][dscp] = prios[0]
        else:
            state.setdefault("dscp_prio_multi", {})[dscp] = sorted(prios)
    return state


def dcb_commands(netdev, state, want):
    cmds = []
    if state["trust"] != want["trust"]:
        cmds.append(["dcb", "apptrust", "set", "dev", netdev, "order", want["trust"]])
    if state["pfc"] != want["pfc"]:
        cmds.append(["dcb", "pfc", "set", "dev", netdev, "prio-pfc"] + ["%d:%s" % (p, "on" if p in want["pfc"] else "off") for p in range(8)])
    wrong = [(d, p) for d, p in sorted(want["dscp_prio"].items()) if state["dscp_prio"].get(d) != p]
    if wrong:
        cmds.append(["dcb", "app", "replace", "dev", netdev, "dscp-prio"] + ["%d:%d" % dp for dp in wrong])
    return cmds


def read_tool_state(runner, tool, netdev):
    """(state, problem) for one interface through ``tool``."""
    if tool == "mlnx_qos":
        res = runner.run(["mlnx_qos", "-i", netdev])
        if not res.ok:
            return None, "mlnx_qos -i %s failed (%s)" % (netdev, "missing" if res.missing else "rc=%s" % res.rc)
        return parse_mlnx_qos(res.stdout), None
    results = [runner.run(["dcb", "apptrust", "show", "dev", netdev]), runner.run(["dcb", "pfc", "show", "dev", netdev]),
               runner.run(["dcb", "-N", "app", "show", "dev", netdev]), runner.run(["dcb", "dcbx", "show", "dev", netdev])]
    if not results[1].ok:
        return None, "dcb pfc show dev %s failed (%s)" % (netdev, "missing" if results[1].missing else results[1].stderr.strip() or results[1].rc)
    try:
        state = parse_dcb(results[0].stdout if results[0].ok else "", results[1].stdout, results[2].stdout if results[2].ok else "",
                          results[3].stdout if results[3].ok else None)
    except DcbError as err:
        return None, "%s: %s" % (netdev, err)
    if not results[0].ok:
        state["trust"] = "unsupported"
    return state, None


def choose_tool(runner, tool):
    """auto -> dcb when present, else mlnx_qos, else None."""
    if tool in ("dcb", "mlnx_qos"):
        return tool if runner.available(tool) else None
    if tool == "none":
        return None
    for name in ("dcb", "mlnx_qos"):
        if runner.available(name):
            return name
    return None


def replay_script(settings):
    """Boot-time replay of the sysfs/configfs values and tool commands (no state, idempotent)."""
    lines = ["#!/bin/sh", "# Rendered by aifabric.roce.rdma_qos from the fabric QoS profile; do not edit.",
             "# Re-applies host RoCE QoS at boot: trust/PFC/DSCP map, ECN, CNP DSCP, default RoCE ToS."]
    # Every word is shell-quoted: names and values come from inventory, and this script runs as
    # root at boot (shlex.quote leaves plain words such as rail0 or set,26,3 unchanged).
    for item in settings:
        for argv in item["tool_commands"]:
            lines.append("%s || echo %s >&2" % (_sh(argv), shlex.quote("aifabric: %s failed" % argv[0])))
        for path, value in item["sysfs"]:
            if path.startswith(CONFIGFS_ROOT):  # rdma_cm, bnxt_re, irdma: the device group exists after mkdir
                dev_dir = shlex.quote("/".join(path.split("/")[:6]))
                lines.append("[ -d %s ] || mkdir %s 2>/dev/null" % (dev_dir, dev_dir))
            lines.append("[ -e %s ] && echo %s > %s" % (shlex.quote(path), shlex.quote(str(value)), shlex.quote(path)))
    lines.append("exit 0")
    return "\n".join(lines) + "\n"


def _sh(argv):
    """One shell command line from an argv list (shlex.join, also on Python < 3.8)."""
    return " ".join(shlex.quote(str(arg)) for arg in argv)


def firmware_dcbx_report(netdev, driver, state, want):
    """(matches, text) for a port whose DCBX the firmware runs: what was read back against the profile, and how to
    change it (the driver's own way to hand DCBX to the host, from stacks.NIC_DRIVERS)."""
    from ansible_collections.aifabric.roce.plugins.module_utils.host import stacks
    have = "trust %s, PFC on %s" % (state.get("trust"), state.get("pfc"))
    need = "trust %s, PFC on %s" % (want["trust"], want["pfc"])
    matches = state.get("trust") == want["trust"] and state.get("pfc") == want["pfc"]
    how = (stacks.NIC_DRIVERS.get(driver) or {}).get("qos_tool") or "the NIC vendor's tool"
    text = ("%s: DCBX is firmware-managed: read back %s, the profile wants %s%s; not set from the host. Set it on the "
            "switch (DCBX) or give DCBX to the host (%s)" % (netdev, have, need, "" if not matches else " (they match)", how))
    return matches, text


def full_commands(tool, netdev, want):
    """Commands that set the whole profile from scratch (used by the replay script)."""
    empty = {"trust": None, "pfc": None, "dscp_prio": {}}
    if tool == "mlnx_qos":
        return mlnx_qos_commands(netdev, empty, want)
    if tool == "dcb":
        return dcb_commands(netdev, empty, want)
    return []


# ---- congestion control (DCQCN) on NICs whose driver is not mlx5 ------------------------------------
# Each driver's interface is data in stacks.NIC_DRIVERS[<driver>]["cc"] with its source: a configfs group the
# driver creates when its device directory is made (mkdir /sys/kernel/config/<driver>/<ibdev>), attributes read
# back with cat. Drivers without one (the upstream bnxt_re and irdma, ionic) are reported not run, with why.
CONFIGFS_ROOT = "/sys/kernel/config/"
_TRUE_WORDS = {"1": 1, "y": 1, "yes": 1, "on": 1, "true": 1, "enabled": 1,
               "0": 0, "n": 0, "no": 0, "off": 0, "false": 0, "disabled": 0}


def cc_interface(driver):
    """The driver's congestion-control interface (stacks.NIC_DRIVERS[...]["cc"]) or None (mlx5: ECN sysfs)."""
    from ansible_collections.aifabric.roce.plugins.module_utils.host import stacks
    return (stacks.NIC_DRIVERS.get(driver) or {}).get("cc")


def cc_want(interface, profile):
    """{attribute: int} the profile asks of the interface: ecn on (profile ``ecn``, default true), RoCE/CNP DSCP."""
    values = {"ecn": 1 if profile.get("ecn", True) else 0, "roce_dscp": profile.get("roce_dscp"),
              "cnp_dscp": profile.get("cnp_dscp")}
    if values["roce_dscp"] is None and profile.get("roce_tos") is not None:
        values["roce_dscp"] = int(profile["roce_tos"]) >> 2
    return dict((attr, int(values[key])) for attr, key in interface["attrs"] if values.get(key) is not None)


def cc_paths(interface, ibdev):
    """(device dir, attribute dir) of ``ibdev`` under the interface's configfs base."""
    device_dir = "%s/%s" % (interface["base"], ibdev)
    return device_dir, ("%s/%s" % (device_dir, interface["dir"]) if interface.get("dir") else device_dir)


def cc_parse(text, fmt):
    """An attribute as the driver shows it -> int (bnxt_re "%#x": 0x1a, 0; irdma "%d": 1), None when unreadable."""
    word = (text or "").strip().lower()
    if not word:
        return None
    if word in _TRUE_WORDS and fmt != "hex":
        return _TRUE_WORDS[word]
    try:
        return int(word, 16) if fmt == "hex" else int(word, 0)
    except ValueError:
        return None


def cc_format(value, fmt):
    """An int as the driver parses it (bnxt_re sscanf "%x" -> 0x1a; irdma kstrtobool/kstrtou32 -> 1)."""
    return "0x%x" % int(value) if fmt == "hex" else str(int(value))


def cc_replay(interface, ibdev, want):
    """[(path, value)] the boot script writes, in order (the apply attribute last)."""
    _device_dir, attr_dir = cc_paths(interface, ibdev)
    out = [("%s/%s" % (attr_dir, attr), cc_format(value, interface["format"])) for attr, value in sorted(want.items())]
    if interface.get("apply"):
        out.append(("%s/%s" % (attr_dir, interface["apply"][0]), cc_format(interface["apply"][1], interface["format"])))
    return out
