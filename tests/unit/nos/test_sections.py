"""Section objects (nos/sections.py): a form's read-back regex recognises what it renders, and every line a
CLI driver's section renders is recognised by that same section's forms (render and read-back side by side)."""
import os
import re

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
from tests.unit.nos.helpers import plan_on_platform
from ansible_collections.aifabric.roce.plugins.module_utils.nos.sections import Form, Section, read_back

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_form_derives_its_read_back_regex_from_the_template():
    mtu = Form("mtu {mtu}", mtu=r"\d+")
    assert mtu(mtu=9214) == "mtu 9214"
    assert re.match(mtu.owns, "mtu 9214") and not re.match(mtu.owns, "mtu 9214 extra")
    assert not re.match(mtu.owns, "mtu jumbo")
    acl = Form("ip access-list {name}", owns=r"ip access-list AIF-")
    assert acl.node([("10 permit ip any any", [])], name="AIF-X") == ("ip access-list AIF-X", [("10 permit ip any any", [])])
    assert re.match(acl.owns, "ip access-list AIF-OTHER") and not re.match(acl.owns, "ip access-list MGMT")


def test_read_back_tables_keep_one_regex_per_scope_and_skip_driver_read_forms():
    shared = r"priority-flow-control "
    sec = Section("qos", None, top=(Form("vlan {v}", owns=False), Form("system qos")),
                  children=(Form("priority-flow-control mode on", owns=shared), Form("priority-flow-control x", owns=shared)))
    assert read_back([sec], "children") == {"qos": (shared,)}
    assert read_back([sec], "top") == {"qos": (r"system\ qos$",)}
    assert read_back([sec], "l3_children") == {}


def _lab(platform, scheme):
    return plan_on_platform("lab", platform, scheme)


def _recognised(line, forms):
    return any(re.match(f.owns if f.owns is not False else re.escape(f.template.split("{")[0]), line) for f in forms)


@pytest.mark.parametrize("platform", ["eos", "nxos", "dell_sonic"])
@pytest.mark.parametrize("scheme", [None, "p2p"])
def test_every_rendered_line_is_read_back_by_its_own_section(platform, scheme):
    plan = _lab(platform, scheme)
    drv = get_driver(platform)
    assert sorted(s.name for s in drv.section_objects) == sorted(drv.sections)
    rendered = set()
    for intent in list(plan["leafs"].values())[:1] + list(plan["spines"].values())[:1]:
        for sec in drv.section_objects:
            top, interfaces = sec.render(drv, intent, plan["qos"])
            if top or interfaces:
                rendered.add(sec.name)
            for line, _kids in top:
                assert _recognised(line, sec.top), (sec.name, line)
            for _name, kids in interfaces.items():
                for line, _kids in kids:
                    assert _recognised(line, sec.children + sec.l3_children), (sec.name, line)
    assert rendered == set(drv.sections)   # the leaf renders every section (a spine has no PBR)
