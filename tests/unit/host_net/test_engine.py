"""The module's run logic against a fake host: check mode, refusals, truthful changed, rollback."""
import copy

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.host_net import engine, persist
from ansible_collections.aifabric.roce.plugins.module_utils.host_net.model import HostNetError
from tests.unit.host_net.helpers import fixture, lab_intent


class FakeHost:
    """Serves captured `ip -j` states; each `ip -batch` moves to the next state the test queued."""

    def __init__(self, state, after=None, files=None):
        self.states = [self._load(state)] + [self._load(s) for s in (after or [])]
        self.batches = []
        self.files = dict(files or {})
        self.links = {}
        self.writes = []

    @staticmethod
    def _load(state):
        if isinstance(state, dict):
            return state
        return {kind: fixture(state, kind) for kind in ("addr", "route", "rule")}

    def ip_json(self, args):
        now = self.states[0]
        if args[:2] == ["route", "get"]:
            return [{"dst": args[2], "dev": "eth0", "gateway": "192.168.250.1"}]
        return copy.deepcopy(now[{"addr": "addr", "route": "route", "rule": "rule"}[args[0]]])

    def ip_batch(self, lines, force=False):
        self.batches.append((list(lines), force))
        if len(self.states) > 1:
            self.states.pop(0)
        return 0, ""

    def read(self, path):
        if path.startswith("/proc/sys/"):
            return self.files.get(path, "0\n")
        return self.files.get(path)

    def write(self, path, content, mode):
        self.writes.append(path)
        self.files[path] = content

    def remove(self, path):
        self.files.pop(path, None)

    def symlink(self, path, target):
        self.links[path] = target

    def readlink(self, path):
        return self.links.get(path)

    def glob(self, pattern):
        return [p for p in self.files if p.startswith(pattern.split("*")[0])]

    def exists(self, path):
        return path in self.files

    def ping(self, address):
        return True

    def reload_backend(self, backend, paths):
        pass


def test_check_mode_reports_and_writes_nothing():
    host = FakeHost("drifted")
    result = engine.run(host, lab_intent("gpu04"), check_mode=True, persistence="systemd", manage_sysctls=False)
    assert result["changed"]
    assert "mtu rail3 1500 -> 9000" in result["changes"]
    assert "file write " + persist.BATCH_FILE in result["changes"]
    assert host.batches == [] and host.writes == [] and host.links == {}


@pytest.mark.parametrize("mutate, message", [
    (lambda i: i["nics"][0].update(netdev="eth0"), "management interface eth0"),
    (lambda i: i["nics"][1].update(netdev="rail7"), "interface rail7 does not exist"),
    (lambda i: i["routes"].append({"table": "main", "dst": "default", "dev": "rail0", "via": "10.100.0.6"}),
     "main table's default route"),
    (lambda i: i["routes"].append({"table": "main", "dst": "192.168.250.0/25", "dev": "rail0", "via": "10.100.0.6"}),
     "covers management target 192.168.250.1"),
])
def test_unsafe_plans_are_refused_before_any_change(mutate, message):
    intent = lab_intent("gpu04")
    mutate(intent)
    host = FakeHost("fresh")
    with pytest.raises(HostNetError, match=message):
        engine.run(host, intent, persistence="systemd", mgmt_targets=["192.168.250.1"])
    assert host.batches == [] and host.writes == []


def converged_state():
    """The drifted capture with its drift repaired by hand (what a good apply leaves)."""
    state = {kind: fixture("drifted", kind) for kind in ("addr", "route", "rule")}
    for link in state["addr"]:
        if link["ifname"] == "rail3":
            link["mtu"] = 9000
        if link["ifname"] == "rail0":
            link["addr_info"] = [a for a in link["addr_info"] if a.get("local") != "10.100.0.5"]
    state["route"] = [r for r in state["route"] if r.get("dst") not in ("10.9.9.0/24", "10.77.0.0/16")]
    state["rule"].insert(4, {"priority": 1002, "src": "10.102.0.4", "table": "102"})
    return state


def test_apply_then_second_run_is_a_noop():
    intent = lab_intent("gpu04")
    host = FakeHost("drifted", after=[converged_state()])
    result = engine.run(host, intent, persistence="systemd", manage_sysctls=False)
    assert result["changed"] and not result["rolled_back"]
    assert host.batches[0][0] == [
        "link set dev rail3 mtu 9000",
        "address del 10.100.0.5/29 dev rail0",
        "route del 10.9.9.0/24 via 10.100.0.6 dev rail0 table 100",
        "route del blackhole 10.77.0.0/16 table 101 metric 5",
        "rule add priority 1002 from 10.102.0.4/32 table 102",
    ]
    assert persist.BATCH_FILE in host.files and host.links == {persist.UNIT_LINK: persist.UNIT_FILE}
    again = engine.run(host, intent, persistence="systemd", manage_sysctls=False)
    assert not again["changed"] and again["changes"] == []
    assert len(host.batches) == 1


