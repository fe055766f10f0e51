"""Re-adding a NOS touches few product files (issue 35): its driver module, its transaction, the registry line, its
platform entry and the docs tools/gen_docs.py writes. Computed from the tree: every product file (plugins/, roles/,
playbooks/) that names the NOS's platform, its modules or its classes, as it would read after the NOS is removed
from the registry and the platform table and the generated parts are written again. A file that names it by hand
anywhere else (a parser kept in a shared module, a fabric key in the schema, a platform list in a comment or a
role) is one more file to touch, and fails here by name."""
import importlib.util
import inspect
import os
import re

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric import platforms
from ansible_collections.aifabric.roce.plugins.module_utils.nos import registry

from .helpers import ROOT

PRODUCT = ("plugins", "roles", "playbooks")
LIMIT = 5   # its module, its transaction, registry, platform entry, docs generated


def gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", os.path.join(ROOT, "tools", "gen_docs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def names_of(platform):
    """What names the NOS in a file: its platform name, its opt-in's key and values, its driver and transaction
    modules (a path, an import, a module attribute) and classes."""
    driver = registry.DRIVERS[platform]
    words = set([platform, driver.__name__, driver.transaction.__name__])
    entry = platforms.PLATFORMS[platform].get("opt_in")
    if entry:
        words.add(entry["key"])
        words.update(v for v in entry["choices"] if v != entry["default"])
    modules = set(cls.__module__.rpartition(".")[2] for cls in (driver, driver.transaction))
    modules.discard("transactions")   # a transaction class among the shared ones: its class name says it
    pattern = r"\b(?:%s)\b" % "|".join(re.escape(w) for w in sorted(words))
    for module in modules:
        pattern += r"|\bnos/%s\.py\b|\bnos\.%s\b|\bimport [\w, ]*\b%s\b|\b%s\.[A-Za-z_]" % ((module,) * 4)
    return re.compile(pattern)


def footprint(platform, monkeypatch):
    """(files naming the NOS once it is removed and the docs regenerated, the generated files it changes)."""
    driver = registry.DRIVERS[platform]
    own = set(os.path.relpath(os.path.realpath(inspect.getsourcefile(cls)), ROOT) for cls in (driver, driver.transaction))
    own |= set(os.path.relpath(os.path.realpath(inspect.getsourcefile(m)), ROOT) for m in (registry, platforms))
    parts = dict((name, rewrite) for name, rewrite, _what in gen_docs().PARTS)
    texts = {}
    for top in PRODUCT:
        for base, _dirs, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith((".py", ".yml", ".yaml", ".j2", ".md")):
                    path = os.path.join(base, name)
                    with open(path) as handle:
                        texts[os.path.relpath(path, ROOT)] = handle.read()
    monkeypatch.delitem(registry.DRIVERS, platform)
    monkeypatch.delitem(platforms.PLATFORMS, platform)
    generated = set()
    for path in parts:
        if path in texts:
            again = parts[path](texts[path])
            if again != texts[path]:
                generated.add(path)
            texts[path] = again
    pattern = names_of_cached[platform]
    named = sorted(path for path, text in texts.items() if pattern.search(text) and path not in own)
    return sorted(own), named, sorted(generated)


names_of_cached = {}


@pytest.mark.parametrize("platform", ["community_sonic"])
def test_re_adding_the_nos_touches_at_most_five_product_files(platform, monkeypatch):
    names_of_cached[platform] = names_of(platform)
    own, named, generated = footprint(platform, monkeypatch)
    assert not named, ("%s is named by hand outside its module, its transaction, the registry and its platform entry "
                       "in %s: move it onto its driver (or generate it with tools/gen_docs.py)" % (platform, named))
    # the docs that name it are written by tools/gen_docs.py (its per-NOS items, the platform lists): one step
    assert generated, "the generated docs do not list %s: tools/gen_docs.py lost it" % platform
    touched = own + ["docs generated (%s)" % ", ".join(generated)]
    assert len(touched) <= LIMIT, touched
    assert own == sorted(["plugins/module_utils/fabric/platforms.py", "plugins/module_utils/nos/gcu.py",
                          "plugins/module_utils/nos/registry.py", "plugins/module_utils/nos/sonic_db.py"])


def test_the_footprint_finds_a_nos_named_by_hand(monkeypatch, tmp_path):
    """The count can fail: a shared module that names the NOS (a parser left in nos/bgp_state.py) is found."""
    pattern = names_of("community_sonic")
    assert pattern.search("bgp_summary = Read('show ip bgp summary', sonic_db.parse_bgp_summary)")
    assert pattern.search("from ansible_collections.aifabric.roce.plugins.module_utils.nos import gcu, sources")
    assert pattern.search("platforms: [community_sonic, eos]")
    assert pattern.search("fabric.community_sonic_pbr: gcu_ignore_acl_rule")
    assert not pattern.search("SONiC's GCU refuses it; the CONFIG_DB model (nos/configdb.py)")


def test_the_platform_list_is_written_again_whichever_platform_goes(monkeypatch):
    """The generated platform choices follow the registry even when the first platform of the list goes."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.verification import with_driver_lists
    with open(os.path.join(ROOT, "plugins", "doc_fragments", "switch_platform.py")) as handle:
        text = handle.read()
    first = re.search(r"(?m)^    choices: \[(\w+),", text).group(1)
    monkeypatch.delitem(platforms.PLATFORMS, first)
    again = with_driver_lists(text)
    assert again != text and re.search(r"(?m)^    choices: \[%s\b" % "|".join(sorted(platforms.PLATFORMS)), again)
    assert not re.search(r"(?m)^    choices: \[.*\b%s\b" % first, again)
