"""The driver contract proven by a NOS nobody ships (issue 35): "toynos", a JSON-over-SSH switch, is registered from
this test alone (no product file names it) and runs the whole switch path: plan, check, diff, apply with its
read-back verify, undo with its proof, the maintenance drain, the RoCE health audit, switch_validate, the counters
read, and the registry walk naming what it lacks.

The toy device answers every ``show ...`` with JSON and takes one change per line (``apply {"op": ...}`` into a
candidate, ``commit`` copies it to the running config); its lock objects are ``mark``/``unmark``ed names listed by
``show markers`` with the device's clock. The driver, its transaction and its drain below are everything a new NOS
needs: the family hooks, the transaction verbs and the declared facts of nos/base.py Driver."""
import copy
import json
import time

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos import counters, registry, switch_check, validation
from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import Applier, ApplyError, Plan
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import Driver, drift, ports_of
from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import Command, Op
from ansible_collections.aifabric.roce.plugins.module_utils.nos.drain import DrainLine
from ansible_collections.aifabric.roce.plugins.module_utils.nos.facts import Read, Unsupported
from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import Transaction, check_safe

from .helpers import plan_on_platform
from .test_families import lacks

ALL = ("qos", "mtu", "underlay")
OWNED = {"qos": ("qos ",), "mtu": ("interface ",), "underlay": ("bgp asn", "bgp neighbor ")}


# --- the toy device --------------------------------------------------------------------------------------------------
class ToyDevice(object):
    """One toy switch: ``running`` and ``startup`` ({path: value}), a candidate while a change is staged, lock objects."""

    def __init__(self, running, drop=None, reject_commit=False):
        self.running, self.startup = dict(running), dict(running)
        self.candidate, self.markers = None, {}
        self.drop, self.reject_commit = drop, reject_commit   # a path the commit silently loses; a refused commit
        self.sent, self.bgp, self.counters = [], {}, {}

    def session(self):
        return ToySession(self)

    def answer(self, command):
        self.sent.append(command)
        verb, _sp, rest = command.partition(" ")
        if command == "show json":
            return json.dumps({"config": self.running}, sort_keys=True)
        if command == "show markers":
            return json.dumps({"clock": int(time.time()), "names": dict(self.markers)})
        if command == "show bgp":
            return json.dumps(self.bgp)
        if command == "show counters":
            return json.dumps(self.counters)
        if verb == "mark":
            if rest in self.markers:
                return '{"error": "%s exists"}' % rest
            self.markers[rest] = "marker"
        elif verb == "unmark":
            self.markers.pop(rest, None)
        elif verb == "begin":
            self.candidate = dict(self.running)
        elif verb == "apply":
            op = json.loads(rest)
            if self.candidate is None:
                return '{"error": "no candidate"}'
            if op["op"] == "set":
                self.candidate[op["path"]] = op["value"]
            else:
                self.candidate = dict((k, v) for k, v in self.candidate.items()
                                      if k != op["path"] and not k.startswith(op["path"] + " "))
        elif verb == "commit":
            if self.reject_commit:
                return '{"error": "commit refused"}'
            self.running = dict((k, v) for k, v in (self.candidate or self.running).items() if k != self.drop)
            self.candidate, self.drop = None, None   # the fault happens once
        elif verb == "discard":
            self.candidate = None
        elif verb == "save":
            self.startup = dict(self.running)
        else:
            return '{"error": "unknown command"}'
        return '{"ok": true}'


class ToySession(object):
    def __init__(self, device):
        self.device = device

    def send_command(self, command, **_kw):
        return self.device.answer(command)

    def disconnect(self):
        pass


# --- its driver, transaction and drain: what a new NOS brings ----------------------------------------------------------
def _pairs(managed):
    """Canonical lines ``<path> <value>`` -> {path: value}."""
    return dict(line.rsplit(" ", 1) for line in managed.splitlines() if line.strip())


def _text(config):
    return "".join("%s %s\n" % (k, config[k]) for k in sorted(config))


def parse_bgp(text):
    return dict((a, {"state": p["state"], "remote_as": p["remote_as"]}) for a, p in json.loads(text).items())


def parse_counters(text):
    return json.loads(text)


