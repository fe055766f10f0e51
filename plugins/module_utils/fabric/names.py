# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Allowlists for every fabric string that reaches a device, a shell or a file path.

Fabric names travel far: port names are typed into switch CLIs (and into NVUE's bash), netdev and
RDMA names land in sysfs paths and root boot scripts, server and switch names become artifact file
names. Rather than escape each of those sinks, the schema admits only characters no sink treats
specially (the sinks quote as well, as defence in depth). Each rule returns a FabricProblem or None.
"""

from __future__ import annotations

import re
import string

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricProblem

# Object names (servers, switches, the fabric): safe as a file name, a hostname and a CLI word.
OBJECT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
OBJECT_NAME_MAX = 63  # a hostname label (RFC 1035) and the NOS hostname limit
SERVER_NAME_MAX = 253  # servers may be FQDNs (RFC 1035 name limit)

# Switch port names: letters, digits and the separators NOS interface names use (Ethernet1/1,
# swp1s0, Eth1/1:1, et-0/0/1). No spaces, quotes, `$`, `;` or newlines: CLIs and bash split on them.
PORT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:-]*$")
PORT_NAME_MAX = 63

# Management ports: the switch's out-of-band path (EOS Management1, NX-OS mgmt0, Dell OS10 mgmt1/1/1,
# SONiC and Cumulus eth0, Junos em0/fxp0/me0/vme, Huawei MEth0/0/0). Fabric config (addresses, MTU, PFC,
# shutdown of unused ports) on one of them cuts the switch off its management network.
MGMT_PORT_RE = re.compile(r"^(?:management|mgmt)|^(?:meth|fxp|em|me|vme)[0-9/:.]*$|^eth0$", re.IGNORECASE)
# The loopback: never a rail NIC (no link, no RDMA device; a rail plan on it breaks local traffic).
LOOPBACK_IFNAME = "lo"

# Linux network interface names: IFNAMSIZ is 16 bytes with the NUL, so 15 characters; the kernel
# refuses '/', ':' and whitespace (dev_valid_name); we also refuse anything a shell would expand.
LINUX_IFNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
LINUX_IFNAME_MAX = 15
# RDMA device names (IB_DEVICE_NAME_MAX is 64 with the NUL); they become configfs/sysfs path parts.
RDMA_NAME_MAX = 63

# NCCL_SOCKET_IFNAME accepts a comma list of prefixes with an optional leading `^` (exclude) or `=`
# (exact match) (NCCL environment variables documentation).
SOCKET_IFNAME_RE = re.compile(r"^[\^=]?[A-Za-z0-9][A-Za-z0-9._-]*(,[A-Za-z0-9][A-Za-z0-9._-]*)*$")

# Platforms whose interface names are Linux netdevs typed into a Linux shell (NVUE: `nv set
# interface swp1 ...` in bash). Their ports follow the Linux rule, not just the common charset.
LINUX_PORT_PLATFORMS = ("nvue",)

# Name patterns: only these format specs (zero padding, width up to 99, integer presentation).
# Wider widths or other specs allocate without bound or give non-names (`{index:>999999999}`).
_FORMAT_SPEC_RE = re.compile(r"^(?:[A-Za-z0-9._-]?[<>^=])?0?(?:[1-9][0-9]?)?[dxXob]?$")

_FIX_OBJECT = "use letters, digits, '.', '_' and '-' only, starting with a letter or digit, at most %d characters"


def shown(text, limit=40):
    """repr() of a possibly hostile string, cut short: error texts must stay readable."""
    text = repr(text)
    return text if len(text) <= limit else text[:limit] + "...'"


def _charset_problem(path, value, regex, maximum, what, fix):
    # fullmatch, not match: `$` also matches before a trailing newline, and "swp1\n" must fail.
    if not isinstance(value, str):
        return FabricProblem(path, "%s must be a string, got %s" % (what, type(value).__name__), fix)
    if len(value) > maximum:
        return FabricProblem(path, "%s %s is %d characters long (at most %d)" % (what, shown(value), len(value), maximum), fix)
    if not regex.fullmatch(value):
        return FabricProblem(path, "%s %s contains characters outside the allowed set" % (what, shown(value)), fix)
    if ".." in value:
        # `..` is a parent-directory step wherever the name becomes a path part.
        return FabricProblem(path, "%s %s contains '..'" % (what, shown(value)), fix)
    return None


def object_name_problem(path, value, what="name", maximum=OBJECT_NAME_MAX):
    return _charset_problem(path, value, OBJECT_NAME_RE, maximum, what, _FIX_OBJECT % maximum)


def port_name_problem(path, value, platform=None):
    fix = "use letters, digits and . _ / : - only, starting with a letter or digit, at most %d characters" % PORT_NAME_MAX
    problem = _charset_problem(path, value, PORT_NAME_RE, PORT_NAME_MAX, "port name", fix)
    if problem is None and MGMT_PORT_RE.search(value):
        problem = FabricProblem(path, "port name %s is a management port (the switch's out-of-band interface), "
                                "not a fabric port" % shown(value),
                                "give port_name the front-panel data port names (e.g. 'Ethernet{port}/{lane}', "
                                "'swp{port}'), or leave port_name out so each NOS gets its own names")
    if problem is None and platform in LINUX_PORT_PLATFORMS:
        problem = _charset_problem(path, value, LINUX_IFNAME_RE, LINUX_IFNAME_MAX,
                                   "%s port name (a Linux interface)" % platform,
                                   "use a Linux interface name such as 'swp1' or 'swp1s0': letters, digits, "
                                   "'.', '_', '-', at most %d characters" % LINUX_IFNAME_MAX)
    return problem


def netdev_problem(path, value):
    return _charset_problem(path, value, LINUX_IFNAME_RE, LINUX_IFNAME_MAX, "Linux interface name",
                            "use the host's interface name: letters, digits, '.', '_', '-', at most %d "
                            "characters (IFNAMSIZ)" % LINUX_IFNAME_MAX)


def rail_netdev_problem(path, value):
    """A rail NIC's netdev: a Linux interface name, and not the loopback."""
    problem = netdev_problem(path, value)
    if problem is None and value == LOOPBACK_IFNAME:
        problem = FabricProblem(path, "%s is the loopback interface, not a rail NIC" % shown(value),
                                "use the rail NIC's own interface name as the host shows it (`ip link`, e.g. "
                                "'ens1f0np0' or 'eth1')")
    return problem


def rdma_problem(path, value):
    return _charset_problem(path, value, LINUX_IFNAME_RE, RDMA_NAME_MAX, "RDMA device name",
                            "use the name `ibv_devices` prints (e.g. mlx5_0): letters, digits, '.', '_', '-', "
                            "at most %d characters" % RDMA_NAME_MAX)


def socket_ifname_problem(path, value):
    return _charset_problem(path, value, SOCKET_IFNAME_RE, 255, "NCCL_SOCKET_IFNAME",
                            "write interface names or prefixes separated by commas, optionally starting with "
                            "'^' (exclude) or '=' (exact), e.g. 'eno1' or '^docker,lo'")


def pattern_problem(path, pattern, fields):
    """Check a name pattern's replacement fields before anything is formatted with it.

    Only plain fields from ``fields`` with a small integer format spec are allowed: attribute and
    index lookups (`{port.vlan}`, `{index[0]}`) raise arbitrary exceptions, huge widths exhaust memory.
    """
    allowed = ", ".join("{%s}" % f for f in sorted(fields))
    try:
        parsed = list(string.Formatter().parse(pattern))
    except ValueError as exc:
        return FabricProblem(path, "cannot format %s (%s)" % (shown(pattern), exc),
                             "write a format string such as 'gpu{index:03d}'; a literal brace is written '{{' or '}}'")
    for _literal, field, spec, conversion in parsed:
        if field is None:
            continue
        if field not in fields:
            return FabricProblem(path, "cannot format %s: it uses the field {%s}" % (shown(pattern), field),
                                 "use only the fields %s, without attributes or indexes" % allowed)
        if conversion is not None or not _FORMAT_SPEC_RE.fullmatch(spec or ""):
            written = "{%s%s%s}" % (field, "!" + conversion if conversion else "", ":" + spec if spec else "")
            return FabricProblem(path, "cannot format %s: it has the format spec %s" % (shown(pattern), shown(written)),
                                 "use a plain field or zero padding up to width 99, e.g. {%s:03d}" % sorted(fields)[0])
    return None
