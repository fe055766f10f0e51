# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Brownfield guard: the objects of a switch's running config that the plan owns whole and would replace, although
this collection did not put them there (a leaf with its own ``router bgp 65001``: the first push would send ``no router
bgp 65001``). Ordinary drift to the diff; named here as a *takeover*, so the run refuses them unless the operator allows
it for that switch (``switch_takeover: true``), and check mode and the audit say so.

One engine for every NOS, on the parse the diff uses: the managed view read (``before``) and the rendered intent
(``after``), flattened by the driver's ``paths``, plus the Image's ``outside`` paths; what the diff removes or
replaces, and each outside setting the plan collides with, is classified by the family's forms (regexes over paths)
into ``KINDS``: docs/switches.md#brownfield-guard-a-takeover-is-not-drift has each kind, its forms and an example.
Pure: no Ansible, no network."""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX

# a takeover item: kind, the object path (as the drift report names items), what the switch holds, what the
# plan puts there (None: nothing), and one human line
KINDS = ("bgp", "address", "policy", "classification", "qos", "vlan", "collision", "mtu")

# The forms each family reads (regexes over Driver.paths / Image.outside). Named groups: asn, vrf, name, intf,
# key, value, line, where.
CLI_FORMS = {
    # indented CLIs and FRR: "router bgp 65001 > neighbor 10.0.0.1 remote-as 65000"
    "bgp": r"^router bgp (?P<asn>\d+)(?: vrf (?P<vrf>\S+))?$",
    "bgp_child": r"^router bgp (?P<asn>\d+) > (?P<line>[^>]*)",
    "neighbor": r"^router bgp (?P<asn>\d+) > neighbor (?P<name>\S+)",
    "peer_group": r"^router bgp (?P<asn>\d+) > (?:neighbor (?P<name>\S+) peer[- ]group$|peer-group (?P<pg>\S+)|template peer (?P<tp>\S+))",
    "vrf": r"^router bgp \d+ > vrf (?P<name>\S+)",
    "address": r"^interface (?P<intf>\S+) > (?P<key>(?:ip|ipv4|ipv6) address) (?P<value>\S+)",
    "policy": r"^(?P<where>[^>]+(?: > [^>]+)*?) > (?P<line>(?:service-policy(?: type \S+)?(?: (?:input|output|in|out))?|ip policy route-map|"
              r"pbr-policy|qos-map \S+|scheduler-policy|queue \d+ wred-policy) (?P<name>\S+))$",
    "map": r"^(?P<key>qos map dscp \d+ to traffic-class) (?P<value>\d+)$",
    "access": r"^interface (?P<intf>\S+) > (?P<key>switchport access [Vv]lan) (?P<value>\d+)$",
    "mtu": r"^interface (?P<intf>\S+) > (?P<key>mtu) (?P<value>\d+)$",
    # classification (EOS, klish): a port's trust mode and the PFC priorities it runs no-drop
    "trust": r"^interface (?P<intf>\S+) > qos trust (?P<value>\S+)$",
    "pfc": r"^(?:interface (?P<intf>\S+) > )?priority-flow-control priority (?P<prio>\d+) no-drop$",
    "svi": r"^interface (?P<intf>[Vv]lan\d+)(?: > |$)",
    "vlan_object": r"^vlan (?P<vlan>\d+) > ",
    "interface": r"^interface (?P<intf>\S+)(?: > |$)",
}
NVUE_FORMS = {
    # flat NVUE paths: "vrf default router bgp neighbor swp51 type unnumbered"
    "bgp": r"^(?:vrf (?P<vrf>\S+) )?router bgp autonomous-system (?P<asn>\d+)$",
    "bgp_child": r"^(?:vrf (?P<vrf>\S+) )?router bgp (?P<line>.*)$",
    "neighbor": r"^vrf (?P<vrf>\S+) router bgp neighbor (?P<name>\S+)",
    "peer_group": r"^vrf (?P<vrf>\S+) router bgp peer-group (?P<pg>\S+)",
    "vrf": r"^vrf (?P<name>(?!default )\S+) router bgp ",
    "address": r"^interface (?P<intf>\S+) (?P<key>(?:ip|ipv4|ipv6) address) (?P<value>\S+)$",
    "policy": r"^(?P<where>interface \S+) (?P<line>(?:router pbr map|qos \S+ profile) (?P<name>\S+))$",
    "map": r"^(?P<key>qos mapping \S+ dscp \d+ switch-priority) (?P<value>\d+)$",
    "access": r"^interface (?P<intf>\S+) (?P<key>bridge domain \S+ access) (?P<value>\d+)$",
    "mtu": r"^interface (?P<intf>\S+) (?P<key>link mtu) (?P<value>\d+)$",
    "svi": r"^interface (?P<intf>vlan\d+) ",
    "vlan_object": r"^bridge domain \S+ vlan (?P<vlan>\d+) ",
    "interface": r"^interface (?P<intf>\S+) ",
}


def _item(kind, item, actual, expected, message):
    return {"kind": kind, "item": item, "actual": actual, "expected": expected, "message": message}


def find(driver, before_image, after, intent, sections):
    """Takeover items of one switch in a stable order, from its Image (``fullconfig.image``) and the rendered intent:
    empty on a clean switch and on one this collection configured."""
    items = driver.takeover_items(before_image, after, intent, sections)
    order = dict((k, i) for i, k in enumerate(KINDS))
    seen, out = set(), []
    for t in sorted(items, key=lambda t: (order[t["kind"]], t["item"], t["actual"])):
        if t["message"] not in seen:
            seen.add(t["message"])
            out.append(t)
    return out


def from_running(driver, running, intent, qos, sections):
    """Takeover items of a full running config text (what the switch prints for ``driver.show_running``)."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import image
    return find(driver, image(driver, running, intent, sections), driver.render(intent, qos, sections), intent, sections)


