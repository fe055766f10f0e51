# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Asterfusion AsterNOS (data-center line, v3.1): lossless QoS through Easy RoCE's documented REST model only.

What Asterfusion documents, and therefore all this driver renders (sources: tests/fixtures/switches/asternos/docs/
easy-roce.txt, SOURCE.md; docs/platforms.md#asternos):

* Easy RoCE REST manual (https://docs.asternos.com/zh/aidc/restapi-manual/easy-roce/, "only applies to AsterNOS v3.1
  R0500"): ``GET /rest/v1/running/roce`` (the read-back), ``POST /rest/v1/running/roce/roce-profiles`` with
  ``{"name": ..., "mode": "lossless"}`` (its example), ``PATCH`` and ``DELETE`` on ``roce-profiles/{name}`` (its URL
  table), the tree's rw leaves ``mode``, ``bind-interfaces*``, ``cable-length?`` and ro ``class-maps``,
  ``policy-maps``, ``wred-profiles``, ``buffer-profiles``, ``diffserv-maps`` (what the switch generated).
* Easy RoCE configuration guide: from the cable length (and incast level) "the system will automatically generate a
  lossless configuration template. It applies the default DSCP mapping, with PFC and ECN enabled for queue 3 and 4,
  and strict priority scheduling set for queue 6 and 7." So thresholds, weights and buffers are computed by the
  switch, not by this collection; a QoS profile Easy RoCE cannot express is refused (``check_profile``).

Unverified (shown in the plan report and docs): how the REST endpoint is reached and authenticated from the switch
(``https://127.0.0.1``, credentials from the switch user's ``~/.netrc``), the PATCH bodies (the tree's leaf names
with values in the GET sample's form, e.g. ``CABLE_40m``) and the port names (read from the plan, see
fabric/platforms.py).

REST is reached with ``curl`` in the switch's own Linux shell, over the SSH session of netmiko's Asterfusion-written
``asterfusion_asternos`` driver (login in a Linux shell, ``sonic-cli`` for klish, ``system bash`` back, ``write`` + ``y``
to save): one login carries the read-back, the lock marker, the change and the save; no second credential is needed.
Canonical managed text: one line per managed REST leaf, ``roce-profiles <name> <leaf> <value>``.

Underlay, MTU and PPD have no Asterfusion-documented interface: refused, or under ``asternos_config: config_db``
rendered as community SONiC's CONFIG_DB tables and still refused to apply (``refusal``).
"""

from __future__ import annotations

import json
import re
from collections import namedtuple

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import device_type_for
from ansible_collections.aifabric.roce.plugins.module_utils.nos import configdb, connection, counters as roce_counters, sonic_tables, sources, transactions
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import Driver, DriverError, ports_of
from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import Command
from ansible_collections.aifabric.roce.plugins.module_utils.nos.drain import NoDrain
from ansible_collections.aifabric.roce.plugins.module_utils.nos.facts import Unsupported
from ansible_collections.aifabric.roce.plugins.module_utils.nos.takeover import _item

REST = "https://127.0.0.1/rest/v1"       # unverified: the manual shows HTTPS://{switch IP}/rest/v1/...
ROCE = REST + "/running/roce"
PROFILES = ROCE + "/roce-profiles"
CURL = "curl -sS -f -k --netrc-optional"
# Our Easy RoCE profile: lower case and underscores like the manual's samples (roce_lossless_5m_medium); the
# switch names what it generates after it (roce_lossless_5m_medium_200g_ecn ...).
PROFILE = "aif_roce"
MANAGED_LEAVES = ("mode", "cable-length", "bind-interfaces")
GENERATED = ("class-maps", "policy-maps", "wred-profiles", "buffer-profiles", "diffserv-maps")
# What Easy RoCE fixes (configuration guide): PFC + ECN on queues 3 and 4, strict priority on 6 and 7.
EASY_ROCE_LOSSLESS = (3, 4)
EASY_ROCE_STRICT = (6, 7)
OPT_IN = "asternos_config: config_db"
SONIC_NATIVE = ("mtu", "pbr", "underlay")


def cable_length(meters):
    """Our cable length in Easy RoCE's value form (the GET sample shows ``CABLE_5m``)."""
    return "CABLE_%dm" % int(meters)


def check_profile(qos):
    """Refuse a QoS profile Easy RoCE cannot express; returns the list of problems (empty: fine)."""
    problems = []
    bad = [p for p in qos["lossless_priorities"] if p not in EASY_ROCE_LOSSLESS]
    if bad:
        problems.append("qos.lossless_priorities %s: Easy RoCE enables PFC only on queues 3 and 4" % bad)
    if qos["ecn_queue"] not in EASY_ROCE_LOSSLESS:
        problems.append("qos.ecn_queue %d: Easy RoCE marks ECN only on queues 3 and 4" % qos["ecn_queue"])
    if qos.get("cnp_strict_priority") and qos["cnp_priority"] not in EASY_ROCE_STRICT:
        problems.append("qos.cnp_priority %d: Easy RoCE schedules strict priority only on queues 6 and 7"
                        % qos["cnp_priority"])
    return problems


def _leaf_lines(head, leaves):
    """``<head> <leaf> <value>`` per leaf, one per item of a list leaf."""
    return ["%s %s %s" % (head, leaf, v) for leaf, value in sorted(leaves.items())
            for v in (value if isinstance(value, list) else [value])]


def _lines(profiles, names=None):
    """{name: profile dict} -> canonical lines of the managed leaves (``names``: only these profiles)."""
    out = []
    for name, prof in profiles.items():
        if names is None or name in names:
            managed = dict((k, prof[k]) for k in MANAGED_LEAVES if prof.get(k) is not None)
            out += _leaf_lines("roce-profiles %s" % name, managed)
    return "".join("%s\n" % line for line in sorted(set(out)))


def _read(lines):
    """Canonical lines -> {name: {"mode": v, "cable-length": v, "bind-interfaces": [..]}}."""
    out = {}
    for line in lines.splitlines():
        m = re.match(r"^roce-profiles (\S+) (\S+) (\S+)$", line.strip())
        if not m:
            continue
        prof = out.setdefault(m.group(1), {})
        if m.group(2) == "bind-interfaces":
            prof.setdefault("bind-interfaces", []).append(m.group(3))
        else:
            prof[m.group(2)] = m.group(3)
    return out


def load(running):
    """The GET /rest/v1/running/roce body -> {profile name: profile}, or ValueError when it is not that body."""
    try:
        data = json.loads(running)
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("roce-profiles", []), list):
        raise ValueError("not the JSON body of GET %s" % ROCE)
    return dict((p.get("name"), p) for p in data.get("roce-profiles") or [] if isinstance(p, dict)), data


def _json(body):
    # single quotes around the body in the shell: JSON of our names never holds one
    text = json.dumps(body, sort_keys=True)
    if "'" in text:
        raise DriverError("refusing a REST body with a single quote: %s" % text)
    return text


def request(method, url, body=None):
    """One REST call as the switch's shell runs it (``-f``: an HTTP error is a non-zero exit)."""
    cmd = "%s -X %s" % (CURL, method)
    if body is not None:
        cmd += " -H 'Content-Type: application/json' -d '%s'" % _json(body)
    return cmd + " " + url


class RestOp(namedtuple("RestOp", "kind path value verb")):
    """One Easy RoCE REST call as a typed op: ``verb`` the HTTP method (DELETE unsets), ``path`` (the URL,), ``value``
    the JSON body. It names a resource, not a leaf of the read-back: AsterNOS's attribution stays by the whole Image."""
    __slots__ = ()

    def __new__(cls, verb, url, body=None):
        return super(RestOp, cls).__new__(cls, "unset" if verb == "DELETE" else "set", (url,), body, verb)

    def lines(self):
        return []


class AsterNosDriver(Driver):
    name = "asternos"
    device_type = device_type_for(name)
    show_running = "%s %s" % (CURL, ROCE)
    # curl's own error lines (exit statuses stay the transaction's check)
    error_pattern = r"^curl: \(\d+\)"
    transaction = transactions.AsterNosRestTxn
    drain = NoDrain("no BGP is configured on AsterNOS (Easy RoCE QoS only), and no Asterfusion source for a "
                    "graceful-shutdown line")
    line_sources = sources.ASTERNOS   # the public source of every line it renders (nos/sources.py)
    counters = roce_counters.SONIC
    # the drop counters are sonic-utilities' queue tables, captured on AsterNOS; PFC/ECN/watchdog are not
    counter_evidence = dict(pfc_rx="unverified", pfc_tx="unverified", ecn_marked="unverified", drops="verified",
                            drop_bytes="verified", wd_storms="unverified", wd_restores="unverified")
    bgp_summary = Unsupported("no BGP is configured on AsterNOS here, and no captured AsterNOS BGP summary (Asterfusion's "
                              "guides stop after their first pages)")
    ppd_read = Unsupported("no captured PBR show output of asternos to test a parser on")
    # what it renders; the SONiC-native sections are refused by name (``refusal``), naming the opt-in
    sections = ("qos",)
    save_command = "write"
    # the session's home is the Linux shell (connection.py): REST, lock markers and sonic-utilities shows run there
    home = "bash"

    def before_login(self):
        connection.asternos_cli_mode()

    def after_login(self, conn):
        """The login prompt is the Linux shell's, the klish prompt differs; prompt reads instead of timing reads; then
        the shell hop to ``home`` (nos/connection.py)."""
        conn.set_base_prompt()
        connection.asternos_prompt_reads(conn)
        if self.home == "bash":
            connection.asternos_bash_home(conn)

    def sections_for(self, intent):
        """Easy RoCE's QoS; under the opt-in also the SONiC-native sections (rendered as CONFIG_DB, applying refused)."""
        return self.sections + (SONIC_NATIVE if (intent or {}).get("asternos_config") == "config_db" else ())

    def refusal(self, sections, intent):
        """The one message refusing SONiC-native sections (None: nothing to refuse): without the opt-in they have no
        Asterfusion-documented interface; with it they render as CONFIG_DB (``config_db_tables``), but applying them
        is refused: no GCU transaction is wired to AsterNOS."""
        asked = [s for s in sections if s in SONIC_NATIVE]
        if not asked:
            return None
        if (intent or {}).get("asternos_config") != "config_db":
            return ("AsterNOS: section(s) %s have no Asterfusion-documented interface (only Easy RoCE's REST model is: "
                    "section qos). To configure them through community SONiC's CONFIG_DB, which is SONiC-native and "
                    "not an Asterfusion-documented interface, set `%s` in the fabric intent (fabric.%s; "
                    "docs/platforms.md#asternos); otherwise leave them out of sections" % (", ".join(asked), OPT_IN, OPT_IN))
        return ("AsterNOS with `%s`: section(s) %s render as community SONiC CONFIG_DB tables (nos/sonic_tables.py; "
                "plan.yml writes them to <build>/switches/<switch>.config_db.json), but applying is not implemented yet "
                "(the SONiC GCU transaction: config checkpoint, config apply-patch, config rollback) on AsterNOS: "
                "community SONiC's is not wired to it; nothing was sent. Run with sections [qos] (Easy RoCE) meanwhile, or take the "
                "CONFIG_DB from plan.yml" % (OPT_IN, ", ".join(asked)))

    def config_db_tables(self, intent, qos):
        """The opt-in's delegation: the SONiC-native sections as community SONiC CONFIG_DB tables, rendered by the
        render community SONiC uses (nos/sonic_tables.py: the same tables, keys, fields and sources), with
        this switch's port names and MTU. None without the opt-in."""
        if (intent or {}).get("asternos_config") != "config_db":
            return None
        return sonic_tables.render(intent, qos, SONIC_NATIVE, port=self.port, mtu=self.mtu(intent))

    def offline_files(self, intent, qos, stem):
        """plan.yml's extra artifact under the opt-in: the CONFIG_DB tables of the SONiC-native sections, as
        ``show runningconfiguration all`` prints them (nos/offline.py)."""
        tables = self.config_db_tables(intent, qos)
        if tables is None:
            return {}
        return {"switches/%s.config_db.json" % stem: configdb.show_running(tables)}

    def refuse(self, intent, qos, sections):
        """Why this driver refuses to run with these sections and this QoS profile (None: it does not)."""
        why = self.refusal(sections, intent)
        problems = check_profile(qos) if "qos" in sections and not why else []
        if problems:
            why = "AsterNOS Easy RoCE cannot express this QoS profile: %s (docs/platforms.md#asternos)" % "; ".join(problems)
        return why

    # --- pure functions --------------------------------------------------------------
    def want(self, intent, qos, sections=("qos",)):
        """{profile: fields} the intent asks of Easy RoCE."""
        why = self.refuse(intent, qos, sections)
        if why:
            raise DriverError(why)
        if "qos" not in sections:
            return {}
        ports = [self.port(p) for p in ports_of(intent)]
        return {PROFILE: {"mode": "lossless", "cable-length": cable_length(qos["cable_length_m"]),
                          "bind-interfaces": sorted(ports)}}

    def render(self, intent, qos, sections=("qos",)):
        return _lines(self.want(intent, qos, sections))

    def parse(self, running, intent, sections=("qos",)):
        """The GET /rest/v1/running/roce body (or canonical text, as plan.yml writes it) -> our profile's managed leaves."""
        if "qos" not in sections:
            return ""
        profiles = load(running)[0] if running.lstrip().startswith("{") else _read(running)
        return _lines(profiles, names=(PROFILE,))

    def outside(self, running, intent, sections=("qos",)):
        """Everything of the REST model outside our profile's managed leaves: other profiles whole, roce-accept.
        Our profile's other leaves (incast-level, the generated objects) are the switch's to compute: they are
        reported (``state``), not compared, since a new cable length renames what Easy RoCE generates."""
        profiles, data = load(running)
        out = []
        for name, prof in profiles.items():
            if name != PROFILE or "qos" not in sections:
                out += _leaf_lines("roce-profiles %s" % name, dict((k, v) for k, v in prof.items() if k != "name"))
        return sorted(out + _leaf_lines("roce-accept", data.get("roce-accept") or {}))

    def diff(self, current, intended):
        """REST calls (typed: RestOp) taking the managed leaves from ``current`` to ``intended`` (canonical text, either
        way)."""
        cur, want = _read(current), _read(intended)
        ops = []
        for name in sorted(set(cur) - set(want)):
            ops.append(RestOp("DELETE", "%s/%s" % (PROFILES, name)))
        for name in sorted(want):
            have, prof = cur.get(name), want[name]
            if have is None:
                ops.append(RestOp("POST", PROFILES, {"name": name, "mode": prof.get("mode", "lossless")}))
                have = {"mode": prof.get("mode", "lossless")}
            url = "%s/%s" % (PROFILES, name)
            for leaf in ("mode", "cable-length"):
                if prof.get(leaf) is not None and prof.get(leaf) != have.get(leaf):
                    ops.append(RestOp("PATCH", url, {leaf: prof[leaf]}))
            if sorted(prof.get("bind-interfaces", [])) != sorted(have.get("bind-interfaces", [])):
                ops.append(RestOp("PATCH", url, {"bind-interfaces": sorted(prof.get("bind-interfaces", []))}))
        return ops

    def commands(self, ops):
        """Each REST call as the switch's shell runs it (``curl``)."""
        return [Command(request(op.verb, op.path[0], op.value), op) for op in ops]

    # --- family hooks (nos/base.py Driver): a structured NOS of its own, one REST leaf per path -----------------
    def paths(self, managed):
        """One path per managed REST leaf, ``roce-profiles <name> <leaf> <value>``; a profile's ``bind-interfaces`` list is
        ONE setting (the REST model's leaf-list, replaced whole by a PATCH): ``... bind-interfaces Ethernet1,Ethernet2``,
        so an engineer's list that is a subset of ours reads as their value, never as our change half made."""
        return ["roce-profiles %s %s %s" % (name, leaf, ",".join(sorted(value)) if isinstance(value, list) else value)
                for name, prof in sorted(_read(managed).items()) for leaf, value in sorted(prof.items())]

    def takeover_items(self, before_image, after, intent, sections=("qos",)):
        """Another Easy RoCE profile binding a port the plan binds to ours: binding it would take that port's QoS
        over (a ``policy`` takeover of nos/takeover.py)."""
        want = set(_read(after).get(PROFILE, {}).get("bind-interfaces", []))
        out = []
        for line in before_image.outside:
            m = re.match(r"^roce-profiles (\S+) bind-interfaces (\S+)$", line)
            if m and m.group(2) in want:
                out.append(_item("policy", "interface %s > roce-profile" % m.group(2), "roce-profile %s" % m.group(1),
                                 "roce-profile %s" % PROFILE, "interface %s bound to Easy RoCE profile %s (not ours; "
                                 "plan: %s) would be rebound" % (m.group(2), m.group(1), PROFILE)))
        return out

    def protected(self, command):
        """A reverse never touches another profile, and never deletes anything but ours."""
        m = re.search(r" (https://\S+)$", command.strip())
        return not (command.startswith(CURL + " ") and m and m.group(1) in (PROFILES, "%s/%s" % (PROFILES, PROFILE)))

    safe_reverse = Driver.checked_reverse

    def state(self, managed):
        return {"roce_profiles": _read(managed)}

    def port_mtus(self, managed):
        """Nothing: this collection configures no MTU on AsterNOS (sections: qos only)."""
        return {}

    @staticmethod
    def generated(running):
        """What Easy RoCE generated for our profile (the read-back the plan report points to)."""
        profiles, _data = load(running)
        prof = profiles.get(PROFILE) or {}
        return dict((leaf, prof[leaf]) for leaf in GENERATED + ("incast-level", "traffic-model") if leaf in prof)