class ToyTxn(Transaction):
    mechanism = "candidate: begin, one apply per op, commit, read-back verify, save; the reverse ops on failure"

    def listing(self):
        data = json.loads(self.io.run("lock", "show markers"))
        return data["clock"], data["names"]

    def make(self, name):
        self.io.run("lock", "mark %s" % name)

    def drop(self, name):
        self.io.run("lock", "unmark %s" % name)

    def begin(self):
        self.io.run("begin", "begin")

    def stage(self, cmds):
        for cmd in cmds:
            self.io.run("stage", Command("apply %s" % cmd, cmd.op))   # what was typed, knowing its op

    def commit(self, verify, precheck=None):
        if precheck is not None:
            precheck("precheck")
        self.committed = True
        self.io.run("commit", "commit")
        verify("verify")
        self.confirmed = True

    def save(self):
        return self.io.run("save", "save")

    def abort(self, read_managed, before_managed):
        self.io.fresh("abort")
        if not self.committed:
            self.io.run("abort", "discard")
            return "nothing was applied (candidate discarded)"
        return self._reverse(read_managed, before_managed, self.push_reverse)

    def push_reverse(self, cmds):
        self.io.run("abort", "begin")
        self.stage(cmds)
        self.io.run("abort", "commit")

    def cleanup(self):
        self.io.run("cleanup", "discard")


class ToyDrain(DrainLine):
    """The toy's drain is a setting of its own: ``bgp graceful-shutdown on``, set and unset by one op."""

    def __init__(self):
        DrainLine.__init__(self, "bgp graceful-shutdown on")

    def paths(self, driver, outside):
        return [p for p in outside if p == self.line]

    def is_setting(self, driver, path):
        return path.startswith("bgp graceful-shutdown ")

    def commands(self, driver, managed, on):
        if "bgp asn" not in _pairs(managed):
            return None
        return driver.commands([Op("set", ("bgp graceful-shutdown",), "on") if on else Op("unset", ("bgp graceful-shutdown",))])


class ToyDriver(Driver):
    name = "toynos"
    device_type = "linux"
    show_running = "show json"
    error_pattern = r'"error"'
    sections = ALL
    transaction = ToyTxn
    drain = ToyDrain()
    counters = [Read("show counters", parse_counters)]
    counter_evidence = {"pfc_rx": "unverified", "pfc_tx": "unverified"}
    checks = ("bgp_sessions",)
    bgp_summary = Read("show bgp", parse_bgp)
    ppd_read = Unsupported("the toy shows no PBR state")

    def after_login(self, conn):
        """The toy's session fact (nos/connection.py, over SSH: test_toy_nos_ssh.py): its prompt is fixed, so each
        answer is read up to it instead of netmiko finding the prompt again before every command."""
        send = conn.send_command

        def send_command(command, **kw):
            kw.setdefault("expect_string", r"toy\$ $")
            return send(command, **kw)
        conn.send_command = send_command

    def mtu(self, intent):
        return int(intent["mtu"])   # no platform table entry: the plan's MTU as it is

    @staticmethod
    def _owned(path, sections):
        return any(path.startswith(prefix) for s in sections for prefix in OWNED.get(s, ()))

    def render(self, intent, qos, sections=ALL):
        config = {}
        if "qos" in sections:
            config.update({"qos roce-dscp": str(qos["roce_dscp"]), "qos roce-priority": str(qos["roce_priority"])})
        if "mtu" in sections:
            config.update(("interface %s mtu" % p, str(self.mtu(intent))) for p in ports_of(intent))
        if "underlay" in sections and intent.get("bgp"):
            config["bgp asn"] = str(intent["bgp"]["asn"])
            config.update(("bgp neighbor %s remote-as" % n["address"], str(n["remote_as"])) for n in intent["bgp"]["neighbors"])
        return _text(config)

    def parse(self, running, intent, sections=ALL):
        config = json.loads(running)["config"]
        return _text(dict((k, v) for k, v in config.items() if self._owned(k, sections)))

    def paths(self, managed):
        return [line for line in managed.splitlines() if line.strip()]

    def outside(self, running, intent, sections=ALL):
        config = json.loads(running)["config"]
        return sorted("%s %s" % (k, v) for k, v in config.items() if not self._owned(k, sections))

    def diff(self, current, intended):
        cur, want = _pairs(current), _pairs(intended)
        return ([Op("unset", (k,)) for k in sorted(cur) if k not in want]
                + [Op("set", (k,), v) for k, v in sorted(want.items()) if cur.get(k) != v])

    def commands(self, ops):
        return [Command(json.dumps(dict({"op": op.kind, "path": op.path[0]}, **({} if op.value is None else {"value": op.value})),
                                   sort_keys=True), op) for op in ops]

    def takeover_items(self, before_image, after, intent, sections=ALL):
        return []

    def safe_reverse(self, current, target):
        cmds = self.commands(self.diff(current, target))
        check_safe(cmds, self)
        return cmds

    def protected(self, command):
        return json.loads(command).get("path") == "hostname"

    def port_mtus(self, managed):
        return dict((path.split()[1], int(v)) for path, v in _pairs(managed).items() if path.startswith("interface "))