def test_lost_default_route_is_rolled_back_and_fails():
    intent = lab_intent("gpu04")
    broken = converged_state()
    broken["route"] = [r for r in broken["route"] if not (r.get("dst") == "default" and "table" not in r)]
    host = FakeHost("drifted", after=[broken, fixture_state("drifted")])
    with pytest.raises(engine.ApplyError, match="default route changed") as err:
        engine.run(host, intent, persistence="systemd", manage_sysctls=False)
    result = err.value.result
    assert result["rolled_back"]
    restore_lines, force = host.batches[-1]
    assert force
    assert "link set dev rail3 mtu 1500" in restore_lines
    assert "rule del priority 1002 from 10.102.0.4/32 table 102" in restore_lines
    # Nothing persisted when the runtime change failed.
    assert persist.BATCH_FILE not in host.files


def fixture_state(name):
    return {kind: fixture(name, kind) for kind in ("addr", "route", "rule")}


# --- issue 12 item 6: management detected from the connection; any failure after the batch restores


def no_default_route_state():
    state = fixture_state("fresh")
    state["route"] = [r for r in state["route"] if r.get("dst") != "default"]
    return state


def test_management_nic_under_another_name_is_refused_from_ssh_connection():
    """The audit's case: the plan names the real management NIC as a rail NIC while saying the management
    NIC is another one, and the default route is elsewhere: only the SSH connection gives it away."""
    intent = lab_intent("gpu04")
    intent["mgmt_interface"] = "eno9"
    intent["nics"][0]["netdev"] = "eth0"
    host = FakeHost(no_default_route_state())
    ssh = "192.168.250.10 50514 192.168.250.14 22"
    with pytest.raises(HostNetError, match=r"eth0 as a rail NIC, but it is this host's management interface .*SSH_CONNECTION"):
        engine.run(host, intent, persistence="systemd", ssh_connection=ssh)
    assert host.batches == [] and host.writes == []
    # explicitly overridden: the protection is lifted (check mode: nothing written either way)
    result = engine.run(host, intent, check_mode=True, persistence="systemd", ssh_connection=ssh, allow_mgmt_change=True)
    assert result["management"]["protected"] is False and "eth0" in result["management"]["interfaces"]


def test_controller_from_ssh_connection_becomes_a_checked_target():
    host = FakeHost("drifted", after=[converged_state()])
    result = engine.run(host, lab_intent("gpu04"), check_mode=True, persistence="systemd", manage_sysctls=False,
                        ssh_connection="192.168.250.10 50514 192.168.250.14 22", mgmt_interface="eth0")
    assert result["management"]["controller"] == "192.168.250.10"
    assert result["management"]["interfaces"] == ["eth0"] and result["management"]["protected"]


class FailingHost(FakeHost):
    """FakeHost that fails one operation after the first ip batch."""

    def __init__(self, *a, fail=None, **kw):
        FakeHost.__init__(self, *a, **kw)
        self.fail = fail

    def write(self, path, content, mode):
        if self.batches and len(self.batches) == 1 and self.fail and self.fail(path):
            self.fail = None
            raise PermissionError(13, "Permission denied", path)
        FakeHost.write(self, path, content, mode)

    def ip_json(self, args):
        if self.fail == "ip" and self.batches and len(self.batches) == 1 and args[:1] == ["rule"]:
            self.fail = None
            raise HostNetError("ip -j rule show failed: RTNETLINK answers: Operation not permitted")
        return FakeHost.ip_json(self, args)


@pytest.mark.parametrize("fail, stage", [
    (lambda p: p.startswith("/proc/sys/"), "runtime change failed: PermissionError"),
    ("ip", "ip -j rule show failed"),
    (lambda p: p == persist.BATCH_FILE, "persistence failed: PermissionError"),
])
def test_any_failure_after_the_batch_restores_and_reports_cleanly(fail, stage):
    intent = lab_intent("gpu04")
    host = FailingHost("drifted", after=[converged_state(), fixture_state("drifted")], fail=fail)
    with pytest.raises(engine.ApplyError, match=stage) as err:
        engine.run(host, intent, persistence="systemd", manage_sysctls=fail != "ip")
    result = err.value.result
    assert result["rolled_back"] is True, (str(err.value), result.get("not_restored"), result.get("restore_errors"))
    assert "restored the previous state" in str(err.value)
    restore_lines, force = host.batches[-1]
    assert force and "link set dev rail3 mtu 1500" in restore_lines
    assert persist.BATCH_FILE not in host.files, "a persistence file survived the failed run"
