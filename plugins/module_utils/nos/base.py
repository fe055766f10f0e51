# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NOS driver base classes: render intent -> managed config, parse running -> managed config, diff.

Pure Python: no Ansible, no network. The switch_config module drives the session; drivers only
say what to send and how to read the answers.

The shared *shape* for render() and parse() is the canonical text of the managed sections of a
device's configuration (CLI NOSes: indented hierarchical text; NVUE: one ``nv set`` per line).
Render the intent and parse the running config, and the two strings are comparable byte for byte.
"""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.platforms import max_mtu
from ansible_collections.aifabric.roce.plugins.module_utils.nos.drain import NoDrain
from ansible_collections.aifabric.roce.plugins.module_utils.nos.facts import Unsupported

PREFIX = "AIF-"          # every object we own on a switch carries this name prefix
SECTIONS = ("qos", "mtu", "pbr")


class DriverError(Exception):
    pass


def ports_of(intent):
    """Ports of one leaf/spine intent (plan entry), downlinks first, in plan order."""
    ports = [d["port"] for d in intent.get("downlinks") or []]
    ports += [u["port"] for u in intent.get("uplinks") or [] if u["port"] not in ports]
    return ports


def local_destinations(intent):
    """Destinations a leaf routes normally instead of pinning to its uplink (the leaf's own host
    subnets): the plan's ``local_destinations`` of the leaf intent (plan.leafs[name]), the same list
    for every binding of that leaf."""
    return list(intent.get("local_destinations") or [])


def safe_name(text):
    return re.sub(r"[^A-Za-z0-9_-]", "-", text)


def host_of(source):
    return str(ipaddress.ip_interface(source).ip)


def l3_ingress(intent, svi, port):
    """{L3 interface: [bindings entering there]} for a NOS that applies PBR where host packets are routed (routed ports
    and SVIs, not L2 members: EOS, NVUE): the SVI (``svi(vlan)``) in scheme subnet_per_leaf, each routed host port in
    p2p; without planned host interfaces, the binding's own port (``port``: the NOS's name of a plan port)."""
    svis = [svi(i["vlan"]) for i in intent.get("host_interfaces") or [] if i["kind"] == "svi"]
    out = {}
    for b in intent.get("bindings") or []:
        out.setdefault(svis[0] if svis else port(b["ingress"]), []).append(b)
    return out


class Driver(object):
    """Interface every NOS driver implements (the whole contract: callers never probe a driver).

    A NOS belongs to one *family*, a subclass of Driver that implements the family hooks below once for
    every NOS of its kind: ``cli.CliDriver`` (indented hierarchical CLI read back through Section objects:
    EOS, NX-OS, klish SONiC), ``flatpath.FlatPathDriver`` (one ``set <path> <value>`` per line:
    NVUE), ``frr.FrrDriver`` (FRR's ``exit``-ended blocks), the CONFIG_DB driver (SONiC's tables)
    and ``asternos.AsterNosDriver`` (Easy RoCE's REST leaves). A hook a family does not implement raises
    NotImplementedError naming the driver and the hook: a new NOS never falls into another family's code.

    A new family (e.g. a structured NOS such as SONiC's CONFIG_DB) implements:

    * ``render(intent, qos, sections)`` / ``parse(running, intent, sections)``: the managed view as canonical
      text, equal byte for byte when the device holds the intent;
    * ``diff(current, intended)``: the typed ``Op`` s from one managed view to the other, and ``commands(ops)``:
      the NOS's commands for them (its view of the ops);
    * ``paths(managed)``: the managed view as *paths*: one string per setting, parents joined with
      ``" > "``, the setting last with its value as the last word (``interface Ethernet1 > mtu 9216``,
      ``interface swp1 link mtu 9216``, ``PORT > Ethernet0 > mtu 9216``). The one flattener: drift, the
      Image and foreign-change attribution compare these. ``value(path)`` splits one into (key, value);
    * ``outside(running, intent, sections)``: every setting of the full running config outside the managed
      view, as sorted paths of the same shape (verification proves they did not move);
    * ``takeover_items(before_image, after, intent, sections)``: what a first apply would replace or move
      that this collection did not put there (nos/takeover.py builds and words the items);
    * ``safe_reverse(current, target)`` and ``protected(command)``: commands back from ``current`` to
      ``target`` that never remove what ``protected`` names (a physical port, a whole table key).

    Device attributes: ``name``, ``device_type``, ``show_running``, ``save_command``, ``error_pattern``,
    ``transaction`` (nos/transactions.py), ``sections`` (what switch_config accepts for it; ``underlay`` in it: the
    driver renders the routed underlay), ``indent``, ``offline_format``, ``home``, ``comment``.

    Per-NOS facts, declared on the driver (never in a table keyed by platform name elsewhere): ``drain``,
    ``maintenance_drain``, ``counters`` / ``counter_evidence``, ``checks``, ``bgp_summary``, ``ppd_read``. Their
    defaults say "not supported" in words (``facts.Unsupported``, ``drain.NoDrain``): a new NOS lacks them openly,
    and tests/unit/nos/test_families.py lists what each driver lacks."""

    name = None              # platform name (plugins/module_utils/fabric/platforms.py)
    device_type = None       # netmiko device_type
    show_running = "show running-config"
    save_command = None      # the NOS's save command (None: netmiko's save_config default)
    # regexes that mark a device answer as an error (netmiko's error_pattern is empty by default)
    error_pattern = None
    transaction = None       # the NOS's Transaction class (nos/transactions.py)
    # managed sections this driver renders; switch_config refuses any other (data, not a name check)
    sections = SECTIONS
    indent = 1               # spaces per level of the NOS's config text (1 for flat NOSes: unused)
    offline_format = "cfg"   # what plan.yml writes per switch (nos/offline.py): config text, or "json" (CONFIG_DB)
    # where the session works after login: None (the NOS's CLI, as netmiko leaves it) or "bash" (the Linux shell)
    home = None
    comment = "!"            # the comment leader the NOS ignores in pasted config (the offline file's header)
    # the public source of every line it renders: [(regex, verified|unverified, source)] (nos/sources.py); none: every
    # rendered line is reported without a source (the offline file's header, the line-source test)
    line_sources = ()

    # --- per-NOS facts: each driver declares its own; these defaults say what is not supported, in words ----------
    # maintenance drain (nos/drain.py): DrainLine (a line in the default-VRF router bgp), FlatDrainLine, DrainSetting
    drain = NoDrain("no drain line known for this NOS")
    # another drain the running config may show (a regex over outside paths: EOS maintenance mode), reported by audit
    maintenance_drain = None
    # RoCE counters (nos/counters.py): [facts.Read(command, parser, where)], and {counter: verified|unverified}
    counters = ()
    counter_evidence = {}
    # switch_validate (nos/validation.py CHECKS) checks with a witnessed implementation here; others report not run
    checks = ()
    # the BGP summary bgp_sessions reads: facts.Read(command, bgp_state parser)
    bgp_summary = Unsupported("no captured BGP summary of this NOS")
    # how ppd_paths reads the PBR state: a nos/ppd_state.py PpdRead
    ppd_read = Unsupported("no captured PBR show output of this NOS to test a parser on")
    # how the switch picks among parallel ECMP links, in words ("{name}": the platform), for the probe plan's
    # hash_models (gom/probes.py): a vendor ASIC's hash is not computable offline
    ecmp_hash = ("{name}: the switch ASIC's ECMP hash (fields, seed and polynomial set per device, not published in a form "
                 "this planner can compute), so the pick cannot be computed offline; ask the device (e.g. a hash-calculator "
                 "show command) or measure with probes")
    # sections it renders that are pushed only under a fabric opt-in: {section: (fabric key, value, why)}
    # (nos/capabilities.py says so at plan time)
    opt_ins = {}

    def _missing(self, hook):
        return NotImplementedError("NOS driver %s (%s) does not implement %s(): a driver family must declare it "
                                   "(nos/base.py Driver)" % (self.name, type(self).__name__, hook))

    # --- the session (nos/connection.py): the NOS's own handling of its netmiko class -----------------------------
    def before_login(self):
        """What the NOS's netmiko class needs set before a login; nothing by default."""

    def after_login(self, conn):
        """The NOS's own prompt handling and shell hop once netmiko has logged in (``home``); nothing by default."""

    def mtu(self, intent):
        """The switch MTU the intent asks for, capped at the platform's ceiling (platform table `mtu`)."""
        return min(int(intent["mtu"]), max_mtu(self.name))

    def port(self, plan_port):
        """The NOS's name of a plan port: the plan already holds the name the device shows
        (fabric/platforms.py names ports per NOS), so this is the identity."""
        return plan_port

    def normalize_running(self, text):
        """The running config in the forms the driver renders (klish rescales WRED units); identity by default."""
        return text

    def offline_files(self, intent, qos, stem):
        """{relative path: text} plan.yml writes for this switch beside its config file (nos/offline.py); none by
        default (AsterNOS under ``asternos_config: config_db``: the CONFIG_DB tables of its SONiC-native sections)."""
        return {}

    def sections_for(self, intent):
        """The sections this switch's driver takes under its fabric's keys (the role plans no other): ``sections``."""
        return tuple(self.sections)

    def refuse(self, intent, qos, sections):
        """Why this driver refuses these sections or this QoS profile by what its NOS documents (None: it does not;
        AsterNOS refuses all but Easy RoCE's QoS, naming the opt-in)."""
        return None

    # --- family hooks (see the class docstring) ------------------------------------------
    def paths(self, managed):
        raise self._missing("paths")

    @staticmethod
    def value(path):
        """A path -> (key, value): the setting without its last word, and that word (None for a bare line)."""
        head, _sep, leaf = path.rpartition(" > ")
        toks = leaf.split()
        key = " ".join(toks[:-1]) if len(toks) > 1 else leaf
        return ((head + " > " + key) if head else key), (toks[-1] if len(toks) > 1 else None)

    def outside(self, running, intent, sections=SECTIONS):
        raise self._missing("outside")

    def takeover_items(self, before_image, after, intent, sections=SECTIONS):
        raise self._missing("takeover_items")

    def safe_reverse(self, current, target):
        raise self._missing("safe_reverse")

    def checked_reverse(self, current, target):
        """A ``safe_reverse`` for a family whose diff never removes a port or a table: the commands back to ``target``,
        refused when one removes what ``protected`` names (transactions.check_safe). A family declares it
        (``safe_reverse = Driver.checked_reverse``)."""
        from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import check_safe
        cmds = self.commands(self.diff(current, target))
        check_safe(cmds, self)
        return cmds

    def protected(self, command):
        raise self._missing("protected")

    mtu_path = None   # a regex over ``paths(managed)`` with groups (port, mtu), for port_mtus

    def port_mtus(self, managed):
        """{port: int} of the MTU section's managed view (NAPALM's ``get_interfaces()[port]['mtu']``): what the
        audit's MTU chain reads (audit/roce_health.py); read from the driver's paths with its ``mtu_path``."""
        if self.mtu_path is None:
            raise self._missing("port_mtus")
        found = (re.match(self.mtu_path, path) for path in self.paths(managed))
        return dict((m.group(1), int(m.group(2))) for m in found if m)

    # --- pure functions --------------------------------------------------------------
    def render(self, intent, qos, sections=SECTIONS):
        raise self._missing("render")

    def render_explicit(self, intent, qos, sections=None):
        """Every line of the intent, defaults included (the offline config); the render where they are the same
        (``sections`` None: the render's own default)."""
        return self.render(intent, qos) if sections is None else self.render(intent, qos, sections)

    def parse(self, running, intent, sections=SECTIONS):
        raise self._missing("parse")

    def fit(self, after, before_image):
        """The rendered managed text fitted to what the switch's own machinery does with it (``before_image``: the
        switch's Image, fullconfig.image) -> (managed text, notes naming what was left to the switch and why). Most
        NOSes keep what we render: (after, [])."""
        return self.fit_to(after, self.fit_view(before_image))

    def fit_view(self, before_image):
        """What ``fit`` reads of the switch, as plain data (JSON), for a check made away from the switch
        (switch_facts returns it, roce_health fits the render with it: the same wanted config as switch_config's).
        None by default: the render is kept as it is."""
        return None

    def fit_to(self, after, view):
        """``fit`` from ``fit_view``'s data -> (managed text, notes)."""
        return after, []

    def intended_image(self, base, after):
        """The whole config the switch should hold once ``after`` (managed text) is applied on ``base`` (an Image):
        ``base`` with its managed view replaced. A NOS whose managed settings can replace a setting outside it (a
        CONFIG_DB field of the switch's own key) drops those from the outside part."""
        return base.with_managed(after)

    def disruptions(self, before_image, ops):
        """What applying ``ops`` (``diff``) on this switch disturbs beyond the lines themselves (the NOS's own mechanism), as
        [{kind, ports, message}]: shown in check mode and diff, and a reason to drain. None by default."""
        return []

    def diff(self, current, intended):
        """The typed ``Op`` s that take the managed config from ``current`` to ``intended`` (both canonical)."""
        raise self._missing("diff")

    def commands(self, ops):
        """The NOS's view of ``ops``: the ``Command`` s a transaction sends (CLI lines, ``nv set`` lines, JSON Patch
        ops, REST calls), each knowing the op it renders."""
        raise self._missing("commands")

    def state(self, managed):
        """Structured view of canonical managed config (for facts)."""
        return {"lines": managed.splitlines()}

    # one show command that gives per-port PFC pause counters (None: the NOS has no single one)
    pfc_counters_command = None
    # short port names in counter tables -> full names
    port_abbrev = ()

    def parse_pfc_counters(self, text):
        """PFC counter table -> {port: {"rx_pfc": int, "tx_pfc": int}} (rows: port ... rx tx). Counters may
        carry thousands separators (``9,286,478``). No ntc-templates/TextFSM template exists for these
        tables (ntc-templates 9.3 has none for EOS or NX-OS PFC counters), hence this parser (nos/counters.py)."""
        from ansible_collections.aifabric.roce.plugins.module_utils.nos.counters import _port_table
        return dict((port, {"rx_pfc": prios["all"]["pfc_rx"], "tx_pfc": prios["all"]["pfc_tx"]})
                    for port, prios in _port_table(text, self.port_abbrev).items())


def _key(path):
    return Driver.value(path)[0]


def drift(before, after, driver):
    """Differences between current (``before``) and intended (``after``) managed config, as a list of
    ``{item, expected, actual}``: a changed value pairs up under one item; a missing line has
    ``actual`` None, an unexpected one ``expected`` None. Paths are the driver's (``Driver.paths``). Pure."""
    cur, want = driver.paths(before), driver.paths(after)
    cur_set, want_set = set(cur), set(want)
    missing = [p for p in want if p not in cur_set]
    extra = [p for p in cur if p not in want_set]
    items = {}
    for path in missing:
        items.setdefault(_key(path), [[], []])[0].append(path.rpartition(" > ")[2])
    for path in extra:
        items.setdefault(_key(path), [[], []])[1].append(path.rpartition(" > ")[2])
    return [{"item": k, "expected": "; ".join(v[0]) or None, "actual": "; ".join(v[1]) or None}
            for k, v in sorted(items.items())]
