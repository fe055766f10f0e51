# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL settings of one GPU host from its plan slice, rendered as /etc/nccl.conf or a profile script.

Variables and their accepted values: NCCL user guide, "Environment Variables"
(https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html); see docs/nccl.md.
NCCL reads /etc/nccl.conf itself (src/misc/param.cc setEnvFile): one NAME=value per line, the value
taken verbatim to the end of the line (no quoting, no escapes), lines starting with '#' skipped,
and a variable already in the environment is not overridden. So every value here is checked
against a strict character set: nothing that a shell or that parser would read differently.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.aifabric.roce.plugins.module_utils.host import stacks

CONF_PATH = "/etc/nccl.conf"
PROFILE_PATH = "/etc/profile.d/aifabric-nccl.sh"
HEADER = "# Rendered by aifabric.roce from the fabric plan; edits are overwritten (docs/nccl.md).\n"

# Order in the rendered files: plan-derived first, then topology, then the optional topology file.
ORDER = ("NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_TC", "NCCL_SOCKET_IFNAME", "NCCL_CROSS_NIC", "NCCL_TOPO_FILE")
CROSS_NIC_VALUES = ("0", "1", "2")

_NAME_RE = re.compile(r"^NCCL_[A-Z0-9_]{1,60}$")
# Values: no whitespace, quotes, '#', '$', '`', '\\', ';', '&', '|', '<', '>' or newline.
_VALUE_RE = re.compile(r"^[A-Za-z0-9_.,:=^/+@%-]{1,1000}$")
# NCCL_IB_HCA: [^][=]<hca>[:<port>[:<rail>[:<plane>]]](,...) (env.html, NCCL_IB_HCA)
_HCA_ITEM = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}(:[0-9]*(:-?[0-9]+(:-?[0-9]+)?)?)?"
_HCA_RE = re.compile(r"^\^?=?%s(,%s)*$" % (_HCA_ITEM, _HCA_ITEM))
_IFNAME_RE = re.compile(r"^[\^=]?[A-Za-z0-9][A-Za-z0-9._-]*(,=?[A-Za-z0-9][A-Za-z0-9._-]*)*$")
_PATH_RE = re.compile(r"^/[A-Za-z0-9_./+-]{1,1000}$")


class NcclError(ValueError):
    """Bad input: the message names the key and the fix."""


def cross_nic_for(nics):
    """NCCL_CROSS_NIC from the host's rail NICs and their leafs (env.html, NCCL_CROSS_NIC).

    Every NIC on its own leaf (a rail-optimized fabric, per-NIC switches): 0, always the same NIC
    for a ring/tree so traffic stays on its rail. All NICs on one switch: 1. A mix, or leafs not
    known: 2 (NCCL's default, prefer the same NIC). One NIC or none: None (no effect, not written).
    """
    if len(nics) < 2:
        return None
    leafs = [nic.get("leaf") for nic in nics]
    if any(not leaf for leaf in leafs):
        return "2"
    if len(set(leafs)) == len(leafs):
        return "0"
    if len(set(leafs)) == 1:
        return "1"
    return "2"


_RCCL_NAME_RE = re.compile(r"^RCCL_[A-Z0-9_]{1,60}$")


def _check(name, value):
    """Problem text for one variable, or None. Names are an open list: any NCCL_*/RCCL_* name of the right shape is
    accepted (a library version newer than the collection's lists reads more); variable_warnings names the unknown
    ones. What is refused is what a source says is wrong: a value NCCL's config parser or a shell would misread, and
    the values the NCCL docs bound (below)."""
    if not (_NAME_RE.fullmatch(name) or _RCCL_NAME_RE.fullmatch(name)):
        return ("%s: not an NCCL_* or RCCL_* variable name (the prefix followed by capitals, digits and '_')" % name)
    if not isinstance(value, str) or not _VALUE_RE.fullmatch(value):
        return ("%s: value %r may use letters, digits and . , : = ^ / + @ %% _ - only (no spaces, quotes or "
                "shell characters: NCCL reads the rest of the line verbatim)" % (name, value))
    if name == "NCCL_IB_HCA" and not _HCA_RE.fullmatch(value):
        return "NCCL_IB_HCA: %r is not [^][=]<hca>[:<port>[:<rail>[:<plane>]]],... e.g. '=mlx5_0,mlx5_1'" % value
    if name == "NCCL_SOCKET_IFNAME" and not _IFNAME_RE.fullmatch(value):
        return "NCCL_SOCKET_IFNAME: %r is not a comma list of interface names or prefixes led by '^' or '=' (e.g. '=eno1')" % value
    if name == "NCCL_IB_GID_INDEX" and not (re.fullmatch(r"-?[0-9]{1,3}", value) and -1 <= int(value) <= 255):
        return "NCCL_IB_GID_INDEX: %r is not an integer from -1 to 255 (the RoCEv2 IPv4 GID index, see show_gids)" % value
    if name == "NCCL_IB_TC" and not (re.fullmatch(r"[0-9]{1,3}", value) and int(value) <= 255):
        return "NCCL_IB_TC: %r is not an integer from 0 to 255 (the RoCE ToS byte, DSCP << 2)" % value
    if name == "NCCL_CROSS_NIC" and value not in CROSS_NIC_VALUES:
        return "NCCL_CROSS_NIC: %r is not 0, 1 or 2" % value
    if name == "NCCL_TOPO_FILE" and (not _PATH_RE.fullmatch(value) or "/../" in value + "/"):
        return "NCCL_TOPO_FILE: %r is not an absolute path of plain characters" % value
    return None


