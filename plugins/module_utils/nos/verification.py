# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the collection verifies on each switch OS, read from the tables the code runs on: the counters
each NOS's show commands are parsed for (nos/counters.py EVIDENCE), the forwarding checks switch_validate
runs (nos/validation.py SUPPORTED, the BGP summary each reads: nos/bgp_state.py) and the drain line (nos/drain.py). docs/platforms.md carries it
(tools/gen_docs.py), so the docs cannot claim more than the code does. Pure: no Ansible, no I/O."""

from __future__ import annotations

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import PLATFORMS, platforms_doc
from ansible_collections.aifabric.roce.plugins.module_utils.nos import bgp_state, counters, drain, ppd_state, validation

COUNTER_WORDS = {"pfc_rx": "PFC pause rx", "pfc_tx": "PFC pause tx", "ecn_marked": "ECN marked", "drops": "lossless drops",
                 "drop_bytes": "dropped bytes", "wd_storms": "PFC watchdog storms", "wd_restores": "PFC watchdog restores"}


def counters_row(platform):
    """(verified, unverified, not read) counter names of one platform."""
    known = counters.EVIDENCE.get(platform, {})
    verified = [COUNTER_WORDS[c] for c in counters.COUNTERS if known.get(c) == "verified"]
    unverified = [COUNTER_WORDS[c] for c in counters.COUNTERS if known.get(c) == "unverified"]
    absent = [COUNTER_WORDS[c] for c in counters.COUNTERS if known.get(c) is None]
    return verified, unverified, absent


def checks_row(platform):
    """switch_validate checks that run on the platform; the others are reported not run (NOT VERIFIED)."""
    have = validation.SUPPORTED.get(platform, ())
    return [c for c in validation.CHECKS if c in have], [c for c in validation.CHECKS if c not in have]


PPD_READ = {"frr": "`ip route get DST from SRC iif INGRESS` (the kernel's forwarding decision, PBR rules included)",
            "eos": "`show policy-map type pbr | json`: class per host source, `setNexthop`, policy on the L3 ingress",
            "nxos": "`show route-map`: sequence matching the host's ACL, `ip next-hop`",
            "nvue": "`nv show router pbr map <map> rule -o json`: rule per host source, nexthop group, `installed`",
            "community_sonic": "`show acl table <t>` / `show acl rule <t>`: table bound to the host port, redirect rule per "
                               "host source (`SRC_IP`, `REDIRECT:<next hop>`), status `Active` (the rules are pushed only "
                               "under `fabric.community_sonic_pbr: gcu_ignore_acl_rule`: sonic-acl.yang refuses the "
                               "redirect)"}


def ppd_row(platform):
    """How the PPD path check reads a platform's forwarding state, or why it does not run."""
    if platform in ppd_state.PLATFORMS + ("frr",) and "ppd_paths" in validation.SUPPORTED.get(platform, ()):
        return PPD_READ[platform]
    return "not run (**unverified**): no captured PBR show output of %s to test a parser on" % platform


BGP_NOT_READ = {
    "asternos": "no BGP is configured on AsterNOS here, and no captured AsterNOS BGP summary (Asterfusion's guides "
                "stop after their first pages)",
    "dell_sonic": "no captured klish `show bgp ipv4 unicast summary` of Dell Enterprise SONiC",
}


def bgp_row(platform):
    """The command the BGP session check reads on a platform, or why it does not run."""
    if platform in bgp_state.COMMANDS and "bgp_sessions" in validation.SUPPORTED.get(platform, ()):
        return "`%s`" % bgp_state.COMMANDS[platform]
    return "not run (**unverified**): %s" % BGP_NOT_READ.get(platform, "no captured BGP summary of %s" % platform)


def drain_row(platform):
    line = drain.DRAIN.get(platform)
    if line and "setting" in line:   # a CONFIG_DB field, set on and off
        return "`%s` %s / %s" % (line["setting"], line["on"], line["off"])
    if line:
        return "`%s`" % line["line"]
    return "none: %s" % drain.UNSUPPORTED.get(platform, "no drain line known for %s" % platform)


def _words(names):
    return ", ".join(names) or "none"


def verification_doc():
    """The "What is verified on the switch" section of docs/platforms.md."""
    out = ["", "## What is verified on the switch", "",
           "Generated from `nos/counters.py` (`EVIDENCE`), `nos/validation.py` (`SUPPORTED`) and `nos/drain.py`: "
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
        verified, unverified, absent = counters_row(platform)
        run, not_run = checks_row(platform)
        out.append("| `%s` | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            platform, _words(verified), _words(unverified), _words(absent), _words(run), _words(not_run),
            bgp_row(platform).replace("|", "\\|"), ppd_row(platform).replace("|", "\\|"),
            drain_row(platform).replace("|", "\\|")))
    return "\n".join(out) + "\n"


def platforms_page():
    """docs/platforms.md: the platform table, then what is verified on each switch."""
    return platforms_doc() + verification_doc()
