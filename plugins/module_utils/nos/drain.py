# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Maintenance drain: before a change that can disturb forwarding, the switch announces its routes with
the BGP GRACEFUL_SHUTDOWN community (RFC 8326), so its neighbours move traffic to the other paths; the
change is applied and verified; then the drain is taken back. Pure logic: which line drains a NOS, how
a managed config looks drained, and which changes need a drain (apply.py runs the three steps).

One line per NOS, inside the default-VRF ``router bgp`` the underlay section owns. The line is a
maintenance state, not intent: the drivers leave it out of the managed view (a switch someone else
drained stays drained, and is never "drift"), so it shows in the Image's ``outside`` part, where apply.py
checks that its drain added exactly that line and its undrain took exactly that line back.

* FRR 8.4: ``bgp graceful-shutdown`` (FRR user guide, BGP, "Graceful Shutdown"; accepted and printed by
  the FRR 8.4.4 engine of the twin, after ``no bgp ebgp-requires-policy``). FRR receivers lower a
  GSHUT-tagged path to local-preference 0 by themselves.
* NX-OS: ``graceful-shutdown activate`` (cisco.nxos ``nxos_bgp_global``: ``graceful_shutdown.activate``;
  Cisco Nexus 9000 Unicast Routing Guide, BGP graceful shutdown). Receivers honour it by default
  (``graceful-shutdown aware``).
