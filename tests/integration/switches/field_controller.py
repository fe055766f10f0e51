"""One controller run in its own process (tests/integration/switches/test_lock_field.py): plan and apply one
switch of the lab, print the outcome as one JSON line. Started under `unshare --pid --fork --mount-proc --uts`
with an AWX job-pod host name, so two of them are two machines as the device lock sees them.

argv: JSON {"root", "ports", "name", "sections", "lock_dir", "start_at" (epoch: both start together),
"options" (Applier keywords), "mtu" (a changed port MTU, or null), optionally "ready" (a file made once planned) and
"start_when" (a file to wait for before applying)}.
"""
import json
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))
sys.path.insert(0, HERE)

import lab  # noqa: E402
from helpers import applier  # noqa: E402

from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import ApplyError  # noqa: E402


def main():
    args = json.loads(sys.argv[1])
    if args.get("skew"):   # this controller's clock is off by `skew` seconds (the device's is not)
        real = time.time
        time.time = lambda: real() + args["skew"]
    switch_lab = {"root": args["root"], "ports": args["ports"], "devices": lab.devices(extra=True), "plan": lab.lab_plan()}
    if args.get("mtu"):
        switch_lab["devices"][args["name"]]["intent"]["mtu"] = args["mtu"]
    run = applier(switch_lab, args["name"], sections=tuple(args["sections"]), lock_dir=args["lock_dir"],
                  **args.get("options", {}))
    planned = run.plan()
    if args.get("ready"):   # planned: say so, then apply only once the test's moment has come
        open(args["ready"], "w").close()
    while args.get("start_when") and not os.path.exists(args["start_when"]):
        time.sleep(0.05)
    delay = args.get("start_at", 0) - (time.time() - args.get("skew", 0))
    if delay > 0:
        time.sleep(delay)
    out = dict(host=socket.gethostname(), pid=os.getpid(), commands=len(planned[2]))
    try:
        run.apply(*planned)
        out.update(result="success")
    except ApplyError as exc:
        out.update(result="failed", rolled_back=exc.rolled_back, message=str(exc))
    finally:
        run.close()
    out.update(notes=run.notes, drained=run.drained, tag=run.tag, drain_state=run.drain_state)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