def messages(items):
    return [t["message"] for t in items]


def refusal(items, switch):
    """The error of an apply that would take over objects the operator has not released."""
    return ("refusing to change %s: the plan owns these objects whole and would replace what the switch holds now "
            "(%d): %s. Nothing was sent. Review them (--check --diff shows the whole change; a takeover replaces "
            "the switch's own routing), then set switch_takeover: true for %s after review (host_vars/%s.yml or "
            "-e switch_takeover=true --limit %s) and run again"
            % (switch, len(items), "; ".join(messages(items)), switch, switch, switch))


def decide(items, allowed, check_mode):
    """What the run does with takeover items: ``none``, ``report`` (check mode), ``refuse`` (not allowed: fail before
    anything is sent) or ``take`` (allowed: proceed, reported as taken over)."""
    if not items:
        return "none"
    if check_mode:
        return "report"
    return "take" if allowed else "refuse"


# --- the engine ----------------------------------------------------------------------------------------------
def _is_ip(text):
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def _leaf(path):
    return path.rpartition(" > ")[2]


class _Reader(object):
    def __init__(self, forms):
        self.rx = dict((k, re.compile(v)) for k, v in forms.items())

    def all(self, kind, paths):
        return [(p, m) for p, m in ((p, self.rx[kind].match(p)) for p in paths) if m]


def _under(read, paths, asn, flat=False):
    """What goes with a routing instance: its neighbors and VRFs, named."""
    neighbors = set()
    for _p, m in read.all("neighbor", paths):
        g = m.groupdict()
        if g.get("asn") in (None, asn) and g.get("vrf") in (None, "default"):
            neighbors.add(m.group("name"))
    vrfs = sorted(set(m.group("name") for _p, m in read.all("vrf", paths)))
    parts = []
    if neighbors:
        parts.append("neighbor%s %s" % ("s" if len(neighbors) > 1 or flat else "", ", ".join(sorted(neighbors))))
    if vrfs:
        parts.append("vrf %s" % ", ".join(vrfs))
    return parts


def _bgp_item(head, asn, planned, parts, flat):
    if flat:
        under = ", with the default VRF's BGP instance%s" % (" (%s)" % "; ".join(parts) if parts else "")
    else:
        under = (", with everything under it (%s)" % "; ".join(parts)) if parts else ", with everything under it"
    verb = "removed" if planned is None else "replaced"
    return _item("bgp", head, "%s %s" % (head, asn), None if planned is None else "%s %s" % (head, planned),
                 "%s %s (plan: %s) would be %s%s" % (head, asn, planned or "none", verb, under))


def _bgp(read, before, after, removed, flat):
    out = []
    want = [m for _p, m in read.all("bgp", after)]
    planned = want[0].group("asn") if want else None
    taken = set()
    for path, m in read.all("bgp", before):
        if path not in removed or m.group("asn") == planned or m.group("asn") in taken:
            continue
        taken.add(m.group("asn"))
        head = path[:m.start("asn")].strip()
        out.append(_bgp_item(head, m.group("asn"), planned, _under(read, before, m.group("asn"), flat), flat))
    if taken:
        return out
    # under the plan's own ASN: interface (unnumbered) neighbors and peer groups are someone else's
    groups = set(g for _p, m in read.all("peer_group", before) for g in m.groupdict().values() if g and not g.isdigit())
    for path, m in read.all("neighbor", removed):
        name = m.group("name")
        if not _is_ip(name) and name not in groups:
            out.append(_item("bgp", "router bgp > neighbor %s" % name, "neighbor %s" % name, None,
                             "BGP neighbor %s (an interface/unnumbered neighbor the plan does not have) would be removed"
                             % name))
    for path, m in read.all("peer_group", removed):
        name = [g for k, g in sorted(m.groupdict().items()) if g and k in ("name", "pg", "tp")][0]
        out.append(_item("bgp", "router bgp > peer group %s" % name, "peer group %s" % name, None,
                         "BGP peer group %s (the plan has none) would be removed, with its members' sessions" % name))
    return out


