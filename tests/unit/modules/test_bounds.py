"""Every numeric and path argument of every module is bounded, and the module refuses a value outside the bound
before it does anything, naming the argument (issue 37 item 7: `lock_timeout: -1`, `port: 70000`, `read_timeout: 0`,
`commit_timer: 1e8`, `lock_dir: /proc` were accepted or crashed)."""
import importlib
import os

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils import bounds

from ..module_runner import run_module

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODULES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "plugins", "modules")) if f.endswith(".py") and f != "__init__.py")
DUMMY = {"str": "x", "dict": {}, "list": [], "bool": False, "raw": "x", "path": "/nonexistent/aif-bounds-test"}


def _import(name):
    return importlib.import_module("ansible_collections.aifabric.roce.plugins.modules." + name)


def _options(name):
    doc = yaml.safe_load(_import(name).DOCUMENTATION)
    options = dict(doc.get("options") or {})
    for fragment in doc.get("extends_documentation_fragment") or []:
        short = fragment.split(".")[-1]
        frag = importlib.import_module("ansible_collections.aifabric.roce.plugins.doc_fragments." + short)
        options.update(yaml.safe_load(frag.ModuleDocFragment.DOCUMENTATION).get("options") or {})
    return options


def _typed(options):
    """(name, type, elements) of every numeric or path option, suboptions included."""
    for key, opt in options.items():
        kind, elements = opt.get("type", "str"), opt.get("elements")
        if kind in ("int", "float", "path") or (kind == "list" and elements in ("int", "float", "path")):
            yield key, kind, elements
        yield from _typed(opt.get("suboptions") or {})


CASES = [(m, key, kind, elements) for m in MODULES for key, kind, elements in _typed(_options(m))]


def test_the_walk_sees_the_arguments_the_review_named():
    seen = set((m, k) for m, k, _t, _e in CASES)
    for case in [("switch_config", "lock_timeout"), ("switch_config", "port"), ("switch_config", "commit_timer"),
                 ("switch_config", "read_timeout"), ("switch_config", "reconnect_timeout"), ("switch_config", "lock_dir"),
                 ("switch_config", "timeout"), ("fabric_sizing", "gpus"), ("rail_network", "owned_tables")]:
        assert case in seen
    assert len(CASES) > 70


@pytest.mark.parametrize("module, key, kind, elements", CASES, ids=["%s.%s" % c[:2] for c in CASES])
def test_every_numeric_argument_has_a_bound(module, key, kind, elements):
    if "path" in (kind, elements):
        return  # paths are bounded by type (not empty, no NUL; written ones outside /proc, /sys, /dev)
    low, high, _unit, what = bounds.bound(module, key)
    assert low < high and what


ONE_OF = {"nic_firmware": [("image_dir", "image_file")]}


def _required(module, skip):
    options = _options(module)
    args = {}
    if "plan" in options and "fabric" in options:
        ONE_OF.setdefault(module, [("plan", "fabric")])
    for key, opt in options.items():
        if opt.get("required") and key != skip:
            args[key] = opt["choices"][0] if opt.get("choices") else DUMMY.get(opt.get("type", "str"), 1)
            if opt.get("type") in ("int", "float"):
                args[key] = bounds.bound(module, key)[0]
    for group in ONE_OF.get(module, []):  # required_one_of / mutually_exclusive: one of the group, not two
        if skip not in group:
            args[group[0]] = DUMMY["path"]
    return args


def _refused(capsys, module, key, value):
    args = _required(module, key)
    args[key] = value
    result = run_module(_import(module), args, capsys)
    assert result.get("failed") is True, (module, key, value, result)
    assert key + " " in result["msg"] or key + "[" in result["msg"], result["msg"]
    return result["msg"]


@pytest.mark.parametrize("module, key, kind, elements", CASES, ids=["%s.%s" % c[:2] for c in CASES])
def test_a_value_outside_the_bound_is_refused_by_name(capsys, module, key, kind, elements):
    if "path" in (kind, elements):
        msg = _refused(capsys, module, key, [""] if kind == "list" else "")
        assert "empty" in msg
        if ("*", key) in bounds.WRITTEN or (module, key) in bounds.WRITTEN:
            assert "kernel's /proc filesystem" in _refused(capsys, module, key, "/proc/aif")
        return
    low, high, _unit, _what = bounds.bound(module, key)
    for value in (low - 1, high + 1):
        value = float(value) if "float" in (kind, elements) else value
        msg = _refused(capsys, module, key, [value] if kind == "list" else value)
        assert "must be between %s and %s" % (low, high) in msg


@pytest.mark.parametrize("key, value", [("lock_timeout", -1), ("lock_timeout", 10 ** 8), ("reconnect_timeout", -1),
                                        ("commit_timer", -30), ("commit_timer", 10 ** 8), ("read_timeout", 0),
                                        ("timeout", 0), ("port", 70000), ("lock_dir", "/proc")])
def test_the_reviews_values_fail_switch_config_before_anything_is_sent(capsys, key, value):
    msg = _refused(capsys, "switch_config", key, value)
    assert msg.startswith(key + " is ")


def test_a_lock_dir_that_is_a_file_is_refused(capsys, tmp_path):
    (tmp_path / "f").write_text("")
    assert "is not a directory" in _refused(capsys, "switch_config", "lock_dir", str(tmp_path / "f"))


def test_switch_state_judges_each_switch_by_the_same_bounds():
    from ansible_collections.aifabric.roce.plugins.module_utils.nos import switch_read
    params, why = switch_read.validated({"name": "l1", "platform": "eos", "intent": {}, "qos": {}, "host": "h",
                                         "username": "u", "port": 70000})
    assert params is None and why.startswith("port is 70000")


@pytest.mark.parametrize("table", [253, 254, 255])
def test_rail_network_never_owns_a_kernel_table(capsys, table):
    assert "owned_tables[0] is %d" % table in _refused(capsys, "rail_network", "owned_tables", [table])


def test_the_bounds_page_is_current():
    with open(os.path.join(ROOT, "docs", "argument-bounds.md")) as handle:
        assert handle.read() == bounds.bounds_doc(), "run tools/gen_docs.py"


def test_a_lease_shorter_than_the_longest_command_is_refused_naming_both(capsys):
    msg = _refused(capsys, "switch_config", "lock_ttl", 60)   # with read_timeout 120 (the default)
    assert msg.startswith("lock_ttl (role variable switch_lock_ttl) is 60: it must exceed read_timeout (role variable "
                          "switch_read_timeout) (120, the longest a single switch command may run) by 30 seconds")
