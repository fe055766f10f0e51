# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Brownfield guard: the objects of a switch's running config that the plan owns whole and would replace,
although this collection did not put them there.

The managed view a driver reads (``driver.parse``) holds every line the plan owns, whoever wrote it: on a
switch the operator already routes (a leaf with its own ``router bgp 65001``, OSPF and addressed uplinks) the
first push would send ``no router bgp 65001`` and ``no ip address ...`` on the uplinks. Those lines are
ordinary drift to the diff; here they are named as a *takeover*, so the run can refuse them unless the
operator allows it for that switch (``switch_takeover: true``), and check mode and the audit can say so.

Three kinds of object, compared between the managed view read from the switch (``before``) and the rendered
intent (``after``), with each driver's own line forms (no second parser):

* ``bgp``: the default-VRF BGP instance under another ASN than the plan's (or none planned): it is replaced
  whole, with every neighbor, address family and VRF under it;
* ``address``: an address on an interface the plan owns (a port, the loopback, the host SVI) that differs from
  the planned one (or where the plan puts none, e.g. a routed uplink the plan makes an access port);
* ``policy``: a policy bound by name on a planned interface (PBR / service-policy, QoS maps) that is not one
  of ours (``AIF-`` names) and that the plan would remove or replace.

Pure: no Ansible, no network.
"""

from __future__ import annotations

import re
import string

from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import PREFIX

# a takeover item: kind, the object path (as the drift report names items), what the switch holds, what the
# plan puts there (None: nothing), and one human line
KINDS = ("bgp", "address", "policy")


def _item(kind, item, actual, expected, message):
    return {"kind": kind, "item": item, "actual": actual, "expected": expected, "message": message}


def find(driver, before_image, after, intent, sections):
    """Takeover items of one switch, in a stable order: ``before_image`` is the Image read from the switch
    (``Applier.plan()`` keeps it as ``before_image``; ``fullconfig.image``), ``after`` the rendered intent
    (canonical managed text). Empty on a clean switch and on a switch this collection already configured."""
    items = driver.takeover_items(before_image, after, intent, sections)
    order = dict((k, i) for i, k in enumerate(KINDS))
    return sorted(items, key=lambda t: (order[t["kind"]], t["item"], t["actual"]))


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
    """What the run does with takeover items: ``none`` (nothing to take over), ``report`` (check mode: shown as a
    takeover, not a failure), ``refuse`` (apply mode, not allowed: fail before anything is sent) or ``take``
    (allowed: proceed and report them as taken over)."""
    if not items:
        return "none"
    if check_mode:
        return "report"
    return "take" if allowed else "refuse"


# --- CLI drivers (EOS, NX-OS, klish SONiC / AsterNOS): the driver's own Section forms -------------------------
def _fields(template):
    return [f for _lit, f, _spec, _conv in string.Formatter().parse(template) if f]


def _capture(form, field):
    """The regex of a Form's line with ``field`` captured as ``value`` (other fields one token each); trailing
    words allowed (``ip address A secondary``)."""
    out = []
    for literal, name, _spec, _conv in string.Formatter().parse(form.template):
        out.append(re.escape(literal))
        if name is not None:
            out.append(r"(?P<value>\S+)" if name == field else r"\S+")
    return re.compile("^" + "".join(out) + r"(?: .*)?$")


def _forms(driver, attrs, field, section=None):
    out = []
    for sec in driver.section_objects:
        if section and sec.name != section:
            continue
        for attr in attrs:
            for form in getattr(sec, attr):
                if field in _fields(form.template):
                    rx = _capture(form, field)
                    if rx.pattern not in [r.pattern for r in out]:
                        out.append(rx)
    return out


def _matches(regexes, line, which=False):
    """The captured value of the first regex that matches ``line`` (with the regex's pattern when ``which``)."""
    for rx in regexes:
        m = rx.match(line)
        if m:
            return (m.group("value"), rx.pattern) if which else m.group("value")
    return (None, None) if which else None


def _under(children):
    """What goes with a routing instance: its neighbors and VRFs, named."""
    neighbors = sorted(set(c[0].split()[1] for c in children if c[0].startswith("neighbor ") and len(c[0].split()) > 1))
    vrfs = sorted(set(c[0].split()[1] for c in children if c[0].startswith("vrf ") and len(c[0].split()) > 1))
    parts = []
    if neighbors:
        parts.append("neighbor%s %s" % ("s" if len(neighbors) > 1 else "", ", ".join(neighbors)))
    if vrfs:
        parts.append("vrf %s" % ", ".join(vrfs))
    return (", with everything under it (%s)" % "; ".join(parts)) if parts else ", with everything under it"


def _bgp_item(asn, planned, under, head="router bgp"):
    item = head
    if planned is None:
        return _item("bgp", item, "%s %s" % (head, asn), None,
                     "%s %s (plan: none) would be removed%s" % (head, asn, under))
    return _item("bgp", item, "%s %s" % (head, asn), "%s %s" % (head, planned),
                 "%s %s (plan: %s) would be replaced%s" % (head, asn, planned, under))


def _address_items(name, have, want, label="ip address"):
    out = []
    for address in sorted(set(have) - set(want)):
        item = "interface %s > %s" % (name, label)
        if want:
            out.append(_item("address", item, "%s %s" % (label, address), "%s %s" % (label, ", ".join(want)),
                             "interface %s %s %s (plan: %s) would be replaced" % (name, label, address, ", ".join(want))))
        else:
            out.append(_item("address", item, "%s %s" % (label, address), None,
                             "interface %s %s %s (plan: none) would be removed" % (name, label, address)))
    return out


def _policy_items(name, have, want):
    """``have``/``want``: [(line, policy name, form)] bound on interface ``name``; a foreign line is replaced by the
    planned lines of the same form (a PBR binding by the planned PBR binding), removed when there are none."""
    out = []
    for line, policy, form in have:
        planned = [ln for ln, _n, f in want if f == form]
        if policy.startswith(PREFIX) or line in planned:
            continue
        item = "interface %s > policy" % name
        if planned:
            out.append(_item("policy", item, line, "; ".join(planned), "interface %s %s (not ours; plan: %s) would be "
                             "replaced" % (name, line, "; ".join(planned))))
        else:
            out.append(_item("policy", item, line, None, "interface %s %s (not ours; plan: none) would be removed"
                             % (name, line)))
    return out


def cli_items(driver, before, after):
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import parse_tree
    asn_forms = _forms(driver, ("top",), "asn", "underlay")
    address_forms = _forms(driver, ("children", "l3_children"), "address", "underlay")
    policy_forms = _forms(driver, ("children", "l3_children"), "name")

    def read(text):
        bgp, interfaces = {}, {}
        for line, children in parse_tree(text):
            m = re.match(driver.interface_re, line)
            if m:
                kids = [c[0] for c in children]
                addresses = [a for a in (_matches(address_forms, k) for k in kids) if a]
                policies = [(k,) + found for k, found in ((k, _matches(policy_forms, k, True)) for k in kids) if found[0]]
                interfaces[m.group(1)] = (addresses, policies)
                continue
            asn = _matches(asn_forms, line)
            if asn is not None:
                bgp[asn] = children
        return bgp, interfaces

    have_bgp, have_intf = read(before)
    want_bgp, want_intf = read(after)
    items = []
    planned = sorted(want_bgp)[0] if want_bgp else None
    for asn, children in sorted(have_bgp.items()):
        if asn not in want_bgp:
            items.append(_bgp_item(asn, planned, _under(children)))
    for name, (addresses, policies) in sorted(have_intf.items()):
        want_addresses, want_policies = want_intf.get(name, ([], []))
        items += _address_items(name, addresses, want_addresses)
        items += _policy_items(name, policies, want_policies)
    return items


# --- NVUE: flat ``nv set`` paths (the driver's MANAGED forms) -------------------------------------------------
_NV_ASN = re.compile(r"^nv set router bgp autonomous-system (\d+)$")
_NV_ADDRESS = re.compile(r"^nv set interface (\S+) ipv4 address (\S+)$")
_NV_PBR = re.compile(r"^nv set interface (\S+) router pbr map (\S+)$")
_NV_NEIGHBOR = re.compile(r"^nv set vrf default router bgp neighbor (\S+) ")


def nvue_items(before, after):
    def read(text):
        asn, addresses, policies, neighbors = [], {}, {}, set()
        for line in text.splitlines():
            m = _NV_ASN.match(line)
            if m:
                asn.append(m.group(1))
            m = _NV_ADDRESS.match(line)
            if m:
                addresses.setdefault(m.group(1), []).append(m.group(2))
            m = _NV_PBR.match(line)
            if m:
                policies.setdefault(m.group(1), []).append(("router pbr map %s" % m.group(2), m.group(2), "pbr"))
            m = _NV_NEIGHBOR.match(line)
            if m:
                neighbors.add(m.group(1))
        return asn, addresses, policies, neighbors

    have_asn, have_addr, have_pol, neighbors = read(before)
    want_asn, want_addr, want_pol, _n = read(after)
    items = []
    for asn in have_asn:
        if asn not in want_asn:
            under = ", with the default VRF's BGP instance%s" % (
                " (neighbors %s)" % ", ".join(sorted(neighbors)) if neighbors else "")
            items.append(_bgp_item(asn, want_asn[0] if want_asn else None, under, head="router bgp autonomous-system"))
    for name in sorted(have_addr):
        items += _address_items(name, have_addr[name], want_addr.get(name, []), label="ipv4 address")
    for name in sorted(have_pol):
        items += _policy_items(name, have_pol[name], want_pol.get(name, []))
    return items


# --- FRR: the driver's blocks; a foreign pbr-policy sits outside the managed view -----------------------------
def frr_items(driver, before, after, outside):
    have, want = driver.blocks_of(before), driver.blocks_of(after)
    items = []
    want_asn = sorted(name for kind, name in want if kind == "router bgp")
    for (kind, name), lines in sorted(have.items()):
        if kind == "router bgp" and name not in want_asn:
            items.append(_bgp_item(name, want_asn[0] if want_asn else None,
                                   _under([(ln.strip(), []) for ln in lines])))
        elif kind == "interface":
            addresses = [ln.split()[2] for ln in lines if ln.startswith("ip address ") and len(ln.split()) > 2]
            planned = [ln.split()[2] for ln in want.get(("interface", name), []) if ln.startswith("ip address ")]
            items += _address_items(name, addresses, planned)
    # FRR binds one pbr-policy per interface: ours on an interface replaces theirs (the parse keeps only AIF- ones)
    for (kind, name), lines in sorted(want.items()):
        ours = [(ln, ln.split()[1], "pbr") for ln in lines if kind == "interface" and ln.startswith("pbr-policy ")]
        if not ours:
            continue
        theirs = [(p.split(" > ", 1)[1], p.split(" > ", 1)[1].split()[1], "pbr") for p in outside
                  if p.startswith("interface %s > pbr-policy " % name)]
        items += _policy_items(name, theirs, ours)
    return items
