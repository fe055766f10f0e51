# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the collection verifies on each switch OS, from each driver's declarations (``counters``,
``counter_evidence``, ``checks``, ``bgp_summary``, ``ppd_read``, ``drain``): docs/platforms.md and the generated
per-NOS docs (tools/gen_docs.py), so the docs cannot claim more than the code does. Pure: no Ansible, no I/O."""

from __future__ import annotations

import json
import re

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import PLATFORMS, platforms_doc
from ansible_collections.aifabric.roce.plugins.module_utils.nos import counters, validation
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import Driver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

COUNTER_WORDS = {"pfc_rx": "PFC pause rx", "pfc_tx": "PFC pause tx", "ecn_marked": "ECN marked", "drops": "lossless drops",
                 "drop_bytes": "dropped bytes", "wd_storms": "PFC watchdog storms", "wd_restores": "PFC watchdog restores"}


def counters_row(driver):
    """(verified, unverified, not read) counter names of one driver (its ``counter_evidence``)."""
    known = driver.counter_evidence
    return tuple([COUNTER_WORDS[c] for c in counters.COUNTERS if known.get(c) == level]
                 for level in ("verified", "unverified", None))


def checks_row(driver):
    """switch_validate checks that run on the driver's NOS (its ``checks``); the others are reported not run (NOT VERIFIED)."""
    return [c for c in validation.CHECKS if c in driver.checks], [c for c in validation.CHECKS if c not in driver.checks]


def ppd_row(driver):
    """How the PPD path check reads a NOS's forwarding state (its ``ppd_read``), or why it does not run."""
    if driver.ppd_read and "ppd_paths" in driver.checks:
        return driver.ppd_read.describe
    return "not run (**unverified**): %s" % driver.ppd_read.why


def bgp_row(driver):
    """The command the BGP session check reads on a NOS (its ``bgp_summary``), or why it does not run."""
    if driver.bgp_summary and "bgp_sessions" in driver.checks:
        return "`%s`" % driver.bgp_summary.command
    return "not run (**unverified**): %s" % driver.bgp_summary.why


def _words(names):
    return ", ".join(names) or "none"


def verification_doc():
    """The "What is verified on the switch" section of docs/platforms.md."""
    out = ["", "## What is verified on the switch", "",
           "Generated from each NOS driver's declarations (`counter_evidence`, `checks`, `bgp_summary`, `ppd_read`, `drain`): "
           "what each platform's counters, forwarding checks and drain rest on. Counters: **verified** = parsed from a "
           "real capture of that NOS's show output (tests/fixtures, with SOURCE.md); **unverified** = no capture of that "
           "NOS's output (the parser may be tested on a related NOS's: community SONiC's for Enterprise SONiC and AsterNOS); "
           "**not read** = no show command known, the RoCE health section and the "
           "Prometheus export have nothing for it. A forwarding check that does not run on a platform is reported "
           "`not run` and leaves that switch `NOT VERIFIED` in the validation report, never clean. "
           "Drain: the BGP graceful-shutdown line (community SONiC: the traffic-shift-away field) a run sets before a "
           "change that can disturb forwarding; without "
           "one the run goes on undrained and says so. PPD path: what `ppd_paths` reads per host port (the policy "
           "holding its host source and the next hop it sends it to; passed only where that is the plan's uplink "
           "next hop); its parsers are tested on the vendors' published outputs (Arista's ANTA test fixture, Cisco's "
           "genieparser capture, NVIDIA's command reference, sonic-utilities' own acl-loader test output: "
           "tests/fixtures/switches/SOURCE.md), not on a switch of ours. "
           "BGP sessions: the summary `bgp_sessions` reads (every planned neighbor Established with the planned remote "
           "AS, no unplanned session; nos/bgp_state.py, parsers tested on real captures).", "",
           "| platform | counters read (verified) | counters read (unverified) | counters not read | forwarding checks "
           "run (`switch_validate`) | not run (switch NOT VERIFIED) | BGP sessions read with | PPD path read with | drain |",
           "|---|---|---|---|---|---|---|---|---|"]
    for platform in sorted(PLATFORMS):
        driver = get_driver(platform)
        verified, unverified, absent = counters_row(driver)
        run, not_run = checks_row(driver)
        out.append("| `%s` | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            platform, _words(verified), _words(unverified), _words(absent), _words(run), _words(not_run),
            bgp_row(driver).replace("|", "\\|"), ppd_row(driver).replace("|", "\\|"),
            driver.drain.row().replace("|", "\\|")))
    return "\n".join(out) + "\n"


CONTRACT_BEGIN, CONTRACT_END = "<!-- driver-contract:begin -->", "<!-- driver-contract:end -->"


