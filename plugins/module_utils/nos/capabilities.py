# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each platform of a plan will not configure and what its checks cannot verify, in words from its driver's
declarations (``sections``, ``opt_ins``, ``checks``, the ``why`` of an ``Unsupported`` ``bgp_summary`` / ``ppd_read``):
plan.yml prints them as warnings and writes them in report.md before any switch is touched."""

from __future__ import annotations

from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

# the sections the switch role plans per role (roles/switch/defaults/main.yml switch_sections_planned)
SECTIONS = ("qos", "mtu", "pbr", "underlay")
ROLE_SECTIONS = {"leafs": SECTIONS, "spines": ("qos", "mtu", "underlay")}
# the checks validate.yml runs by default, per role (ppd_paths: leafs, the switches that bind host ports); failover
# is a maintenance-window check on request (validate_failover), left out here
CHECKS = ("bgp_sessions", "ppd_paths")
ROLE_CHECKS = {"leafs": CHECKS, "spines": ("bgp_sessions",)}
SECTION_WORDS = {"qos": "RoCE QoS", "mtu": "port MTU", "pbr": "PPD port binding (policy routes)",
                 "underlay": "routed underlay (addresses, eBGP)"}
CHECK_WORDS = {"bgp_sessions": "BGP sessions", "ppd_paths": "PPD path per host port", "failover": "bound-uplink failover"}


def _why_not_checked(driver, check):
    fact = {"bgp_sessions": driver.bgp_summary, "ppd_paths": driver.ppd_read}.get(check)
    why = getattr(fact, "why", None) if fact is not None and not fact else None
    return why or "no witnessed implementation of %s for %s (validate.yml reports it not run)" % (check, driver.name)


def platform_notes(plan):
    """[{platform, switches, not_configured: [(section, why)], not_verified: [(check, why)]}] for every platform of
    the plan with something it will not configure or cannot verify, sorted by platform."""
    used = {}
    for role in ("leafs", "spines"):
        for name, intent in sorted((plan.get(role) or {}).items()):
            used.setdefault(intent["platform"], {}).setdefault(role, []).append((name, intent))
    notes = []
    for platform, roles in sorted(used.items()):
        driver = get_driver(platform)
        wanted = [s for s in SECTIONS if any(s in ROLE_SECTIONS[r] for r in roles)]
        not_configured = []
        for section in wanted:
            if section not in driver.sections:
                not_configured.append((section, "the %s driver renders %s only" % (
                    platform, ", ".join(SECTION_WORDS[s] for s in driver.sections))))
                continue
            need = (driver.opt_ins or {}).get(section)
            if need:
                key, value, why = need
                off = sorted(name for r in roles for name, intent in roles[r] if intent.get(key) != value)
                if off:
                    not_configured.append((section, "%s; it is pushed only with fabric.%s: %s (%d switch%s without it)"
                                           % (why, key, value, len(off), "" if len(off) == 1 else "es")))
        checks = [c for c in CHECKS if any(c in ROLE_CHECKS[r] for r in roles)]
        not_verified = [(check, _why_not_checked(driver, check)) for check in checks if check not in driver.checks]
        if not_configured or not_verified:
            notes.append({"platform": platform, "switches": sorted(pair[0] for r in roles for pair in roles[r]),
                          "not_configured": not_configured, "not_verified": not_verified})
    return notes


def _switches(names):
    return ", ".join(names[:4]) + (" and %d more" % (len(names) - 4) if len(names) > 4 else "")


def warning_lines(notes):
    """One line per platform: what it will not configure, then what cannot be verified, each with why."""
    out = []
    for note in notes:
        parts = []
        if note["not_configured"]:
            by_why = {}
            for section, why in note["not_configured"]:
                by_why.setdefault(why, []).append(SECTION_WORDS[section])
            parts.append("will not configure %s" % "; ".join(
                "%s (%s)" % (", ".join(words), why) for why, words in by_why.items()))
        if note["not_verified"]:
            parts.append("cannot verify %s" % "; ".join(
                "%s (%s)" % (CHECK_WORDS[c], why) for c, why in note["not_verified"]))
        out.append("platform %s (%s): %s" % (note["platform"], _switches(note["switches"]), "; ".join(parts)))
    return out


def report_lines(notes):
    """The report.md section: a table per platform, section by section, check by check, with why."""
    if not notes:
        return []
    out = ["## What each platform will not configure or cannot verify", "",
           "From each NOS driver's declarations (what it renders, what validate.yml can read back there): the switch "
           "role pushes nothing else to these switches, and these checks are reported *not run* there.", "",
           "| platform | switches | not configured | not verifiable |", "|---|---|---|---|"]
    for note in notes:
        out.append("| %s | %s | %s | %s |" % (
            note["platform"], _switches(note["switches"]),
            "<br>".join("%s: %s" % (SECTION_WORDS[s], why) for s, why in note["not_configured"]) or "-",
            "<br>".join("%s: %s" % (CHECK_WORDS[c], why) for c, why in note["not_verified"]) or "-"))
    return out + [""]