# --- the flow ----------------------------------------------------------------------------------------------------------
@pytest.fixture
def toy(monkeypatch):
    """The toy registered for this test only (nos/registry.py DRIVERS), and a lab plan whose leaf1 and spines run it."""
    monkeypatch.setitem(registry.DRIVERS, "toynos", ToyDriver)
    plan = copy.deepcopy(plan_on_platform("lab", "eos"))
    for record in list(plan["leafs"].values()) + list(plan["spines"].values()):
        record["platform"] = "toynos"
    return plan


def seeded(plan, name="leaf1", **kw):
    """A toy switch holding its own settings and an MTU of 1500 on the plan's ports."""
    running = {"hostname": name, "ntp server": "10.0.0.1"}
    running.update(("interface %s mtu" % p, "1500") for p in ports_of(plan["leafs"][name]))
    return ToyDevice(running, **kw)


def applier(device, plan, tmp_path, name="leaf1", **kw):
    return Applier(registry.get_driver("toynos"), device.session, plan["leafs"][name], plan["qos"], ALL,
                   lock_key="toy-%s" % name, lock_dir=str(tmp_path), lock_timeout=5, read_timeout=5,
                   reconnect_timeout=1, **kw)


def writes(device):
    return [c for c in device.sent if not c.startswith("show ")]


def test_the_plan_holds_typed_ops_and_its_commands_are_the_drivers_view(toy, tmp_path):
    """Issue 35: Plan.ops are Driver.diff's typed ops; what check mode shows and the apply sends is Driver.commands of
    them (the tuple view too), each command knowing its op."""
    device = seeded(toy)
    run = applier(device, toy, tmp_path)
    plan = run.plan()
    assert plan.ops and all(isinstance(op, Op) and not isinstance(op, str) for op in plan.ops)
    assert plan.ops == run.driver.diff(plan.before, plan.after)
    assert plan.commands == run.driver.commands(plan.ops) == list(plan)[2] == plan[2]
    assert [cmd.op for cmd in plan.commands] == plan.ops


def test_apply_refuses_a_plain_string_before_anything_is_sent(toy, tmp_path):
    """Issue 35: a plain string knows no op (this run's own line would read back as someone else's): refused at the
    entry, naming the command and the fix; nothing is sent, not even the lock marker."""
    device = seeded(toy)
    run = applier(device, toy, tmp_path)
    plan = run.plan()
    typed = plan.commands
    line = '{"op": "set", "path": "hostname", "value": "x"}'
    with pytest.raises(ApplyError) as err:
        run.apply(plan.before, plan.after, typed + [line])
    assert repr(line) in str(err.value) and "pass Command objects from Driver.commands(ops)" in str(err.value)
    assert err.value.step == "preflight" and err.value.attempted == [] and writes(device) == []
    assert device.markers == {} and device.running["hostname"] == "leaf1"
    run.apply(plan.before, plan.after, typed)   # the driver's own Commands go through
    assert applier(device, toy, tmp_path).plan().ops == []


def test_plan_check_diff_apply_verify_and_idempotent(toy, tmp_path):
    device = seeded(toy)
    run = applier(device, toy, tmp_path)
    plan = run.plan()
    assert isinstance(plan, Plan) and plan.ops and plan.digest.startswith("sha256:") and plan.drain is None
    assert plan.takeover == [] and writes(device) == []          # check mode: a plan sends nothing
    items = dict((d["item"], d) for d in drift(plan.before, plan.after, run.driver))
    port = ports_of(toy["leafs"]["leaf1"])[0]
    assert items["interface %s mtu" % port] == {"item": "interface %s mtu" % port, "expected": "interface %s mtu 9216" % port,
                                                "actual": "interface %s mtu 1500" % port}
    run.apply(plan.before, plan.after, plan.ops)
    assert device.running["interface %s mtu" % port] == "9216" and device.running["hostname"] == "leaf1"
    assert device.startup == device.running and device.markers == {} and device.candidate is None
    assert applier(device, toy, tmp_path).plan().ops == []


def test_a_change_the_switch_does_not_hold_is_undone_and_the_undo_proven(toy, tmp_path):
    port = ports_of(toy["leafs"]["leaf1"])[0]
    device = seeded(toy, drop="interface %s mtu" % port)   # the first commit loses one line: verify must catch it
    before = dict(device.running)
    run = applier(device, toy, tmp_path)
    plan = run.plan()
    with pytest.raises(ApplyError) as err:
        run.apply(plan.before, plan.after, plan.ops)
    assert err.value.rolled_back is True and err.value.step == "verify"
    assert device.running == before and device.markers == {}
    refused = seeded(toy, reject_commit=True)
    run = applier(refused, toy, tmp_path)
    plan = run.plan()
    with pytest.raises(ApplyError, match="commit refused"):
        run.apply(plan.before, plan.after, plan.ops)
    assert refused.running == refused.startup and refused.candidate is None


