"""Golden corpus of the NOS drivers' pure functions (render, parse, diff, the full-config image), so a
refactor of the drivers can be proven behaviour-preserving byte for byte (tests/unit/nos/test_golden.py).

    PYTHONPATH=.collections .venv/bin/python tests/unit/nos/golden/make_golden.py   # rewrite golden.json.gz

Regenerate only when a change of rendered output is intended (and say so in the commit).
"""
import gzip
import json
import os
import re
import sys


from ansible_collections.aifabric.roce.plugins.module_utils.nos import fullconfig
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import Driver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import CliDriver

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
sys.path.insert(0, ROOT)   # tests.unit.nos.helpers, also when run as a script
from tests.unit.nos.helpers import plan_on_platform  # noqa: E402
CAPTURES = os.path.join(ROOT, "tests", "fixtures", "switches")
GOLDEN = os.path.join(HERE, "golden.json.gz")
DRIVERS = ("eos", "nxos", "dell_sonic", "asternos", "nvue", "frr")
PLANS = (("lab", None), ("rail512", None), ("lab", "p2p"))
# counter outputs (switch_facts counters: tests/unit/nos/test_counters.py), PBR state (nos/ppd_state.py,
# tests/unit/nos/test_ppd_state.py) and BGP summaries (nos/bgp_state.py), not configs: no driver parses them
COUNTERS = re.compile(r"pfc-counters|pfcwd|queue-counter|wredcounters|counters-qos|pfc-watchdog|ip-s-|tc-s-qdisc|show-route-map|show-acl-"
                      r"|route-get-batch|bgp-neighbor|bgp-summary")

# capture directory -> drivers that read that NOS's output
CAPTURE_DRIVERS = {"eos": ("eos",), "nxos": ("nxos",), "sonic": ("dell_sonic",), "asternos": ("asternos",), "nvue": ("nvue",),
                   "frr": ("frr",)}


_plan = plan_on_platform


def _devices(plan):
    return list(plan["leafs"].items())[:2] + list(plan["spines"].items())[:1]


def _call(fn, *args):
    """The result, or the error a driver raises (also part of its behaviour)."""
    try:
        return fn(*args)
    except (ValueError, KeyError, TypeError) as exc:   # a refusal is recorded and compared like any output
        return "ERROR %s: %s" % (type(exc).__name__, exc)


def _send(drv, current, intended):
    """The commands from one managed view to another (the driver's view of its typed ops)."""
    return drv.commands(drv.diff(current, intended))


def _image(drv, text, intent, sections):
    img = _call(fullconfig.image, drv, text, intent, sections)
    return img if isinstance(img, str) else {"managed": img.managed, "outside": img.outside}


def corpus():
    out = {}
    for platform in DRIVERS:
        drv = get_driver(platform)
        for inventory, scheme in PLANS:
            plan = _plan(inventory, platform, scheme)
            every = tuple(drv.sections)
            for name, intent in _devices(plan):
                full = _call(drv.render, intent, plan["qos"], every)
                for sections in [(s,) for s in every] + [every]:
                    key = "%s|%s|%s|%s|%s" % (platform, inventory, scheme or "-", name, ",".join(sections))
                    text = _call(drv.render, intent, plan["qos"], sections)
                    entry = {"render": text,
                             "parse": _call(drv.parse, text, intent, sections),
                             "parse_of_all": _call(drv.parse, full, intent, sections),
                             "diff_add": _call(_send, drv, "", text),
                             "diff_remove": _call(_send, drv, text, ""),
                             "image_of_all": _image(drv, full, intent, sections)}
                    if type(drv).render_explicit is not Driver.render_explicit:   # a driver with its own explicit form (EOS)
                        entry["render_explicit"] = _call(drv.render_explicit, intent, plan["qos"], sections)
                    if isinstance(drv, CliDriver):
                        entry["managed_interfaces"] = sorted(drv.managed_interfaces(intent, sections))
                        entry["created_interfaces"] = sorted(drv.created_interfaces(intent, sections))
                    out[key] = entry
        # real captures of this NOS, read with the lab plan's first leaf and spine
        plan = _plan("lab", platform, None)
        for nos, readers in sorted(CAPTURE_DRIVERS.items()):
            if platform not in readers:
                continue
            for fname in sorted(os.listdir(os.path.join(CAPTURES, nos))):
                if fname.endswith(".md") or fname.endswith(".json") or COUNTERS.search(fname) \
                        or os.path.isdir(os.path.join(CAPTURES, nos, fname)):
                    continue
                with open(os.path.join(CAPTURES, nos, fname)) as handle:
                    running = handle.read()
                for name, intent in _devices(plan)[:1] + _devices(plan)[2:]:
                    for sections in [(s,) for s in drv.sections] + [tuple(drv.sections)]:
                        key = "capture|%s|%s/%s|%s|%s" % (platform, nos, fname, name, ",".join(sections))
                        parsed = _call(drv.parse, running, intent, sections)
                        out[key] = {"parse": parsed, "image": _image(drv, running, intent, sections),
                                    "diff_to_render": _call(_send, drv, parsed, _call(drv.render, intent, plan["qos"], sections))
                                    if not parsed.startswith("ERROR") else None}
    return out


def write(path, data):
    """A corpus as gzip'd JSON, byte-stable (sorted keys, no mtime)."""
    blob = json.dumps(data, sort_keys=True, indent=0).encode("utf-8")
    with gzip.GzipFile(path, "wb", mtime=0) as handle:
        handle.write(blob)
    print("%d entries, %d bytes uncompressed, %d bytes gz" % (len(data), len(blob), os.path.getsize(path)))


def read(path):
    with gzip.open(path, "rb") as handle:
        return json.loads(handle.read().decode("utf-8"))


def main():
    write(GOLDEN, corpus())


if __name__ == "__main__":
    sys.exit(main())
