"""Two controllers on one switch, many times (issue 18 "done when"): `make bench-races`.

For every NOS the switch lab simulates (AsterNOS, Dell SONiC, EOS, NVUE, NX-OS, community SONiC), RACES (default 50)
two-controller races: two Appliers with separate controller-lock directories (two machines, CLI + AWX,
two AWX jobs) released by one barrier, so both start within a few milliseconds. Each race is judged
by tests/integration/switches/test_many_operators.race(): exactly one success and one refusal with
nothing sent, the winner's change whole on the device (no lost update), no false "restored", the
running config saved, no aif-* object left. Prints per NOS the clean races, the start gaps seen and
the time per race; exits 1 on any violation.
"""
import argparse
import os
import pathlib
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "switches"))

import lab  # noqa: E402
import test_many_operators as races  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--races", type=int, default=50)
    ap.add_argument("--port-offset", type=int, default=int(os.environ.get("AIFABRIC_BENCH_PORT_OFFSET", "700")))
    ap.add_argument("--only", nargs="*", help="lab switch names (default: every NOS)")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="aif-races-")
    ports = {n: p + args.port_offset for n, p in list(lab.PORTS.items()) + [(k, v[2]) for k, v in lab.EXTRA.items()]}
    lab.up(fresh=True, root=root, ports=ports, extra=True)
    switch_lab = {"root": root, "ports": ports, "devices": lab.devices(extra=True), "plan": lab.lab_plan()}
    failed = 0
    try:
        for name in sorted(args.only or races.NOS):
            start, bad_races = time.time(), {}
            for i in range(args.races):
                bad = races.race(switch_lab, name, pathlib.Path(root), i)
                if bad:
                    bad_races[i] = bad
            took = (time.time() - start) / max(1, args.races)
            clean = args.races - len(bad_races)
            print("RACES %-8s %3d/%d clean  %.1fs per race" % (races.NOS[name], clean, args.races, took), flush=True)
            for i, bad in sorted(bad_races.items()):
                print("  race %d: %s" % (i, "; ".join(bad)[:600]))
            failed += len(bad_races)
    finally:
        lab.down(root)
    print("TOTAL violations: %d" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
