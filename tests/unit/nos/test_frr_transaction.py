"""The frr driver on the shared apply flow (apply.Applier + transactions.FrrVtyshTxn): controller lock,
compare-and-swap read, dry run, apply, whole-config verify, computed reverse proven by read-back.

The router is a fake whose vtysh follows what FRR 8.4.4's vtysh was seen doing
(tests/fixtures/switches/frr/vtysh-f-refusals.txt): ``-C -f`` refuses a parse error with "line N: %
Unknown command" and exit 2 and applies nothing; ``-f`` applies line by line, prints "line N: Failure
to communicate ... to bgpd" for a line a daemon refuses, skips that line's context, goes on and
exits 0. The same flows run on the real engine in tests/integration/twin/test_twin.py.
"""
import base64
import json
import os
import re
import sys
import threading
import time

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import Applier, ApplyError
from ansible_collections.aifabric.roce.plugins.module_utils.nos.frr import BLOCK_ORDER, FrrDriver

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lab", "switches"))
import markers  # noqa: E402  (the lab's model of the marker listing)

HERE = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "switches", "frr")
with open(os.path.join(HERE, "intents.json")) as _fh:
    INTENTS = json.load(_fh)
SECTIONS = ("underlay", "pbr")
PREAMBLE = ("Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nfrr defaults traditional\n"
            "hostname leaf0\nservice integrated-vtysh-config\n!\n")
MGMT = ("interface eth0", ["ip address 192.0.2.10/24"])   # not ours: must survive every change and undo


class FakeFrr(object):
    """One router: config blocks, staged files, and a log of (session, command, start, end)."""

    def __init__(self, order_from, refuse_parse=None, refuse_apply=None, drop=None, apply_seconds=0.0):
        self.blocks = {("interface", "eth0"): list(MGMT[1])}
        self.order = [ln.strip() for ln in order_from.splitlines()]
        self.refuse_parse, self.refuse_apply, self.drop = refuse_parse, refuse_apply, drop
        self.apply_seconds = apply_seconds
        self.files, self.log, self.mutex = {}, [], threading.Lock()

    def session(self):
        return FakeSession(self)

    # --- what the router prints ------------------------------------------------------
    def running(self):
        out = [PREAMBLE]
        for (kind, name), lines in self.blocks.items():
            if not lines and kind == "interface":
                continue   # FRR prints an interface only while it has config
            rank = [self.order.index(ln.strip()) if ln.strip() in self.order else len(self.order) for ln in lines]
            out.append("%s %s\n" % (kind, name) + "".join(" %s\n" % ln for _r, ln in sorted(zip(rank, lines), key=lambda p: p[0]))
                       + "exit\n!\n")
        return "".join(out) + "end\n"

    # --- vtysh -----------------------------------------------------------------------
    @staticmethod
    def key(text):
        kind = next((k for k in BLOCK_ORDER if text.startswith(k + " ")), None)
        return (kind, text[len(kind) + 1:]) if kind else None

    def dry_run(self, text):
        for n, line in enumerate(text.splitlines(), 1):
            if self.refuse_parse and re.search(self.refuse_parse, line):
                return 2, "line %d: %% Unknown command[25]: %s\n" % (n, line)
        return 0, ""

    def apply(self, text):
        errors, ctx, af = [], None, None
        time.sleep(self.apply_seconds)
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if ctx == "refused":
                if line == "exit":
                    ctx = None
                else:
                    errors.append("line %d: %% Unknown command[4]:  %s" % (n, line))
                continue
            if self.refuse_apply and re.search(self.refuse_apply, line):
                errors.append("line %d: Failure to communicate[13] to bgpd, line: %s\n" % (n, line))
                ctx = "refused" if ctx is None and self.key(line) else ctx
                continue
            if self.drop and re.search(self.drop, line):
                continue   # accepted silently, never shown (what verification must catch)
            if ctx is None:
                if line.startswith("no ") and self.key(line[3:]):
                    self.blocks.pop(self.key(line[3:]), None)
                elif self.key(line):
                    ctx = self.key(line)
                    self.blocks.setdefault(ctx, [])
                continue
            lines = self.blocks[ctx]
            if line == "exit":
                ctx = None
            elif line.startswith("address-family "):
                af = line
                if line not in lines:
                    lines += [line, "exit-address-family"]
            elif line == "exit-address-family":
                af = None
            else:
                # `no X` removes X; on a knob that is on by default (`no bgp ebgp-requires-policy`) FRR
                # prints the `no` form, and the positive form takes it away again
                pad = " " if af else ""
                negated = line[3:] if line.startswith("no ") else "no " + line
                if pad + negated in lines:
                    lines.remove(pad + negated)
                elif pad + line not in lines:
                    lines.insert(lines.index("exit-address-family") if af else len(lines), pad + line)
        return 0, "".join(e if e.endswith("\n") else e + "\n" for e in errors)


