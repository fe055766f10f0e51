"""The per-NOS paragraphs of switch_config and switch_facts DOCUMENTATION are generated from the drivers' declarations
(issue 35: transaction mechanism, sections, drain, opt-ins; config read and counters read) by tools/gen_docs.py, so
they cannot drift: this test fails when a driver changes and the modules' docs were not regenerated."""
import os

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS, get_driver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.verification import with_module_items

from .helpers import ROOT


def _source(module):
    with open(os.path.join(ROOT, "plugins", "modules", module + ".py")) as handle:
        return handle.read()


@pytest.mark.parametrize("module", ["switch_config", "switch_facts"])
def test_per_nos_paragraphs_are_generated_from_the_drivers(module):
    text = _source(module)
    assert with_module_items(text, module) == text, "run tools/gen_docs.py"
    doc = yaml.safe_load(text.split('DOCUMENTATION = r"""', 1)[1].split('"""', 1)[0])
    items = [d for d in doc["description"] if d.startswith("On C(") and ") - " in d[:30]]
    assert [d.split(")")[0][5:] for d in items] == sorted(DRIVERS)   # one item per registered driver, in YAML
    for name in DRIVERS:
        item = next(d for d in items if d.startswith("On C(%s)" % name))
        drv = get_driver(name)
        if module == "switch_config":
            assert drv.transaction.mechanism in item and ", ".join(drv.sections) in item
        else:
            assert "C(%s)" % drv.show_running in item and all(r.command in item for r in drv.counters)


def test_a_changed_declaration_shows_as_drift(monkeypatch):
    text = _source("switch_config")
    monkeypatch.setattr(get_driver("nxos").transaction, "mechanism", "something else")
    assert with_module_items(text, "switch_config") != text