def build_settings(nccl, nics=(), qos=None, cross_nic="auto", topo_file=None, extra=None):
    """The variables to write, as {name: str value}. Raises NcclError naming the key and the fix.

    ``nccl`` is the plan slice's ``nccl`` (NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_IB_TC,
    NCCL_SOCKET_IFNAME computed by the planner), ``nics`` its rail NICs (for NCCL_CROSS_NIC),
    ``qos`` its QoS profile (NCCL_IB_TC must carry the RoCE DSCP), ``extra`` more NCCL_* variables.
    """
    if not isinstance(nccl, dict):
        raise NcclError("nccl: expected the plan slice's nccl mapping (lookup('aifabric.roce.device_intent', host).nccl)")
    settings = {}
    for name, value in nccl.items():
        if value is None or value == "":
            continue
        settings[str(name)] = str(value)
    if cross_nic == "auto":
        chosen = cross_nic_for(list(nics or []))
    elif cross_nic in ("none", None, ""):
        chosen = None
    else:
        chosen = str(cross_nic)
    if chosen is not None:
        settings["NCCL_CROSS_NIC"] = chosen
    if topo_file:
        settings["NCCL_TOPO_FILE"] = str(topo_file)
    for name, value in (extra or {}).items():
        if str(name) in settings:
            raise NcclError("extra.%s: already set from the plan (%s); change the fabric intent instead" % (name, settings[str(name)]))
        settings[str(name)] = "" if value is None else str(value)
    problems = [p for p in (_check(name, value) for name, value in sorted(settings.items())) if p]
    if qos and settings.get("NCCL_IB_TC") and qos.get("roce_dscp") is not None and _check("NCCL_IB_TC", settings["NCCL_IB_TC"]) is None:
        if int(settings["NCCL_IB_TC"]) >> 2 != int(qos["roce_dscp"]):
            problems.append("NCCL_IB_TC: %s carries DSCP %d, the QoS profile's RoCE DSCP is %s (TC = DSCP << 2 | ECN bits)"
                            % (settings["NCCL_IB_TC"], int(settings["NCCL_IB_TC"]) >> 2, qos["roce_dscp"]))
    for required in ("NCCL_IB_HCA",):
        if required not in settings:
            problems.append("%s: missing from the plan slice's nccl hints (re-run the plan role)" % required)
    if problems:
        raise NcclError("; ".join(problems))
    return settings


def variable_warnings(settings):
    """Warnings for RCCL_* names outside stacks.RCCL_VARIABLES, naming the version the list was checked against: the
    setting is written as given (a newer RCCL may read it; RCCL adds variables in most releases), never refused."""
    return ["%s: not among the RCCL_* variables of %s, the version this collection checked; written as given (a newer "
            "RCCL may read it) - check the name against your RCCL's documentation" % (name, stacks.RCCL_VARIABLES_CHECKED_AT)
            for name in sorted(settings) if name.startswith("RCCL_") and name not in stacks.RCCL_VARIABLES]


def ordered(settings):
    known = [name for name in ORDER if name in settings]
    return known + sorted(name for name in settings if name not in ORDER)


def render_conf(settings):
    """/etc/nccl.conf text: NAME=value lines, unquoted (NCCL takes the value verbatim)."""
    return HEADER + "".join("%s=%s\n" % (name, settings[name]) for name in ordered(settings))


def render_profile(settings):
    """/etc/profile.d script: export lines, each value single-quoted (checked values hold no quote)."""
    return HEADER + "".join("export %s='%s'\n" % (name, settings[name]) for name in ordered(settings))


def parse_conf(text):
    """Variables of an nccl.conf as NCCL reads them: '#' lines skipped, split at the first '='."""
    out = {}
    for line in (text or "").splitlines():
        line = line.rstrip("\r")
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _sep, value = line.partition("=")
        out.setdefault(name, value)
    return out


def parse_profile(text):
    """Variables of a profile script rendered by render_profile (export NAME='value')."""
    out = {}
    for line in (text or "").splitlines():
        match = re.match(r"^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=(?:'([^']*)'|(\S*))\s*$", line)
        if match:
            out.setdefault(match.group(1), match.group(2) if match.group(2) is not None else match.group(3))
    return out


def drift_items(path, current, wanted):
    """Report items (item, expected, actual) for variables that differ between a file and the plan."""
    items = []
    for name in ordered(dict(wanted, **{k: v for k, v in current.items() if k not in wanted})):
        have, want = current.get(name), wanted.get(name)
        if have != want:
            items.append({"item": "%s %s" % (path, name), "expected": "(absent)" if want is None else want,
                          "actual": "(absent)" if have is None else have})
    return items
