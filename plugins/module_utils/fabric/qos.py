# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RoCE QoS profiles: one profile drives both the host side and the switch side.

Sources for every default are listed in docs/qos.md.
"""

from __future__ import annotations

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError, FabricProblem

# ECT(0) in the two low ToS bits: RoCE packets must be ECN-capable for DCQCN marking.
_ECT0 = 0x2

PROFILES = {
    "roce_lossless": {
        "trust": "dscp",
        "roce_dscp": 26,
        "roce_priority": 3,
        "cnp_dscp": 48,
        "cnp_priority": 6,
        "lossless_priorities": [3],
        # Every other DSCP goes to this (lossy) priority. Left to the NOS defaults, DSCP 24-31 would share the
        # lossless priority 3 (EOS, Cumulus and mlx5 map DSCP // 8 by default): the switch map is complete.
        "dscp_default_priority": 0,
        "pfc_watchdog": True,
        # PFC watchdog: NVUE polls every 100 ms and acts after `robustness` polls (CL QoS guide defaults 100 ms x 3);
        # we detect after 2 x 100 ms = 200 ms and restore after 400 ms, dropping the stormed queue meanwhile.
        "pfc_watchdog_poll_ms": 100,
        "pfc_watchdog_detect_ms": 200,
        "pfc_watchdog_restore_ms": 400,
        # ETS: DWRR shares of the egress scheduler, RoCE queue vs default queue (NVIDIA RoCE default TC3 50 / TC0 50;
        # Cisco roce_enable.py `bandwidth remaining percent 50` on q3 and q-default). CNP stays strict.
        "ets_roce_percent": 50,
        "ets_default_percent": 50,
        # Share of the switch buffer for the lossless pool (CL QoS guide "Flow Control Buffers": 50 / 50)
        "lossless_pool_percent": 50,
        # Cable length that sizes PFC headroom where the NOS asks for it (Enterprise SONiC `cable-length 40m`,
        # dellemc.enterprise_sonic sonic_qos_interfaces example; SONiC's default for server-facing ports is 40m)
        "cable_length_m": 40,
        "ecn_queue": 3,
        "ecn_min_kbytes": 150,
        "ecn_max_kbytes": 1500,
        "ecn_probability_percent": 100,
        "cnp_strict_priority": True,
        "host_mtu": 9000,
        "switch_mtu": 9216,
        "roce_mtu": 4096,
    },
}

_INT_RANGES = {
    "roce_dscp": (0, 63), "cnp_dscp": (0, 63), "roce_priority": (0, 7), "cnp_priority": (0, 7), "dscp_default_priority": (0, 7),
    "ecn_queue": (0, 7), "ecn_min_kbytes": (1, 1 << 20), "ecn_max_kbytes": (1, 1 << 20),
    "ecn_probability_percent": (1, 100), "host_mtu": (1280, 9216), "switch_mtu": (1280, 9416),
    "roce_mtu": (256, 4096),
    "pfc_watchdog_poll_ms": (100, 1000), "pfc_watchdog_detect_ms": (100, 5000), "pfc_watchdog_restore_ms": (100, 60000),
    "ets_roce_percent": (1, 99), "ets_default_percent": (1, 99), "lossless_pool_percent": (1, 99),
    "cable_length_m": (1, 10000),
}
_ROCE_MTUS = (256, 512, 1024, 2048, 4096)
# String keys take a value from a fixed list: they reach switch CLIs (`qos trust %s`) and host tools
# (`mlnx_qos --trust`, `dcb apptrust ... order`). Only DSCP trust is rendered correctly by every
# consumer (EOS spells PCP trust `cos`, the NVUE driver always sets `l3`), so it is the only choice.
STRING_CHOICES = {"trust": ("dscp",)}


def resolve(qos, path="fabric.qos"):
    """Return the effective profile (a new dict) for ``{'profile': name, 'overrides': {...}}``."""
    name = qos.get("profile")
    if name not in PROFILES:
        raise FabricError([FabricProblem(path + ".profile", "unknown QoS profile %r" % (name,),
                                         "use one of %s" % ", ".join(sorted(PROFILES)))])
    profile = dict(PROFILES[name])
    problems = []
    for key, value in (qos.get("overrides") or {}).items():
        key_path = "%s.overrides.%s" % (path, key)
        if key not in profile:
            problems.append(FabricProblem(key_path, "not a key of QoS profile %r" % name,
                                          "use one of %s" % ", ".join(sorted(profile))))
            continue
        expected = type(profile[key])
        if key in STRING_CHOICES and value not in STRING_CHOICES[key]:
            problems.append(FabricProblem(key_path, "%s is not one of %s" % (_shown(value), ", ".join(STRING_CHOICES[key])),
                                          "use one of %s" % ", ".join(STRING_CHOICES[key])))
            continue
        if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
            problems.append(FabricProblem(key_path, "expected an integer, got %r" % (value,), "write a whole number"))
            continue
        if expected is bool and not isinstance(value, bool):
            problems.append(FabricProblem(key_path, "expected true or false, got %r" % (value,), "write true or false"))
            continue
        if expected is list and not (isinstance(value, list) and all(
                isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 7 for v in value)):
            problems.append(FabricProblem(key_path, "expected a list of priorities 0-7", "e.g. [3]"))
            continue
        if key in _INT_RANGES and not _INT_RANGES[key][0] <= value <= _INT_RANGES[key][1]:
            problems.append(FabricProblem(key_path, "%r is outside %d..%d" % ((value,) + _INT_RANGES[key]),
                                          "use a value in %d..%d" % _INT_RANGES[key]))
            continue
        profile[key] = value
    problems.extend(_consistency(profile, path))
    if problems:
        raise FabricError(problems)
    profile["name"] = name
    # Derived, never typed: DSCP in the 6 high bits, ECT(0) in the 2 low bits (26 -> 106).
    profile["roce_tos"] = (profile["roce_dscp"] << 2) | _ECT0
    profile["dscp_to_priority"] = {str(profile["roce_dscp"]): profile["roce_priority"],
                                   str(profile["cnp_dscp"]): profile["cnp_priority"]}
    return profile


def complete_dscp_map(profile):
    """All 64 DSCPs -> priority: the RoCE and CNP classes, every other DSCP to ``dscp_default_priority``.
    Switch drivers render this, so no DSCP keeps a NOS default (which would put DSCP 24-31 on the lossless
    priority 3). Returns [(dscp, priority)] in DSCP order."""
    explicit = dict((int(d), int(p)) for d, p in profile["dscp_to_priority"].items())
    default = int(profile.get("dscp_default_priority", 0))
    return [(dscp, explicit.get(dscp, default)) for dscp in range(64)]


def _shown(value, limit=40):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "...'"


def _consistency(profile, path):
    problems = []
    over = path + ".overrides"
    if profile["roce_dscp"] == profile["cnp_dscp"]:
        problems.append(FabricProblem(over + ".cnp_dscp", "CNP and RoCE data share DSCP %d" % profile["cnp_dscp"],
                                      "give CNPs their own DSCP (default 48)"))
    if profile["roce_priority"] not in profile["lossless_priorities"]:
        problems.append(FabricProblem(over + ".lossless_priorities",
                                      "the RoCE priority %d is not lossless (PFC off)" % profile["roce_priority"],
                                      "include %d in lossless_priorities" % profile["roce_priority"]))
    if profile["dscp_default_priority"] in profile["lossless_priorities"]:
        problems.append(FabricProblem(over + ".dscp_default_priority",
                                      "every unclassified DSCP would ride the PFC-paused priority %d" % profile["dscp_default_priority"],
                                      "pick a priority outside lossless_priorities (default 0)"))
    if profile["cnp_priority"] in profile["lossless_priorities"]:
        problems.append(FabricProblem(over + ".cnp_priority", "CNPs would ride a PFC-paused priority",
                                      "map CNPs to a priority outside lossless_priorities (default 6)"))
    if profile["ecn_min_kbytes"] >= profile["ecn_max_kbytes"]:
        problems.append(FabricProblem(over + ".ecn_min_kbytes", "ECN min threshold is not below the max",
                                      "make ecn_min_kbytes < ecn_max_kbytes"))
    if profile["ets_roce_percent"] + profile["ets_default_percent"] > 100:
        problems.append(FabricProblem(over + ".ets_roce_percent", "ETS shares %d + %d exceed 100%%"
                                      % (profile["ets_roce_percent"], profile["ets_default_percent"]),
                                      "make ets_roce_percent + ets_default_percent at most 100"))
    if profile["pfc_watchdog_detect_ms"] % profile["pfc_watchdog_poll_ms"]:
        problems.append(FabricProblem(over + ".pfc_watchdog_detect_ms", "detection time %d ms is not a whole number "
                                      "of %d ms polls" % (profile["pfc_watchdog_detect_ms"], profile["pfc_watchdog_poll_ms"]),
                                      "use a multiple of pfc_watchdog_poll_ms (NVUE counts polls)"))
    if profile["host_mtu"] > profile["switch_mtu"]:
        problems.append(FabricProblem(over + ".host_mtu", "host MTU %d exceeds switch MTU %d"
                                      % (profile["host_mtu"], profile["switch_mtu"]),
                                      "keep switch_mtu >= host_mtu (e.g. 9216 >= 9000)"))
    if profile["roce_mtu"] not in _ROCE_MTUS:
        problems.append(FabricProblem(over + ".roce_mtu", "RoCE active MTU must be an IB MTU",
                                      "use one of %s" % ", ".join(str(m) for m in _ROCE_MTUS)))
    elif profile["roce_mtu"] + 100 > profile["host_mtu"]:
        problems.append(FabricProblem(over + ".roce_mtu", "RoCE MTU %d plus headers does not fit host MTU %d"
                                      % (profile["roce_mtu"], profile["host_mtu"]),
                                      "lower roce_mtu or raise host_mtu"))
    return problems