class FakeSession(object):
    """A shell session on the router, answering as netmiko's send_command returns text."""

    def __init__(self, router):
        self.router = router

    def send_command(self, command, **_kw):
        r = self.router
        self.name = threading.current_thread().name   # the run (thread) sending it
        start = time.monotonic()
        if command == FrrDriver.show_running:
            with r.mutex:
                out = r.running()
            r.log.append((self.name, command, start, time.monotonic()))
            return out
        cmd = command[:-len(" 2>&1; echo AIF-RC=$?")]
        rc, out, now = 0, "", ""
        if cmd.startswith("echo AIF-NOW=$(date +%s); "):   # the device's clock, in the listing's round trip
            cmd, now = cmd[len("echo AIF-NOW=$(date +%s); "):], "AIF-NOW=%d\n" % int(time.time())
        m = re.match(r"^printf '%s' '(\S+)' >> (\S+)$", cmd)
        lock = re.match(r"^\( set -C; printf '%s\\n' '([^']*)' > (\S+) \)$", cmd)
        if lock:   # the device lock's marker file: bash's noclobber refuses an existing one
            if lock.group(2) in r.files:
                rc, out = 1, "bash: %s: cannot overwrite existing file\n" % lock.group(2)
            else:
                r.files[lock.group(2)] = lock.group(1) + "\n"
        elif markers.LISTING_RE.match(cmd):
            out = markers.listing(cmd, r.files, "", "")
        elif m:
            r.files[m.group(2)] = r.files.get(m.group(2), "") + m.group(1)
        elif cmd.startswith("rm -f "):
            for path in cmd.split()[2:]:
                r.files.pop(path, None)
        elif cmd.startswith("base64 -d "):
            src, dst = re.match(r"^base64 -d (\S+) > (\S+) &&", cmd).groups()
            r.files[dst] = base64.b64decode(r.files.pop(src)).decode()
        elif cmd.startswith("vtysh -C -f "):
            rc, out = r.dry_run(r.files[cmd.split()[-1]])
        elif cmd.startswith("vtysh -f "):
            text = r.files[cmd.split()[-1]]
            with r.mutex:
                rc, out = r.apply(text)
        elif cmd == FrrDriver.save_command:
            out = "Building Configuration...\nIntegrated configuration saved to /etc/frr/frr.conf\n[OK]\n"
        elif cmd.startswith("test -e "):
            rc = 0 if any(p in r.files for p in (cmd.split()[2], cmd.split()[-1])) else 1
        else:
            raise AssertionError("unexpected command %r" % cmd)
        r.log.append((self.name, cmd, start, time.monotonic()))
        return "%s%sAIF-RC=%d\n" % (now, out, rc)

    def disconnect(self):
        pass


def applier(router, tmp_path, intent="leaf0", sections=SECTIONS, **kw):
    return Applier(FrrDriver(), router.session, dict(INTENTS[intent]), INTENTS["qos"], sections, lock_key="127.0.0.1_23000",
                   lock_dir=str(tmp_path), lock_timeout=10, **kw)


def router_for(intent="leaf0", **kw):
    return FakeFrr(FrrDriver().render(INTENTS[intent], INTENTS["qos"]), **kw)


def test_a_change_is_applied_verified_saved_and_then_idempotent(tmp_path):
    router = router_for()
    tx = applier(router, tmp_path)
    before, after, cmds = tx.plan()
    assert before == "" and cmds
    tx.apply(before, after, cmds)
    assert tx.plan()[2] == [] and tx.plan()[0] == after
    sent = [c for _n, c, _s, _e in router.log]
    assert [c.split()[:2] for c in sent if c.startswith("vtysh -") and c != FrrDriver.show_running] == [
        ["vtysh", "-C"], ["vtysh", "-f"], ["vtysh", "-c"]]
    assert tx.attempted == cmds                     # the config lines, not the staging or the reads
    assert router.files == {} and MGMT[1] == router.blocks[("interface", "eth0")]


def test_a_refused_dry_run_touches_nothing(tmp_path):
    router = router_for(refuse_parse=r"^timers bgp")
    tx = applier(router, tmp_path)
    before, after, cmds = tx.plan()
    untouched = router.running()
    with pytest.raises(ApplyError) as err:
        tx.apply(before, after, cmds)
    assert "dry run" in str(err.value) and err.value.step == "stage"
    assert not any(c.startswith("vtysh -f") for _n, c, _s, _e in router.log)
    assert tx.attempted == [] and err.value.rolled_back is True
    assert router.running() == untouched and router.files == {}