* NVUE: ``nv set router bgp graceful-shutdown on`` (NVIDIA NVUE command reference, BGP).
* community SONiC: not a line but a CONFIG_DB field, ``BGP_DEVICE_GLOBAL|STATE tsa_enabled`` ``true`` / ``false``
  (SONiC's traffic shift away, the state its ``TSA`` / ``TSB`` scripts set), changed by a GCU patch; the drain and
  the undrain each move only that field (``is_drain_setting``), proven by the read-back.

``auto`` drains spines (their traffic has the other spines to go to) and not host-facing leafs (their hosts are
single-homed on them: nothing to move, measured to cost probes on the twin); ``always`` drains both.

No drain here (the run goes on undrained and says so): EOS drains through maintenance mode (``maintenance``
/ ``unit System`` / ``quiesce``, Arista EOS User Manual, Maintenance Mode), a block outside the managed
``router bgp``; Enterprise SONiC klish: no vendor source for a graceful-shutdown line found; AsterNOS: no BGP is
configured there (Easy RoCE QoS only).
"""

from __future__ import annotations

import re

DRAIN = {
    "frr": {"line": "bgp graceful-shutdown", "after": ("no bgp ebgp-requires-policy", "bgp router-id ")},
    "nxos": {"line": "graceful-shutdown activate"},
    "nvue": {"line": "nv set router bgp graceful-shutdown on"},
    # a CONFIG_DB setting, not a line: SONiC's traffic shift away (TSA) is BGP_DEVICE_GLOBAL|STATE tsa_enabled
    # (sonic-yang-models sonic-bgp-device-global.yang, boolean, default false; doc/Configuration.md "BGP Device
    # Global": "When tsa_enabled is set to true, the device is isolated using traffic-shift-away (TSA) route-maps in
    # BGP"; sonic-buildimage dockers/docker-fpm-frr/base_image_files/TSA writes it, bgpcfgd applies it), set by a
    # GCU patch like every change (the GCU design's own example patches /BGP_DEVICE_GLOBAL/STATE/tsa_enabled)
    "community_sonic": {"setting": "BGP_DEVICE_GLOBAL > STATE > tsa_enabled", "on": "true", "off": "false",
                        "pointer": "/BGP_DEVICE_GLOBAL/STATE/tsa_enabled", "ours": "DEVICE_METADATA|localhost bgp_asn "},
}

UNSUPPORTED = {
    "eos": "EOS drains through maintenance mode (maintenance / unit System / quiesce), outside the managed "
           "router bgp: not rendered yet",
    "dell_sonic": "no vendor source for a BGP graceful-shutdown line in Enterprise SONiC klish",
    "asternos": "no BGP is configured on AsterNOS (Easy RoCE QoS only), and no Asterfusion source for a graceful-shutdown line",
}

BGP_HEADER = re.compile(r"^router bgp \d+\s*$")

# Managed sections whose change can disturb forwarding: the underlay (BGP sessions, p2p addresses) and the
# port MTU (a link flap on many ASICs); QoS only when it is first applied (lossless buffers are carved
# then); PBR changes are applied undrained (the binding moves one host port at a time).
DISTURBING = ("underlay", "mtu")


def supported(driver):
    return driver.name in DRAIN


def why_not(driver):
    return UNSUPPORTED.get(driver.name, "no drain line known for %s" % driver.name)


def drain_line(driver):
    entry = DRAIN[driver.name]
    return entry["line"] if "line" in entry else "%s %s" % (entry["setting"], entry["on"])


def is_drain_setting(driver, path):
    """True for a path that is the drain setting in any state (a CONFIG_DB field with its value, the drain line):
    what a drain or an undrain may move, and nothing else."""
    entry = DRAIN.get(driver.name) or {}
    if "setting" in entry:
        return path.startswith(entry["setting"] + " ")
    return bool(drain_paths(driver, [path]))


def is_drain_child(driver, parent, child):
    """True for the drain line under the default-VRF ``router bgp``: a maintenance state, never part of
    the managed view (a switch someone else drained stays drained; ours is added and taken back here)."""
    entry = DRAIN.get(driver.name)
    return bool(entry) and child.strip() == entry["line"] and bool(BGP_HEADER.match(parent))


def drain_paths(driver, outside):
    """The drain line(s) in an Image's ``outside`` paths."""
    if not supported(driver):
        return []
    if "setting" in DRAIN[driver.name]:
        return [p for p in outside if p == drain_line(driver)]
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.flatpath import FlatPathDriver
    line = drain_line(driver)
    if isinstance(driver, FlatPathDriver):   # a flat NOS: the line is its own full path (Driver.paths)
        return [p for p in outside if p in driver.paths(line)]
    return [p for p in outside if p.endswith(" > " + line) and BGP_HEADER.match(p.split(" > ")[0])]


# Drains by another mechanism than our line, reported by the audit (this collection never sends them):
# EOS maintenance mode puts the whole box in maintenance with `maintenance` / ` unit System` / `  quiesce`
# (Arista EOS User Manual, Maintenance Mode; no captured running config seen: unverified).
OTHER = {
    "eos": re.compile(r"^maintenance > unit System > quiesce$"),
}


def drained_by_anyone(driver, outside):
    """Every drain the running config shows (ours or an engineer's): our drain line, or the NOS's own
    maintenance mode where we know its shape."""
    rx = OTHER.get(driver.name)
    return drain_paths(driver, outside) + ([p for p in outside if rx.match(p)] if rx else [])


def blocked(driver, managed, outside):
    """Why this switch cannot be drained by this collection now, or None."""
    entry = DRAIN.get(driver.name) or {}
    if "setting" in entry:
        if not any(line.startswith(entry["ours"]) for line in managed.splitlines()):
            return "no BGP of this plan on the switch yet (DEVICE_METADATA bgp_asn)"
        if not any(is_drain_setting(driver, p) for p in outside):
            return ("the switch shows no %s (a SONiC whose TSA is not kept in CONFIG_DB): drain it by hand with sudo TSA "
                    "/ TSB" % entry["setting"].replace(" > ", "|", 1).replace(" > ", " "))
        return None
    return "no router bgp of this plan on the switch yet" if commands(driver, managed, True) is None else None


def commands(driver, managed, on):
    """Config commands that add (``on``) or take back the drain line, for the NOS's plain push
    (the transaction's ``push_reverse``); None when the managed config has no ``router bgp`` of ours.
    A CONFIG_DB NOS: one JSON Patch op setting the drain field (``blocked`` says when the switch lacks it)."""
    entry = DRAIN[driver.name]
    if "setting" in entry:
        import json
        if not any(line.startswith(entry["ours"]) for line in managed.splitlines()):
            return None
        return [json.dumps({"op": "replace", "path": entry["pointer"], "value": entry["on" if on else "off"]},
                           sort_keys=True)]
    line = drain_line(driver)
    if line.startswith("nv set "):
        if not any(ln.startswith("nv set router bgp ") for ln in managed.splitlines()):
            return None
        return [line] if on else ["nv unset " + line[len("nv set "):].rsplit(" ", 1)[0]]
    heads = [ln for ln in managed.splitlines() if BGP_HEADER.match(ln)]
    if not heads:
        return None
    pad = " " * driver.indent
    body = [heads[0].strip(), pad + (line if on else "no " + line)]
    return body + (["exit"] if driver.name == "frr" else [])


def single_homed_leaf(intent):
    """A leaf whose downlinks are hosts: in a rail-optimized fabric each host NIC has this one leaf, so a drain
    has no other path to move that traffic to; it only makes the leaf re-install its routes (measured on the
    twin: a timers rollout lost 2 cross-rail probes per leaf with the drain, none without; docs/benchmarks.md)."""
    if intent.get("kind"):
        return intent["kind"] == "leaf"
    return any(d.get("server") for d in intent.get("downlinks") or [])


def reasons(driver, before, intent, qos, sections):
    """Why this change needs a drain: the disturbing sections it changes (empty: no drain needed)."""
    out = []
    for sec in sections:
        if sec not in DISTURBING and sec != "qos":
            continue
        have = driver.parse(before, intent, (sec,))
        want = driver.render(intent, qos, (sec,))
        if sec == "qos":
            if not have.strip() and want.strip():
                out.append("first QoS/lossless buffer init")
        elif driver.diff(have, want):
            out.append("%s changes" % sec)
    return out
