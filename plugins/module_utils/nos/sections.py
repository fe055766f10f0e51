# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Section objects: one per managed concern of a CLI driver (qos, mtu, pbr, underlay), its render function next to the
line forms that recognise its lines on read-back, the shape of ansible.netcommon's resource-module ``PARSERS``
(rm_base network_template: ``name``, ``getval`` regex, ``setval`` template). ``attach`` derives a CliDriver's read-back
tables from them."""

from __future__ import annotations

import re
import string


def _derive(template, fields):
    """``template`` -> the regex of the lines it renders: each ``{field}`` as ``fields[field]`` (default ``\\S+``)."""
    out = []
    for literal, field, _spec, _conv in string.Formatter().parse(template):
        out.append(re.escape(literal))
        if field is not None:
            out.append("(?:%s)" % fields.get(field, r"\S+"))
    return "".join(out) + "$"


class Form(object):
    """One line form: ``template`` renders it (``form(**values)`` or ``form.node(children, **values)``);
    ``owns`` is the regex that recognises it on read-back. By default ``owns`` is derived from the
    template (``fields`` gives a field's pattern); a form whose read-back scope is wider than what it
    renders (a whole ``priority-flow-control ...`` namespace, every ``AIF-`` object of a kind: lines of
    that kind the intent lacks are drift to remove) says so with an explicit ``owns``. ``owns=False``:
    the driver reads the line back with its own code (e.g. EOS's range-compressed ``vlan`` list)."""

    def __init__(self, template, owns=None, **fields):
        self.template = template
        self.owns = _derive(template, fields) if owns is None else owns

    def __call__(self, **values):
        return self.template.format(**values)

    def node(self, children=(), **values):
        return (self(**values), list(children))

    def __repr__(self):
        return "Form(%r)" % self.template


class Section(object):
    """One managed concern of a driver: ``render(driver, intent, qos)`` returns (top-level nodes,
    {interface name: child nodes}); ``top`` are the forms of the top-level lines it owns (a section
    line owns its whole block), ``children`` the forms of the interface child lines it manages on
    the plan's ports, ``l3_children`` those on interfaces the underlay creates (loopback, SVI) where
    a driver tells them apart (EOS)."""

    def __init__(self, name, render, top=(), children=(), l3_children=()):
        self.name = name
        self.render = render
        self.top = tuple(top)
        self.children = tuple(children)
        self.l3_children = tuple(l3_children)

    def __repr__(self):
        return "Section(%r)" % self.name


def read_back(sections, attr):
    """{section name: (regex, ..)} of one kind of forms (``top``, ``children``, ``l3_children``), deduplicated."""
    out = {}
    for sec in sections:
        pats = out.setdefault(sec.name, ())
        for form in getattr(sec, attr):
            if form.owns is not False and form.owns not in pats:
                pats += (form.owns,)
        out[sec.name] = pats
    return dict((k, v) for k, v in out.items() if v)


def render_sections(driver, sections, wanted, intent, qos):
    """The wanted sections' top-level nodes, then one ``interface`` node per interface with children."""
    nodes, interfaces = [], {}
    for sec in sections:
        if sec.name not in wanted:
            continue
        top, children = sec.render(driver, intent, qos)
        nodes += top
        for name, kids in children.items():
            interfaces.setdefault(name, []).extend(kids)
    return nodes + [("interface %s" % name, kids) for name, kids in interfaces.items() if kids]


def attach(driver_class, *sections):
    """Give a CLI driver class its Section objects and the read-back tables derived from them."""
    driver_class.section_objects = tuple(sections)
    driver_class.owned_sections = read_back(sections, "top")
    driver_class.interface_children = read_back(sections, "children")
    driver_class.l3_children = read_back(sections, "l3_children")
    return driver_class