def test_a_line_refused_mid_apply_is_undone_and_the_undo_proven(tmp_path):
    """vtysh -f exits 0 after a daemon refused a line and applied the rest around it: the answer's
    "line N:" is the failure; the reverse of what was applied takes the router back."""
    router = router_for(refuse_apply=r"^neighbor 10\.254\.0\.2 ")
    tx = applier(router, tmp_path)
    before, after, cmds = tx.plan()
    untouched = router.running()
    with pytest.raises(ApplyError) as err:
        tx.apply(before, after, cmds)
    assert err.value.step == "stage" and "Failure to communicate" in err.value.device_error
    assert err.value.rolled_back is True and "restored" in str(err.value) and err.value.differs is None
    assert "pushed the reverse" in str(err.value)
    assert router.running() == untouched                      # every block taken back, eth0 untouched
    assert not any(c == FrrDriver.save_command for _n, c, _s, _e in router.log)


def test_a_change_the_router_does_not_show_fails_verification_and_is_undone(tmp_path):
    router = router_for(drop=r"^maximum-paths ")
    tx = applier(router, tmp_path)
    before, after, cmds = tx.plan()
    with pytest.raises(ApplyError) as err:
        tx.apply(before, after, cmds)
    assert err.value.step == "verify" and "maximum-paths" in str(err.value)
    assert err.value.rolled_back is True and tx.plan()[0] == before


def test_a_router_changed_since_the_read_is_refused_before_anything_is_sent(tmp_path):
    router = router_for()
    tx = applier(router, tmp_path)
    before, after, cmds = tx.plan()
    router.blocks[("interface", "eth0")].append("description changed by hand")   # outside the managed view
    with pytest.raises(ApplyError) as err:
        tx.apply(before, after, cmds)
    assert err.value.step == "preflight" and err.value.rolled_back is None and "changed since" in str(err.value)
    assert tx.attempted == [] and not any(c.startswith("vtysh -") and c != FrrDriver.show_running for _n, c, _s, _e in router.log)


def test_two_concurrent_runs_on_one_router_serialize(tmp_path):
    """Run A (underlay) holds the controller lock while its vtysh -f runs; run B (PBR), started then,
    waits: its compare-and-swap read comes after A finished, sees A's change and refuses, sending
    nothing. Replanned, B applies on top of A. Without the lock B would read mid-apply and go on."""
    router = router_for(apply_seconds=0.5)
    run_a = applier(router, tmp_path, sections=("underlay",))
    run_b = applier(router, tmp_path, sections=("pbr",))
    plan_a, plan_b = run_a.plan(), run_b.plan()
    errors = {}

    def go(name, run, planned):
        try:
            run.apply(*planned)
        except ApplyError as exc:
            errors[name] = exc

    thread_a = threading.Thread(target=go, args=("a", run_a, plan_a), name="a")
    thread_a.start()
    deadline = time.monotonic() + 5
    while not any(c.startswith("vtysh -C") for _n, c, _s, _e in router.log) and time.monotonic() < deadline:
        time.sleep(0.01)
    thread_b = threading.Thread(target=go, args=("b", run_b, plan_b), name="b")
    thread_b.start()
    thread_a.join(10)
    thread_b.join(10)
    assert "a" not in errors, errors.get("a")
    assert errors["b"].step == "preflight" and "changed since this run read it" in str(errors["b"])
    assert not any(n == "b" and c.startswith("vtysh -") and c != FrrDriver.show_running for n, c, _s, _e in router.log)
    a_done = max(e for n, c, _s, e in router.log if n == "a" and c == FrrDriver.save_command)
    b_reads = [s for n, c, s, _e in router.log if n == "b" and c == FrrDriver.show_running]
    assert b_reads[-1] >= a_done, "B read the router while A held it"
    run_b.close()
    run_b.apply(*run_b.plan())
    assert applier(router, tmp_path).plan()[2] == []       # both changes, nothing interleaved or lost


def test_an_engineers_edit_after_the_dry_run_is_named_and_vtysh_f_never_runs(tmp_path):
    """The last read before `vtysh -f` (lock.StagingGuard): an engineer sets a key this run is about to set (same
    block, same setting, their value) while the change is uploaded and dry-run; the run stops before applying,
    names their line, and their value stays."""
    router = router_for()
    tx = applier(router, tmp_path)
    before, after, cmds = tx.plan()
    head = next(i for i, c in enumerate(cmds) if c.startswith("interface ") and cmds[i + 1].startswith("ip address "))
    ours = cmds[head + 1].strip()
    theirs = "ip address 192.0.2.99/31"   # the engineer's address on the port this run is about to address
    dry_run = router.dry_run

    def engineer_meanwhile(text):
        router.blocks.setdefault(router.key(cmds[head]), []).append(theirs)
        return dry_run(text)
    router.dry_run = engineer_meanwhile
    with pytest.raises(ApplyError) as err:
        tx.apply(before, after, cmds)
    assert err.value.step == "stage" and theirs in str(err.value) and err.value.rolled_back is not True, str(err.value)
    assert not any(c.startswith("vtysh -f") for _n, c, _s, _e in router.log)
    assert theirs in router.blocks[router.key(cmds[head])] and ours not in router.blocks[router.key(cmds[head])]
