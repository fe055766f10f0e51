"""Golden corpus of the commands every driver sends (tests/unit/nos/test_commands_golden.py): ``Driver.commands`` of
``Driver.diff`` (adding, removing and changing the managed view), ``safe_reverse`` and the drain's commands, for
every registered driver on the lab plan (both addressing schemes), and the settings foreign-change attribution
exempts as this run's own (``Op.lines``). Generated from the command-string drivers before ``diff`` returned typed
ops (issue 35): the op-first drivers must send the same bytes.

    PYTHONPATH=.collections .venv/bin/python tests/unit/nos/golden/make_commands.py   # rewrite commands.json.gz

Regenerate only when a change of the commands sent is intended (and say so in the commit).
"""
import copy
import os
import re
import sys

from ansible_collections.aifabric.roce.plugins.module_utils.nos.errors import StepError
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS, get_driver

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
sys.path.insert(0, ROOT)
from tests.unit.nos.helpers import plan_on_platform  # noqa: E402
sys.path.insert(0, HERE)
import make_golden  # noqa: E402
GOLDEN = os.path.join(HERE, "commands.json.gz")
SCHEMES = (None, "p2p")
# jsonpatch orders the ops of a table's keys by Python's set order (PYTHONHASHSEED): kept sorted here
ORDERLESS = ("community_sonic",)


def _call(fn, *args):
    try:
        return fn(*args)
    except (ValueError, KeyError, TypeError, StepError) as exc:   # a refusal is part of the behaviour
        # the first refused command of an orderless driver depends on the set order: the reason is kept
        return "ERROR %s: %s" % (type(exc).__name__, re.sub(r"command '.*?': ", "", str(exc)))


def _changed(intent):
    """The intent a second run brings: another MTU, one downlink and its binding fewer."""
    out = copy.deepcopy(intent)
    if "mtu" in out:
        out["mtu"] = 9100
    for key in ("downlinks", "bindings"):
        if out.get(key):
            out[key] = out[key][:-1]
    return out


def _send(drv, current, intended):
    return [str(c) for c in drv.commands(drv.diff(current, intended))]


def _lines(drv, cmds):
    """What attribution exempts of ``cmds`` (sets, unsets), sorted."""
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import sent_ops
    ops = sent_ops(cmds)
    return {"set": sorted(set(ln for op in ops if op.kind == "set" for ln in op.lines())),
            "unset": sorted(set(ln for op in ops if op.kind == "unset" for ln in op.lines()))}


def corpus():
    out = {}
    for platform in sorted(DRIVERS):
        drv = get_driver(platform)
        every = tuple(drv.sections)
        for scheme in SCHEMES:
            plan = plan_on_platform("lab", platform, scheme)
            for name, intent in list(plan["leafs"].items())[:2] + list(plan["spines"].items())[:1]:
                full = drv.render(intent, plan["qos"], every)
                other = drv.render(_changed(intent), plan["qos"], every)
                key = "%s|%s|%s" % (platform, scheme or "-", name)
                entry = {}
                for label, cur, want in (("add", "", full), ("remove", full, ""), ("change", full, other),
                                         ("change_back", other, full)):
                    cmds = _call(_send, drv, cur, want)
                    entry[label] = cmds
                    if not isinstance(cmds, str):
                        entry[label + "_lines"] = _lines(drv, drv.commands(drv.diff(cur, want)))
                for label, cur, want in (("reverse_all", full, ""), ("reverse_change", full, other)):
                    cmds = _call(drv.safe_reverse, cur, want)
                    entry[label] = cmds if isinstance(cmds, str) else [str(c) for c in cmds]
                    if not isinstance(cmds, str):
                        entry[label + "_lines"] = _lines(drv, cmds)
                for on in ((True, False) if drv.drain else ()):
                    cmds = drv.drain.commands(drv, full, on)
                    entry["drain_%s" % on] = None if cmds is None else [str(c) for c in cmds]
                    if cmds:
                        entry["drain_%s_lines" % on] = _lines(drv, cmds)
                if platform in ORDERLESS:
                    entry = dict((k, sorted(v) if isinstance(v, list) else v) for k, v in entry.items())
                out[key] = entry
    return out


def main():
    make_golden.write(GOLDEN, corpus())


if __name__ == "__main__":
    sys.exit(main())