def _by_interface(read, kind, paths):
    out = {}
    for _p, m in read.all(kind, paths):
        out.setdefault(m.group("intf"), []).append((m.group("key"), m.group("value")))
    return out


def _addresses(read, before, after, removed, outside, skip):
    out = []
    want = _by_interface(read, "address", after)
    gone = _by_interface(read, "address", removed)
    # an address in another syntax outside the managed view, on an interface the plan addresses (NVUE `ip address`)
    beside = dict((k, v) for k, v in _by_interface(read, "address", outside).items() if k in want)
    for name in sorted(set(gone) | set(beside)):
        if name in skip:
            continue
        planned = want.get(name, [])
        for key, address in gone.get(name, []) + beside.get(name, []):
            if (key, address) in planned:
                continue
            shown = ", ".join(v for _k, v in planned) or "none"
            out.append(_item("address", "interface %s > %s" % (name, key), "%s %s" % (key, address),
                             ", ".join("%s %s" % kv for kv in planned) or None, "interface %s %s %s (plan: %s) would be %s"
                             % (name, key, address, shown, "replaced" if planned else "removed")))
    return out


def _policies(read, after, removed):
    out = []
    planned = {}
    for _p, m in read.all("policy", after):
        planned.setdefault(m.group("where"), []).append(m.group("line"))
    for _p, m in read.all("policy", removed):
        name, where, line = m.group("name"), m.group("where"), m.group("line")
        if name.startswith(PREFIX):
            continue
        form = line[:-len(name)]
        same = [ln for ln in planned.get(where, []) if ln.startswith(form)]
        kind = "policy" if where.startswith("interface ") else "qos"
        plan = "; ".join(same) or None
        out.append(_item(kind, "%s > policy" % where, line, plan, "%s %s (not ours; plan: %s) would be %s"
                         % (where, line, plan or "none", "replaced" if same else "removed")))
    return out


def _values(read, kind, after, removed, label, what):
    """Keyed settings (a DSCP map entry, a port's access VLAN) the plan would rewrite or drop."""
    out = []
    want = dict(((m.groupdict().get("intf"), m.group("key")), m.group("value")) for _p, m in read.all(kind, after))
    for _p, m in read.all(kind, removed):
        intf, name = m.groupdict().get("intf"), m.group("key")
        planned = want.get((intf, name))
        if planned == m.group("value"):
            continue
        actual, plan = "%s %s" % (name, m.group("value")), "%s %s" % (name, planned) if planned else None
        where = "interface %s " % intf if intf else ""
        out.append(_item(label, ("interface %s > " % intf if intf else "") + name, actual, plan,
                         "%s%s (plan: %s) would be %s" % (where, actual, plan or "none",
                                                          "replaced" + what[0] if planned else "removed" + what[1])))
    return out


def _collisions(read, before, after, removed, outside):
    """SVIs and VLANs the plan creates that already hold someone else's settings."""
    out, collided = [], set()
    mine = set(after)
    svis = set(m.group("intf") for _p, m in read.all("svi", after))
    theirs = {}
    for path, m in read.all("svi", list(removed) + list(outside)):
        if m.group("intf") in svis and path not in mine and PREFIX not in path and not read.rx["policy"].match(path):
            theirs.setdefault(m.group("intf"), []).append(_leaf(path) if " > " in path else path[m.end():])
    vlans = set(m.group("vlan") for _p, m in read.all("vlan_object", after))
    vlans |= set(re.sub(r"\D", "", s) for s in svis)
    for path, m in read.all("vlan_object", list(removed) + list(outside)):
        if m.group("vlan") in vlans and path not in mine:
            theirs.setdefault("vlan %s" % m.group("vlan"), []).append(_leaf(path))
    for name, lines in sorted(theirs.items()):
        lines = sorted(set(ln for ln in lines if ln))
        if not lines:
            continue
        collided.add(name)
        item = name if name.startswith("vlan ") else "interface %s" % name
        out.append(_item("collision", item, "; ".join(lines), None, "%s exists on the switch for another purpose (%s): "
                         "the plan would take it over as its own" % (item, "; ".join(lines[:6]))))
    return out, collided


