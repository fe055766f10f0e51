# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared machinery for hierarchical (Cisco-like) CLIs (EOS, NX-OS, Enterprise SONiC klish); remediation by
hier_config (the field's library for CLI config diffs)."""

from __future__ import annotations

import re

import importlib.util

# hier_config (with pydantic) costs ~0.2 s to import: a no-op run (current == intended) never needs it,
# so it is imported only when there is something to remediate.
HAS_HIER_CONFIG = importlib.util.find_spec("hier_config") is not None

from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import Driver, PREFIX, SECTIONS, ports_of
from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import Command, Op
from ansible_collections.aifabric.roce.plugins.module_utils.nos.sections import Form, Section, render_sections

# the line forms and the mtu section of every indented CLI (EOS, NX-OS, klish): ``mtu N`` under each plan port
MTU = Form("mtu {mtu}", mtu=r"\d+")
ACL = Form("ip access-list {name}", owns=r"ip access-list %s" % PREFIX)


def _mtu(drv, intent, qos):
    return [], dict((drv.port(p), [MTU.node(mtu=drv.mtu(intent))]) for p in ports_of(intent))


MTU_SECTION = Section("mtu", _mtu, children=(MTU,))


def parse_tree(text):
    """Indented config text -> list of (line, children) nodes; skips '!' comments and blank lines."""
    root = []
    stack = [(-1, root)]
    for raw in text.splitlines():
        if not raw.strip() or raw.strip().startswith("!") or raw.strip() == "exit":
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack and indent <= stack[-1][0]:
            stack.pop()
        node = (raw.strip(), [])
        stack[-1][1].append(node)
        stack.append((indent, node[1]))
    return root


def walk(nodes, prefix="", out=None):
    """(line, children) nodes -> each line with its parents, joined with ``" > "`` (after ``prefix``), in text order."""
    out = [] if out is None else out
    for line, kids in nodes:
        out.append(prefix + line)
        walk(kids, prefix + line + " > ", out)
    return out


def flatten(text):
    """Indented config text -> its lines with their parents: the one flattener of nos/base.py Driver.paths."""
    return walk(parse_tree(text))


def cli_op(path):
    """One line of a CLI config with its parents -> its Op (``no X`` unsets X)."""
    line = path[-1]
    if line.startswith("no "):
        return Op("unset", path[:-1] + (line[3:],))
    return Op("set", path)


def natural_key(text):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def sort_tree(nodes, ordered_re=r"policy-map ", rank=None):
    """Children in natural order, except under ``ordered_re`` parents (order is semantic there); ``rank(parent,
    child)`` puts children that must come first (a BGP neighbor's ``remote-as``) ahead."""
    out = []
    for line, children in nodes:
        kids = sort_tree(children, ordered_re, rank)
        if not re.match(ordered_re, line):
            kids = sorted(kids, key=lambda n, parent=line: ((rank(parent, n[0]) if rank else 0), natural_key(n[0])))
        out.append((line, kids))
    return out


def dump_tree(nodes, indent, depth=0):
    out = []
    for line, children in nodes:
        out.append(" " * (indent * depth) + line)
        out.extend(dump_tree(children, indent, depth + 1))
    return out


class CliDriver(Driver):
    indent = 3
    hier_platform = "GENERIC"
    # the driver's Section objects (nos/sections.py: each concern's render next to the line forms it reads
    # back); sections.attach() sets them and derives the read-back tables below from them
    section_objects = ()
    # top-level lines owned by us, per section (regex on the line; a section line owns its whole block)
    owned_sections = {}
    # interface child lines we manage, per section
    interface_children = {}
    interface_re = r"interface (\S+)$"

    def child_rank(self, parent, child):
        """Rank of ``child`` under ``parent`` in canonical order (lower first; ties: natural order)."""
        return 0

    def interface_rank(self, name):
        """Interfaces with a lower rank come first (e.g. an SVI that must exist before its members)."""
        return 0

    def managed_interfaces(self, intent, sections):
        """Interfaces whose managed children parse() reads: the plan's ports (an underlay adds loopback and SVI)."""
        return set(self.port(p) for p in ports_of(intent))

    def created_interfaces(self, intent, sections):
        """Interfaces the driver creates (not physical ports): their header is managed, a rollback may remove them."""
        return self.managed_interfaces(intent, sections) - set(self.port(p) for p in ports_of(intent))

    def managed_child(self, interface, line, intent, sections):
        """Whether one child line of ``interface`` is managed: parse() reads the interface, a child form matches."""
        return interface in self.managed_interfaces(intent, sections) and self._child_managed(line, sections, interface)

    def owns_interface(self, interface, intent, sections=SECTIONS, children=()):
        """Whether the ``interface`` header itself is managed: a created one holding a managed line, never a port."""
        return interface in self.created_interfaces(intent, sections) and any(
            self.managed_child(interface, c[0], intent, sections) for c in children)

    def intent_owned(self, intent, sections):
        """Regexes of top-level lines owned because the intent names them (e.g. the host VLAN)."""
        return ()

    def render_tree(self, intent, qos, sections=SECTIONS):
        """Nodes of the wanted sections, each rendered by its Section object."""
        return render_sections(self, self.section_objects, sections, intent, qos)

    def render(self, intent, qos, sections=SECTIONS):
        return self.canonical(self.render_tree(intent, qos, sections))

    def canonical(self, nodes):
        """Canonical order: global sections, then interfaces, each sorted; children too (sort_tree)."""
        glob = sorted([n for n in nodes if not re.match(self.interface_re, n[0])], key=lambda n: natural_key(n[0]))
        intfs = sorted([n for n in nodes if re.match(self.interface_re, n[0])],
                       key=lambda n: (self.interface_rank(re.match(self.interface_re, n[0]).group(1)), natural_key(n[0])))
        lines = dump_tree(sort_tree(glob + intfs, rank=self.child_rank), self.indent)
        return "\n".join(lines) + ("\n" if lines else "")

    def _child_managed(self, line, sections, interface=None):
        return any(re.match(pat, line) for sec in sections for pat in self.interface_children.get(sec, ()))

    def _owned(self, line, sections):
        return any(re.match(pat, line) for sec in sections for pat in self.owned_sections.get(sec, ()))

    def parse(self, running, intent, sections=SECTIONS):
        ports = self.managed_interfaces(intent, sections)
        extra = [re.compile(pat) for pat in self.intent_owned(intent, sections)]
        out = []
        for line, children in parse_tree(running):
            m = re.match(self.interface_re, line)
            if m:
                if m.group(1) not in ports:
                    continue
                kept = [c for c in children if self._child_managed(c[0], sections, m.group(1))]
                if kept:
                    out.append((line, kept))
            elif self._owned(line, sections) or any(rx.match(line) for rx in extra):
                out.append((line, [c for c in children if not self.drain.is_child(line, c[0])]))
        return self.canonical(out)

    def _hconfig(self, text):
        from hier_config import Platform, get_hconfig
        return get_hconfig(getattr(Platform, self.hier_platform), text)

    def diff(self, current, intended):
        if current == intended:
            return []
        from hier_config import WorkflowRemediation
        rem = WorkflowRemediation(self._hconfig(current), self._hconfig(intended)).remediation_config
        return [cli_op(tuple(child.path())) for child in rem.all_children_sorted()]

    def commands(self, ops):
        """Each op as an indented line under its parents (``no`` before what it unsets), as typed in config mode."""
        return [Command(" " * (self.indent * (len(op.path) - 1)) + ("no " if op.kind == "unset" else "") + op.path[-1], op)
                for op in ops]

    # --- family hooks (nos/base.py Driver) --------------------------------------------
    def paths(self, managed):
        """Each line with its parents (``interface Ethernet1 > mtu 9216``), in text order."""
        return flatten(managed)

    def outside_global(self, line, intent, sections):
        """A top-level line as the outside view keeps it, None when it is managed (EOS rewrites ``vlan`` lists)."""
        extra = [re.compile(pat) for pat in self.intent_owned(intent, sections)]
        if self._owned(line, sections) or any(rx.match(line) for rx in extra):
            return None
        return line

    def outside(self, running, intent, sections=SECTIONS):
        """Every line outside the managed view (``managed_child``, ``owns_interface`` say which are ours)."""
        out = []
        for line, children in parse_tree(running):
            m = re.match(self.interface_re, line)
            if m:
                name = m.group(1)
                if not self.owns_interface(name, intent, sections, children):
                    out.append(line)   # a port itself is never ours to remove (a loopback/SVI the underlay made is)
                walk([c for c in children if not self.managed_child(name, c[0], intent, sections)], line + " > ", out)
                continue
            shown = self.outside_global(line, intent, sections)
            if shown is not None:
                walk([(shown, children)], "", out)
            else:   # an owned block: only a maintenance drain line in it is not ours (nos/drain.py)
                walk([c for c in children if self.drain.is_child(line, c[0])], line + " > ", out)
        return sorted(out)

    def takeover_items(self, before_image, after, intent, sections=SECTIONS):
        from ansible_collections.aifabric.roce.plugins.module_utils.nos import takeover
        return takeover.items(self, takeover.CLI_FORMS, before_image, after)

    def protected(self, command):
        from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import removes_port
        return removes_port(command)

    mtu_path = r"^interface (\S+) > mtu (\d+)$"   # ``interface X`` / `` mtu N`` as paths

    def safe_reverse(self, current, target):
        """Commands back to ``target`` that never remove an interface: a port left with no managed line gets ``no
        <line>`` per managed child."""
        from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import CREATED, VIRTUAL_INTERFACE, check_safe
        cmds = self.commands(self.diff(current, target))
        cur = dict(parse_tree(current))
        out = []
        for cmd in cmds:
            name = cmd.op.path[0] if cmd.op.kind == "unset" and len(cmd.op.path) == 1 else None
            if name in cur and re.match(r"interface \S+$", name) and not CREATED.match(cmd) \
                    and not re.match(r"interface %s$" % VIRTUAL_INTERFACE, name):
                out += self.commands([Op("set", (name,))] + [Op("unset", (name, child)) for child, kids in cur[name]])
            else:
                out.append(cmd)
        check_safe(out, self)
        return out

    def state(self, managed):
        interfaces = {}
        glob = []
        for line, children in parse_tree(managed):
            m = re.match(self.interface_re, line)
            if m:
                interfaces[m.group(1)] = dump_tree(children, 1)
            else:
                glob.append(line)
        return {"interfaces": interfaces, "global": glob}