def test_the_drain_wraps_a_disturbing_change_and_only_the_drain_setting_moves(toy, tmp_path):
    device = seeded(toy)
    run = applier(device, toy, tmp_path, drain="always", drain_wait=0)
    plan = run.plan()
    assert run.driver.drain.blocked(run.driver, plan.before, []) == "no router bgp of this plan on the switch yet"
    run.apply(plan.before, plan.after, plan.ops)   # the first apply brings the BGP the drain needs: not drained
    assert "bgp graceful-shutdown" not in writes(device)[-1]
    low = dict(toy["leafs"]["leaf1"], mtu=9000)
    run = Applier(run.driver, device.session, low, toy["qos"], ALL, lock_key="toy-leaf1", lock_dir=str(tmp_path),
                  lock_timeout=5, read_timeout=5, reconnect_timeout=1, drain="always", drain_wait=0)
    plan = run.plan()
    run.apply(plan.before, plan.after, plan.ops)
    drain_ops = [json.loads(c[len("apply "):]) for c in writes(device) if "graceful-shutdown" in c]
    assert [op["op"] for op in drain_ops[-2:]] == ["set", "unset"], drain_ops
    assert "bgp graceful-shutdown" not in device.running and run.drained.startswith("drained")
    assert all(v == "9000" for k, v in device.running.items() if k.startswith("interface "))


def test_the_audit_finds_a_port_below_the_host_mtu_through_the_driver(toy):
    from ansible_collections.aifabric.roce.plugins.modules.roce_health import evaluate
    drv = registry.get_driver("toynos")
    leaf = toy["leafs"]["leaf1"]
    facts = {"leaf1": {"sections": {"qos": {"config": drv.render(leaf, toy["qos"], ("qos",))},
                                    "mtu": {"config": drv.render(dict(leaf, mtu=1500), toy["qos"], ("mtu",))}},
                       "counters": None}}
    section, _entries, _snap = evaluate(toy, facts, {}, None, 1000)
    found = [f for f in section["consistency"] if f["kind"] == "mtu_chain"]
    assert found and all(f["switch"] == "leaf1" and f["actual"] == "1500" and f["port"] in ports_of(leaf) for f in found)
    assert leaf["downlinks"][0]["port"] in [f["port"] for f in found]
    facts["leaf1"]["sections"]["mtu"]["config"] = drv.render(leaf, toy["qos"], ("mtu",))
    section, _entries, _snap = evaluate(toy, facts, {}, None, 1000)
    assert [f for f in section["consistency"] if f["kind"] == "mtu_chain"] == []


def test_validation_reads_the_declared_bgp_summary_and_names_what_the_toy_lacks(toy):
    device = seeded(toy)
    leaf = toy["leafs"]["leaf1"]
    device.bgp = dict((n["address"], {"state": "Established", "remote_as": n["remote_as"]}) for n in leaf["bgp"]["neighbors"])
    result = switch_check.check_switch(toy, "leaf1", {"host": "toy", "port": 22}, ["bgp_sessions", "ppd_paths"], False,
                                       validation.FAILOVER_TIMEOUT_MS, False, lambda params, driver: device.session)
    by = dict((f["probe"], f) for f in result["findings"])
    assert by["bgp_sessions"]["status"] == "ok" and "show bgp" in device.sent
    assert by["ppd_paths"]["status"] == "skipped" and "not implemented for toynos" in by["ppd_paths"]["actual"]
    device.bgp.popitem()
    result = switch_check.check_switch(toy, "leaf1", {"host": "toy", "port": 22}, ["bgp_sessions"], False,
                                       validation.FAILOVER_TIMEOUT_MS, False, lambda params, driver: device.session)
    assert [f["status"] for f in result["findings"] if f["probe"] == "bgp_sessions"] == ["fail"]
    assert lacks(ToyDriver) == {"ppd_read": "the toy shows no PBR state", "line_sources": "not declared"}


def test_the_counters_read_is_the_declared_one(toy):
    drv = registry.get_driver("toynos")
    port = ports_of(toy["leafs"]["leaf1"])[0]
    answers = {"show counters": json.dumps({port: {"3": {"pfc_rx": 7}}, "elsewhere": {"3": {"pfc_rx": 1}}})}
    assert counters.parse(drv, answers, [port]) == {port: {"3": {"pfc_rx": 7}}}
    assert counters.evidence(drv)["pfc_rx"] == "unverified" and counters.evidence(drv)["drops"] is None
