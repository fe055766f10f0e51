"""Run the malformed-fabric corpus (tests/unit/fabric/malformed.py) against a checkout and count outcomes.

A case counts as refused cleanly only if build_plan raises FabricError, naming the expected key path,
within the time limit. Each case runs in its own interpreter with an address-space limit, so a
checkout that expands a huge port range fails with MemoryError instead of swapping the machine.
Usage: python tools/measure_malformed.py [--collections DIR] [--timeout S] [--memory-mb MB] [-v]
(--collections: the `.collections` directory of the checkout to test; default this one's.)
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "unit", "fabric"))

from malformed import CASES  # noqa: E402

CHILD = r"""
import json, resource, sys
limit = int(sys.argv[3]) << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import yaml
from malformed import CASES, apply_edits
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
name, edits, expected = CASES[int(sys.argv[4])]
with open(sys.argv[5]) as handle:
    base = yaml.safe_load(handle)["fabric"]
try:
    build_plan(apply_edits(base, edits))
    out = {"outcome": "accepted"}
except FabricError as exc:
    out = {"outcome": "refused", "paths": exc.paths()}
except BaseException as exc:
    out = {"outcome": "exception", "type": type(exc).__name__}
print(json.dumps(out))
"""


def run_case(index, collections, timeout, memory_mb):
    lab = os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml")
    argv = [sys.executable, "-c", CHILD, collections, os.path.join(ROOT, "tests", "unit", "fabric"),
            str(memory_mb), str(index), lab]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"outcome": "timeout"}
    if done.returncode != 0 or not done.stdout.strip():
        return {"outcome": "exception", "type": "exit %d: %s" % (done.returncode, done.stderr.strip()[-200:])}
    return json.loads(done.stdout.strip().splitlines()[-1])


def classify(result, expected):
    if result["outcome"] == "refused":
        return "refused with key path" if expected in result["paths"] else "refused, other path"
    return result["outcome"]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--collections", default=os.path.join(ROOT, ".collections"))
    parser.add_argument("--timeout", type=float, default=15.0)
    parser.add_argument("--memory-mb", type=int, default=1024)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    counts = {}
    for index, (name, _edits, expected) in enumerate(CASES):
        result = run_case(index, args.collections, args.timeout, args.memory_mb)
        kind = classify(result, expected)
        counts[kind] = counts.get(kind, 0) + 1
        if args.verbose and kind != "refused with key path":
            print("%-24s %-45s %s" % (kind, name, result.get("type") or result.get("paths") or ""))
    total = len(CASES)
    clean = counts.get("refused with key path", 0)
    print("corpus %d: refused with key path %d (%.0f%%); %s" % (
        total, clean, 100.0 * clean / total, ", ".join("%s %d" % item for item in sorted(counts.items()))))


if __name__ == "__main__":
    main()
