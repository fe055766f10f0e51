# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Failure scenarios on a running twin, with a probe stream from a pinned host port: used by
tests/integration/twin/test_twin.py (behaviour) and tools/bench_twin.py (figures and targets).

    uplink_down(plan, prefix)       the leaf's bound uplink goes down (pbrd drops the pin)
    spine_loses_leaf(plan, prefix)  the bound spine stays up but loses every link to the
                                    destination leaf (its path, not the pin's next hop, fails)

Each returns the probe figures plus ``recovery_ms``: from the failure to the first probe answered
after the last loss (0 when no probe was lost), and puts the links back.
"""

import json
import os
import subprocess
import time

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.py")


def _ip(prefix, router, *args):
    subprocess.run(["ip", "-n", prefix + router] + list(args), check=True, capture_output=True, text=True)


def pinned_flow(plan):
    """(leaf name, binding, destination): the first host port of the first leaf, towards a host on
    the last leaf whose own pin is on another spine (the reply path does not share the failure)."""
    name, leaf = next(iter(plan["leafs"].items()))
    binding = leaf["bindings"][0]
    remote_name = list(plan["leafs"])[-1]
    remote = plan["leafs"][remote_name]
    back = next((b for b in remote["bindings"] if b["spine"] != binding["spine"]), remote["bindings"][-1])
    return name, binding, remote_name, back["source"].split("/")[0]


def _watch(prefix, plan, seconds, fail, restore, settle=1.0):
    _name, binding, _remote, dst = pinned_flow(plan)
    watch = subprocess.Popen(["ip", "netns", "exec", prefix + binding["server"], "python3", PROBE, "watch", "--src",
                              binding["source"].split("/")[0], "--dst", dst, "--seconds", str(seconds),
                              "--interval", "0.01"], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(settle)
        failed_at = time.time()
        fail()
        figures = json.loads(watch.communicate(timeout=seconds + 30)[0])
    finally:
        restore()
        if watch.poll() is None:
            watch.kill()
    lost_after = figures["last_lost_at"] is not None and figures["last_lost_at"] >= failed_at
    figures["recovery_ms"] = round((figures["recovered_at"] - failed_at) * 1000.0, 1) \
        if lost_after and figures["recovered_at"] else (None if lost_after else 0.0)
    figures["failed_at"] = failed_at
    return figures


def uplink_down(plan, prefix, seconds=4.0, during=None):
    name, binding, _remote, _dst = pinned_flow(plan)

    def fail():
        _ip(prefix, name, "link", "set", binding["uplink"], "down")
        if during:
            during()
    return _watch(prefix, plan, seconds, fail, lambda: _ip(prefix, name, "link", "set", binding["uplink"], "up"))


def lost_links(plan):
    """(spine, [its ports towards the destination leaf]) of the pinned flow."""
    _name, binding, remote, _dst = pinned_flow(plan)
    spine = plan["spines"][binding["spine"]]
    return binding["spine"], [d["port"] for d in spine["downlinks"] if d.get("leaf") == remote]


def spine_loses_leaf(plan, prefix, seconds=4.0, during=None):
    spine, ports = lost_links(plan)

    def fail():
        for port in ports:
            _ip(prefix, spine, "link", "set", port, "down")
        if during:
            during()

    def restore():
        for port in ports:
            _ip(prefix, spine, "link", "set", port, "up")
    return _watch(prefix, plan, seconds, fail, restore)