def contract_table():
    """What each registered driver declares (nos/base.py Driver), one row per NOS: docs/adding-a-nos.md."""
    out = ["| platform | family | transaction | sections | drain | switch_validate checks | BGP summary | PPD read | "
           "counters | offline file |", "|---|---|---|---|---|---|---|---|---|---|"]
    for platform in sorted(PLATFORMS):
        driver = get_driver(platform)
        cls = type(driver)
        family = (cls if cls.__bases__[0] is Driver else cls.__bases__[0]).__name__   # a family of its own, or its base
        out.append("| `%s` | `%s` | `%s` | %s | %s | %s | %s | %s | %d command(s) | `.%s`, comment `%s` |" % (
            platform, family, driver.transaction.__name__, ", ".join(driver.sections),
            driver.drain.row().replace("|", "\\|"),
            _words(driver.checks), bgp_row(driver).replace("|", "\\|"), ppd_row(driver).replace("|", "\\|"),
            len(driver.counters), driver.offline_format, driver.comment))
    return "\n".join(out) + "\n"


def _between(text, begin, end, body):
    """``text`` with ``body`` between the marker lines ``begin`` and ``end``."""
    head, _begin, rest = text.partition(begin + "\n")
    return head + begin + "\n" + body + end + rest.partition(end)[2]


def with_contract_table(text):
    """``text`` (docs/adding-a-nos.md) with its generated driver table between the two markers."""
    return _between(text, CONTRACT_BEGIN, CONTRACT_END, contract_table())


PER_NOS_BEGIN = "  # per-NOS:begin - generated by tools/gen_docs.py from the drivers' declarations; do not edit"
PER_NOS_END = "  # per-NOS:end"
WHERE = {"cli": "", "shell": " (Linux shell)", "port": " (per port)"}


def _item(text, width=116):
    """One DOCUMENTATION description item as a YAML double-quoted scalar, folded at spaces (a break reads as one)."""
    words, lines = json.dumps(text).split(" "), [""]
    for word in words:
        if lines[-1] and len(lines[-1]) + 1 + len(word) > width:
            lines.append(word)
        else:
            lines[-1] = (lines[-1] + " " + word) if lines[-1] else word
    return "  - " + "\n    ".join(lines)


def module_items(module):
    """The per-NOS items of a switch module's DOCUMENTATION (switch_config: the sections, transaction, drain and
    opt-ins of each NOS; switch_facts: the config read and the counters read), from each driver's declarations."""
    out = []
    for platform in sorted(PLATFORMS):
        d = get_driver(platform)
        if module == "switch_config":
            need = "; ".join("%s only with fabric.%s=%s (%s)" % (sec, key, value, why)
                             for sec, (key, value, why) in sorted(d.opt_ins.items()))
            drain = re.sub(r"`([^`]+)`", r"C(\1)", d.drain.row())   # markdown code spans -> ansible-doc's C()
            text = "On C(%s) - sections %s; transaction - %s; drain - %s%s." % (
                platform, ", ".join(d.sections), d.transaction.mechanism, drain, ("; " + need) if need else "")
        else:
            reads = ", ".join("C(%s)%s" % (r.command, WHERE[r.where]) for r in d.counters) or "none"
            verified, unverified, absent = counters_row(d)
            text = "On C(%s) - the config read with C(%s); counters read with %s (verified - %s; unverified - %s; " \
                   "not read - %s)." % (platform, d.show_running, reads, _words(verified), _words(unverified), _words(absent))
        out.append(_item(text))
    return "\n".join(out) + "\n"


def with_module_items(text, module):
    """A switch module's source with its generated per-NOS items between the two markers."""
    return _between(text, PER_NOS_BEGIN, PER_NOS_END, module_items(module))


def with_driver_lists(text):
    """A file holding a list of platforms by name (the switch modules' C(platform) choices; the switch role's
    ``switch_underlay_platforms`` default and its argument spec) with the lists written from the registry: every
    driver, and those whose ``sections`` list ``underlay``. A new NOS changes them by tools/gen_docs.py, not by hand."""
    every = "[%s]" % ", ".join(sorted(PLATFORMS))
    underlay = "[%s]" % ", ".join(sorted(p for p in PLATFORMS if "underlay" in get_driver(p).sections))
    # a choices list naming two platforms or more is the platform list (whichever platform comes and goes)
    text = re.sub(r"(?m)^(    choices: )\[([\w, ]*)\]$",
                  lambda m: m.group(1) + every if len(set(m.group(2).split(", ")) & set(PLATFORMS)) > 1 else m.group(0), text)
    text = re.sub(r"(?m)^(switch_underlay_platforms: )\[[^\]]*\]$", lambda m: m.group(1) + underlay, text)
    return re.sub(r"(?ms)^(      switch_underlay_platforms:\n.*?^        default: )\[[^\]]*\]$",
                  lambda m: m.group(1) + underlay, text)


def platforms_page():
    """docs/platforms.md: the platform table, then what is verified on each switch."""
    return platforms_doc() + verification_doc()
