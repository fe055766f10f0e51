# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NOS driver contract (docs/adding-a-nos.md): render intent and parse running config to one canonical managed
text (equal byte for byte when the switch holds the intent), diff them to ops. Pure: no Ansible, no network."""

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
    """The leaf's own host subnets, routed normally instead of pinned to an uplink (for every binding)."""
    return list(intent.get("local_destinations") or [])


def safe_name(text):
    return re.sub(r"[^A-Za-z0-9_-]", "-", text)


def host_of(source):
    return str(ipaddress.ip_interface(source).ip)


def l3_ingress(intent, svi, port):
    """{L3 interface: [bindings]} where PBR applies on routed ports and SVIs (EOS, NVUE): the SVI (``svi(vlan)``) in
    scheme subnet_per_leaf, each routed host port in p2p, else the binding's own port (``port(plan port)``)."""
    svis = [svi(i["vlan"]) for i in intent.get("host_interfaces") or [] if i["kind"] == "svi"]
    out = {}
    for b in intent.get("bindings") or []:
        out.setdefault(svis[0] if svis else port(b["ingress"]), []).append(b)
    return out


class Driver(object):
    """Interface every NOS driver implements; callers never probe a driver. A NOS belongs to one *family* (a subclass
    implementing the family hooks once: ``cli.CliDriver``, ``flatpath.FlatPathDriver``, ``frr.FrrDriver``,
    the CONFIG_DB driver, ``asternos.AsterNosDriver``); a hook it lacks raises naming driver and hook. The hooks,
    device attributes and per-NOS facts (defaults say "not supported" in words) are listed in docs/adding-a-nos.md;
    tests/unit/nos/test_families.py lists what each driver lacks."""

    name = None              # platform name (plugins/module_utils/fabric/platforms.py)
    device_type = None       # netmiko device_type
    show_running = "show running-config"
    save_command = None      # the NOS's save command (None: netmiko's save_config default)
    error_pattern = None     # regexes that mark a device answer as an error (netmiko's default: none)
    transaction = None       # the NOS's Transaction class (nos/transactions.py)
    sections = SECTIONS      # managed sections this driver renders; switch_config refuses any other
    indent = 1               # spaces per level of the NOS's config text (1 for flat NOSes: unused)
    offline_format = "cfg"   # what plan.yml writes per switch (nos/offline.py): config text, or "json" (CONFIG_DB)
    home = None              # where the session works after login: None (the NOS's CLI) or "bash" (the Linux shell)
    comment = "!"            # the comment leader the NOS ignores in pasted config (the offline file's header)
    # the public source of every line it renders: [(regex, verified|unverified, source)] (nos/sources.py)
    line_sources = ()

    # --- per-NOS facts: each driver declares its own; these defaults say what is not supported, in words ----------
    # maintenance drain (nos/drain.py): DrainLine (a line in the default-VRF router bgp), FlatDrainLine, DrainSetting
    drain = NoDrain("no drain line known for this NOS")
    maintenance_drain = None   # a regex over outside paths of the NOS's own drain (EOS maintenance mode), for audit
    # RoCE counters (nos/counters.py): [facts.Read(command, parser, where)], and {counter: verified|unverified}
    counters = ()
    counter_evidence = {}
    # switch_validate (nos/validation.py CHECKS) checks with a witnessed implementation here; others report not run
    checks = ()
    # the BGP summary bgp_sessions reads (facts.Read); how ppd_paths reads the PBR state (a nos/ppd_state.py PpdRead)
    bgp_summary = Unsupported("no captured BGP summary of this NOS")
    ppd_read = Unsupported("no captured PBR show output of this NOS to test a parser on")
    # how the switch picks among parallel ECMP links, in words ("{name}": the platform), for gom/probes.py hash_models
    ecmp_hash = ("{name}: the switch ASIC's ECMP hash (fields, seed and polynomial set per device, not published in a form "
                 "this planner can compute), so the pick cannot be computed offline; ask the device (e.g. a hash-calculator "
                 "show command) or measure with probes")
    # sections pushed only under a fabric opt-in: {section: (fabric key, value, why)} (nos/capabilities.py)
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
        """The NOS's name of a plan port: the plan's own (fabric/platforms.py names ports per NOS)."""
        return plan_port

    def normalize_running(self, text):
        """The running config in the forms the driver renders (klish rescales WRED units); identity by default."""
        return text

    def offline_files(self, intent, qos, stem):
        """{relative path: text} plan.yml writes beside the switch's config file (nos/offline.py)."""
        return {}

    def sections_for(self, intent):
        """The sections this switch's driver takes under its fabric's keys (the role plans no other): ``sections``."""
        return tuple(self.sections)

    def refuse(self, intent, qos, sections):
        """Why the NOS refuses these sections or this QoS profile by what it documents (None: it does not)."""
        return None

    # --- family hooks (see the class docstring) ------------------------------------------
    def paths(self, managed):
        """The managed view as paths: one per setting, parents joined by `` > ``, the value last (``interface
        Ethernet1 > mtu 9216``): what drift, the Image and foreign-change attribution compare."""
        raise self._missing("paths")

    @staticmethod
    def value(path):
        """A path -> (key, value): the setting without its last word, and that word (None for a bare line)."""
        head, _sep, leaf = path.rpartition(" > ")
        toks = leaf.split()
        key = " ".join(toks[:-1]) if len(toks) > 1 else leaf
        return ((head + " > " + key) if head else key), (toks[-1] if len(toks) > 1 else None)

    def outside(self, running, intent, sections=SECTIONS):
        """Every setting of the running config outside the managed view, as sorted paths (verification: unmoved)."""
        raise self._missing("outside")

    def takeover_items(self, before_image, after, intent, sections=SECTIONS):
        """What a first apply would replace that this collection did not put there (nos/takeover.py)."""
        raise self._missing("takeover_items")

    def safe_reverse(self, current, target):
        """Commands back from ``current`` to ``target`` that never remove what ``protected`` names."""
        raise self._missing("safe_reverse")

    def checked_reverse(self, current, target):
        """``safe_reverse`` of a family whose diff never removes a port or a table (it declares it)."""
        from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import check_safe
        cmds = self.commands(self.diff(current, target))
        check_safe(cmds, self)
        return cmds

    def protected(self, command):
        raise self._missing("protected")

    mtu_path = None   # a regex over ``paths(managed)`` with groups (port, mtu), for port_mtus

    def port_mtus(self, managed):
        """{port: int} of the managed MTU view, from ``paths`` by ``mtu_path`` (audit/roce_health.py reads it)."""
        if self.mtu_path is None:
            raise self._missing("port_mtus")
        found = (re.match(self.mtu_path, path) for path in self.paths(managed))
        return dict((m.group(1), int(m.group(2))) for m in found if m)

    # --- pure functions --------------------------------------------------------------
    def render(self, intent, qos, sections=SECTIONS):
        raise self._missing("render")

    def render_explicit(self, intent, qos, sections=None):
        """Every line of the intent, defaults included (the offline config); ``render`` by default."""
        return self.render(intent, qos) if sections is None else self.render(intent, qos, sections)

    def parse(self, running, intent, sections=SECTIONS):
        raise self._missing("parse")

    def fit(self, after, before_image):
        """The render fitted to what the switch's own machinery does with it -> (managed text, notes why)."""
        return self.fit_to(after, self.fit_view(before_image))

    def fit_view(self, before_image):
        """What ``fit`` reads of the switch, as JSON data (switch_facts returns it, roce_health fits with it)."""
        return None

    def fit_to(self, after, view):
        """``fit`` from ``fit_view``'s data -> (managed text, notes)."""
        return after, []

    def intended_image(self, base, after):
        """The Image the switch should hold once ``after`` is applied on ``base``: its managed view replaced."""
        return base.with_managed(after)

    def disruptions(self, before_image, ops):
        """What applying ``ops`` disturbs beyond the lines themselves, [{kind, ports, message}] (a reason to drain)."""
        return []

    def diff(self, current, intended):
        """The typed ``Op`` s that take the managed config from ``current`` to ``intended`` (both canonical)."""
        raise self._missing("diff")

    def commands(self, ops):
        """The NOS's view of ``ops``: the ``Command`` s a transaction sends, each knowing its op."""
        raise self._missing("commands")

    def state(self, managed):
        """Structured view of canonical managed config (for facts)."""
        return {"lines": managed.splitlines()}

    # one show command that gives per-port PFC pause counters (None: the NOS has no single one)
    pfc_counters_command = None
    # short port names in counter tables -> full names
    port_abbrev = ()

    def parse_pfc_counters(self, text):
        """PFC counter table (rows: port ... rx tx) -> {port: {"rx_pfc", "tx_pfc"}} (ntc-templates 9.3 has none)."""
        from ansible_collections.aifabric.roce.plugins.module_utils.nos.counters import _port_table
        return dict((port, {"rx_pfc": prios["all"]["pfc_rx"], "tx_pfc": prios["all"]["pfc_tx"]})
                    for port, prios in _port_table(text, self.port_abbrev).items())


def drift(before, after, driver):
    """[{item, expected, actual}] between managed views (driver paths): a changed value pairs under one item; a missing
    line has ``actual`` None, an unexpected one ``expected`` None."""
    cur, want = driver.paths(before), driver.paths(after)
    cur_set, want_set = set(cur), set(want)
    missing = [p for p in want if p not in cur_set]
    extra = [p for p in cur if p not in want_set]
    items = {}
    for path in missing:
        items.setdefault(Driver.value(path)[0], [[], []])[0].append(path.rpartition(" > ")[2])
    for path in extra:
        items.setdefault(Driver.value(path)[0], [[], []])[1].append(path.rpartition(" > ")[2])
    return [{"item": k, "expected": "; ".join(v[0]) or None, "actual": "; ".join(v[1]) or None}
            for k, v in sorted(items.items())]
