# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GOM's probe plan against the twin's kernels, hop by hop (run as root on the twin's machine).

    gom.py --plan plan.json --prefix aif- [--stand-in]

1. Plans the probes (plugins/module_utils/gom/probes.py) choosing each probe's UDP source port by
   asking the bound spine's kernel which parallel link it takes (``ip route get <dst> from <src> iif
   <spine port> ipproto udp sport S dport 4791``): the Linux L4 hash (siphash under a per-boot key)
   cannot be computed offline. ``--stand-in`` plans with the offline crc32 stand-in instead.
2. Follows every probe hop by hop with the kernel's own route lookups for its exact 5-tuple: the
   source host's tables (IRM), the source leaf (PPD, iif the host port), the spine (ECMP, iif the
   bound uplink) and the destination leaf; each answer is mapped to a directed link of the plan.
3. Compares: every probe's kernel path must equal its planned path; the directed links the kernel
   paths reach must be every reachable link, or each one missed must be named by the plan
   (``uncovered_why``). Exit 1 otherwise. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, HERE)
from ansible_collections.aifabric.roce.plugins.module_utils.gom import probes as gom  # noqa: E402
import paths  # noqa: E402  (tests/lab/twin)


class KernelOracle(object):
    """``probes.plan_probes`` oracle: the parallel link the source's bound spine's kernel picks, per source port."""

    def __init__(self, twin, model):
        self.twin, self.model = twin, model
        self.asked = 0

    def __call__(self, src, dst, sports, dport):
        uplink = self.model.source_uplink(src)
        members = self.model.parallel[(src["spine"], dst["leaf"])]
        index = dict((m["spine_port"], i) for i, m in enumerate(members))
        devs = paths.lookups(self.twin.ns(src["spine"]), [
            "route get %s from %s iif %s ipproto udp sport %d dport %d" % (
                dst["address"], src["address"], uplink["spine_port"], sport, dport) for sport in sports])
        self.asked += len(sports)
        return [index.get(dev) for dev in devs]


def _ask(twin, ns, dst, src, sport, dport, iif=None):
    query = "route get %s from %s%s ipproto udp sport %d dport %d" % (
        dst, src, " iif %s" % iif if iif else "", sport, dport)
    return paths.lookups(twin.ns(ns), [query])[0], query


def kernel_path(twin, model, probe):
    """The directed links the kernels forward ``probe`` over, and the lookups asked (hop by hop)."""
    nics = dict((n["id"], n) for n in model.nics)
    src = nics["%s:%s" % (probe["src_host"], probe["src_netdev"])]
    dst = nics["%s:%s" % (probe["dst_host"], probe["dst_netdev"])]
    sport, dport = probe["udp_sport"] or gom.SPORT_BASE, probe["udp_dport"]
    links, hops = [], []

    def delivered(leaf_name, dev):
        # the destination's port, or the SVI bridge it is a member of (scheme A: the bridge's FDB picks the port)
        return dst["leaf"] == leaf_name and dev in (dst["leaf_port"], twin.ingress(leaf_name, dst["leaf_port"]))

    dev, query = _ask(twin, src["host"], dst["address"], src["address"], sport, dport)
    hops.append("%s: %s -> dev %s" % (src["host"], query, dev))
    if dev != src["netdev"]:
        return links, hops, "leaves %s by %s, not by the probe's NIC" % (src["host"], dev)
    links.append(src["link_up"])
    leaf_name, iif = src["leaf"], twin.ingress(src["leaf"], src["leaf_port"])
    for _hop in range(4):
        dev, query = _ask(twin, leaf_name, dst["address"], src["address"], sport, dport, iif)
        hops.append("%s: %s -> dev %s" % (leaf_name, query, dev))
        if delivered(leaf_name, dev):
            links.append(dst["link_down"])
            return links, hops, None
        uplink = model.uplink_at.get((leaf_name, dev))
        if uplink is None:
            return links, hops, "%s forwards on %s, no link of the plan toward %s" % (leaf_name, dev, dst["id"])
        links.append(model.uplink_up[(leaf_name, dev)])
        spine = uplink["spine"]
        dev, query = _ask(twin, spine, dst["address"], src["address"], sport, dport, uplink["spine_port"])
        hops.append("%s: %s -> dev %s" % (spine, query, dev))
        down = [(leaf, u) for (s, leaf), ups in model.parallel.items() if s == spine for u in ups if u["spine_port"] == dev]
        if not down:
            return links, hops, "%s forwards on %s, no link of the plan" % (spine, dev)
        leaf_name, uplink = down[0]
        links.append(model.fabric_link(leaf_name, uplink, "down"))
        iif = uplink["port"]
    return links, hops, "more than 4 switch hops"


def check(plan, prefix, stand_in=False):
    twin = paths.Twin(plan, prefix)
    model = gom.LinkModel(plan)
    oracle = None if stand_in else KernelOracle(twin, model)
    report = gom.plan_probes(plan, oracle=oracle)
    failures, reached, off = [], set(), []
    for probe in report["probes"]:
        links, hops, problem = kernel_path(twin, model, probe)
        reached.update(links)
        if problem or links != probe["path"]:
            off.append({"probe": probe["id"], "planned": probe["path"], "kernel": links, "problem": problem, "hops": hops})
    reachable = set(model.links) - set(report["unreachable_under_ppd"])
    missed = sorted(reachable - reached)
    unnamed = [link for link in missed if link not in report["uncovered_why"]]
    if off and not stand_in:
        failures.append("%d probes take another path under the kernels than planned: %s" % (len(off), off[:3]))
    if unnamed:
        failures.append("%d reachable links no probe reaches under the kernels and the plan does not name: %s" % (
            len(unnamed), unnamed))
    return {
        "hash": report["hash"], "hash_models": report["hash_models"], "probes": report["count"],
        "route_lookups_asked_while_planning": oracle.asked if oracle else 0,
        "links_reachable": len(reachable), "links_reached_by_kernel": len(reachable & reached),
        "reached": round(float(len(reachable & reached)) / len(reachable), 4) if reachable else 1.0,
        "probes_on_planned_path": report["count"] - len(off),
        "missed": [{"link": link, "why": report["uncovered_why"].get(link, "not named by the plan")} for link in missed],
        "off_plan": off, "at_risk": len(report["at_risk"]), "failures": failures,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--plan", required=True)
    parser.add_argument("--prefix", required=True, help="the twin's namespace prefix")
    parser.add_argument("--stand-in", action="store_true", help="plan with the offline crc32 stand-in (for comparison)")
    args = parser.parse_args(argv)
    with open(args.plan) as handle:
        result = check(json.load(handle), args.prefix, args.stand_in)
    print(json.dumps(result, indent=1, sort_keys=True))
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