def _mtus(read, before, after, removed, outside):
    """An MTU change on a port that someone else routes and the plan leaves routed (an address outside the managed
    view: a port whose address the plan replaces is an ``address`` item already)."""
    out = []
    have = dict((m.group("intf"), m.group("value")) for _p, m in read.all("mtu", before))
    want_addr = _by_interface(read, "address", after)
    theirs = _by_interface(read, "address", outside)
    for _p, m in read.all("mtu", after):
        name, value = m.group("intf"), m.group("value")
        if have.get(name) == value:
            continue
        foreign = [v for k, v in theirs.get(name, []) if (k, v) not in want_addr.get(name, [])]
        if not foreign:
            continue
        out.append(_item("mtu", "interface %s > %s" % (name, m.group("key")), "%s %s" % (m.group("key"), have.get(name) or "default"),
                         "%s %s" % (m.group("key"), value),
                         "interface %s is routed by someone else (address %s) and its MTU would change from %s to %s: "
                         "its peers keep theirs" % (name, ", ".join(foreign), have.get(name) or "the default", value)))
    return out


def items(driver, forms, before_image, after, flat=False):
    """Every takeover item of one switch: its managed and outside paths classified by the family's ``forms``."""
    read = _Reader(forms)
    before = driver.paths(before_image.managed)
    after = driver.paths(after)
    removed = [p for p in before if p not in set(after)]
    outside = list(before_image.outside)
    out = _bgp(read, before, after, removed, flat)
    collisions, collided = _collisions(read, before, after, removed, outside)
    out += _addresses(read, before, after, removed, outside, collided)
    out += _policies(read, after, removed)
    out += _values(read, "map", after, removed, "qos", ("", ""))
    out += _values(read, "access", after, removed, "vlan", (": the port moves to the plan's VLAN", ": the port leaves its VLAN"))
    out += collisions
    out += _mtus(read, before, after, removed, outside)
    if "trust" in read.rx:
        out += _classification(read, before, after, removed, outside)
    return out


def _classification(read, before, after, removed, outside):
    """Classification the plan changes: PFC no-drop on a priority in use removed, or a port moved to DSCP trust while
    the switch runs PFC no-drop (802.1p-only marked traffic leaves its class: the EOS storage-ToR case)."""
    out = []
    in_use = {}   # interface (None: switch-wide) -> PFC no-drop priorities the switch runs there now
    for _p, m in read.all("pfc", list(before) + list(outside)):
        in_use.setdefault(m.group("intf"), set()).add(m.group("prio"))
    planned = set(m.group("prio") for _p, m in read.all("pfc", after))
    for path, m in read.all("pfc", removed):
        if m.group("prio") not in planned:
            where = "interface %s " % m.group("intf") if m.group("intf") else ""
            out.append(_item("classification", path, "priority-flow-control priority %s no-drop" % m.group("prio"), None,
                             "%spriority-flow-control priority %s no-drop (in use) would be removed: that class loses PFC"
                             % (where, m.group("prio"))))
    have = dict((m.group("intf"), m.group("value")) for _p, m in read.all("trust", list(before) + list(outside)))
    for path, m in read.all("trust", after):
        intf, value = m.group("intf"), m.group("value")
        prios = sorted(in_use.get(intf, set()) | in_use.get(None, set()), key=int)
        if have.get(intf) == value or not prios:
            continue
        was = "qos trust %s" % have[intf] if intf in have else "the default trust (802.1p CoS on a switchport)"
        out.append(_item("classification", "interface %s > qos trust" % intf, was, "qos trust %s" % value,
                         "interface %s classifies by %s and the switch runs PFC no-drop on priorit%s %s: the plan's qos trust "
                         "%s reclassifies its traffic (802.1p-only marked traffic leaves its lossless class)"
                         % (intf, was, "y" if len(prios) == 1 else "ies", ",".join(prios), value)))
    return out


# --- FRR: one pbr-policy per interface; a foreign one sits outside the managed view ----------------------------
def frr_pbr_items(driver, after, outside):
    want = driver.blocks_of(after)
    out = []
    for (kind, name), lines in sorted(want.items()):
        ours = [ln for ln in lines if kind == "interface" and ln.startswith("pbr-policy ")]
        if not ours:
            continue
        for path in outside:
            if path.startswith("interface %s > pbr-policy " % name):
                line = path.split(" > ", 1)[1]
                if not line.split()[1].startswith(PREFIX):
                    out.append(_item("policy", "interface %s > policy" % name, line, "; ".join(ours),
                                     "interface %s %s (not ours; plan: %s) would be replaced" % (name, line, "; ".join(ours))))
    return out
