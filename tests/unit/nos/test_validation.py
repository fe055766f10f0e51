"""Switch-side validation judged on real FRR 8.4.4 and Linux kernel output (tests/fixtures/switches/frr, twin captures)."""
import copy
import json
import os
import re

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.nos import bgp_state, validation
from ansible_collections.aifabric.roce.plugins.modules import switch_validate
from ansible_collections.aifabric.roce.plugins.module_utils.nos import switch_check
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

from ..fabric import intents
from ..module_runner import run_module

HERE = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "switches", "frr")


def _load(name):
    with open(os.path.join(HERE, name)) as handle:
        return handle.read()


LEAF0 = json.loads(_load("intents.json"))["leaf0_swp"]


def _route_gets():
    """{command line after '$': kernel answer} from the capture."""
    out, command = {}, None
    for line in _load("leaf0-ip-route-get.txt").splitlines():
        if line.startswith("$ "):
            command = line[2:].strip()
            out[command] = ""
        else:
            out[command] += line + "\n"
    return out


ROUTES = _route_gets()
PINNED = ROUTES["ip route get 10.103.0.4 from 10.100.0.1 iif vlan100"]
LOCAL = ROUTES["ip route get 10.100.0.2 from 10.100.0.1 iif vlan100"]
FALLBACK = ROUTES["ip route get 10.103.0.4 from 10.100.0.1 iif vlan100   (swp9 down)"]
UNREACHABLE = next(v for k, v in ROUTES.items() if k.startswith("ip route get 10.103.0.4   (on spine1"))


def _bad(findings):
    return [f for f in findings if f["status"] != "ok"]


def test_bgp_all_planned_sessions_established():
    findings = bgp_state.findings(get_driver("frr"), LEAF0, _load("leaf0-bgp-summary.json"))
    assert _bad(findings) == []
    assert findings[-1] == validation.finding("bgp_sessions", "ok", "4 planned sessions Established", "4 of 4 Established")


def test_bgp_a_session_down_is_named_with_frr_state():
    findings = _bad(bgp_state.findings(get_driver("frr"), LEAF0, _load("leaf0-bgp-summary-swp9-down.json")))
    assert [f["probe"] for f in findings] == ["bgp 10.254.0.0", "bgp_sessions"]
    assert findings[0]["actual"] == "Active, AS 4200000000" and "spine1 swp9" in findings[0]["expected"]


def test_bgp_unplanned_session_and_wrong_remote_as_fail():
    intent = copy.deepcopy(LEAF0)
    dropped = intent["bgp"]["neighbors"].pop()
    intent["bgp"]["neighbors"][0]["remote_as"] = 65000
    bad = _bad(bgp_state.findings(get_driver("frr"), intent, _load("leaf0-bgp-summary.json")))
    probes = dict((f["probe"], f) for f in bad)
    assert probes["bgp %s" % dropped["address"]]["expected"] == "no session (not in the plan)"
    assert probes["bgp 10.254.0.0"]["actual"] == "Established, AS 4200000000"
    assert probes["bgp_sessions"]["status"] == "fail"


def test_bgp_unreadable_output_fails_with_the_text():
    bad = bgp_state.findings(get_driver("frr"), LEAF0, "% Unknown command: show bgp ipv4 unicast summary json")
    assert bad[0]["status"] == "fail" and "Unknown command" in bad[0]["actual"]


def test_path_queries_cover_every_binding_and_every_local_host():
    queries = validation.path_queries(LEAF0, "10.103.0.4")
    assert len([q for q in queries if q["kind"] == "pinned"]) == len(LEAF0["bindings"]) == 4
    local = [q["command"].split() for q in queries if q["kind"] == "local"]
    # a ring: one same-leaf query per host port, every host once as the source and once as the destination
    assert len(local) == 4
    assert sorted(words[3] for words in local) == sorted(words[5] for words in local) == [
        "10.100.0.%d" % n for n in range(1, 5)]
    assert all(words[3] != words[5] for words in local)
    assert queries[0]["command"] == "ip route get 10.103.0.4 from 10.100.0.1 iif vlan100"
    assert queries[1]["command"] == "ip route get 10.100.0.2 from 10.100.0.1 iif vlan100"
    assert queries[-1]["command"] == "ip route get 10.100.0.1 from 10.100.0.4 iif vlan100"
    assert validation.path_queries(LEAF0, None)[0]["kind"] == "local"


def leaf_with_ports(count):
    """The lab's first leaf with ``count`` host ports, each bound (one host address and binding per port)."""
    leaf = dict(next(iter(build_plan(intents.lab())["leafs"].values())))
    template = leaf["downlinks"][0]
    leaf["downlinks"] = [dict(template, host_address="10.100.%d.%d" % divmod(n + 1, 250)) for n in range(count)]
    leaf["bindings"] = [dict(leaf["bindings"][0], source="10.100.%d.%d/32" % divmod(n + 1, 250)) for n in range(count)]
    return leaf


def test_path_queries_grow_linearly_with_the_leaf_ports():
    """A 64-port leaf: 128 queries (one pinned and one local per port), not the 4,032 of every local pair."""
    leaf = leaf_with_ports(64)
    queries = validation.path_queries(leaf, "192.0.2.1")
    assert len(queries) == 128
    assert validation.next_local_host(["10.0.0.1"], "10.0.0.1") is None
    assert validation.next_local_host(["10.0.0.1", "10.0.0.2"], "10.0.0.9") == "10.0.0.1"


def test_kernel_answers_judged_pinned_local_fallback_and_unreachable():
    pinned, local = validation.path_queries(LEAF0, "10.103.0.4")[:2]
    assert validation.judge_path(pinned, PINNED)["status"] == "ok"
    assert validation.judge_path(local, LOCAL)["status"] == "ok"
    # the bound uplink down: the path leaves the pin (a pinned-path check fails, as it should)
    moved = validation.judge_path(pinned, FALLBACK)
    assert moved["status"] == "fail" and "via 10.254.0.2 dev swp10" in moved["actual"]
    # a same-leaf destination that went to a spine table is pinned: fail
    assert validation.judge_path(local, PINNED)["status"] == "fail"
    assert validation.judge_path(pinned, UNREACHABLE) == validation.finding(
        pinned["probe"], "fail", pinned["expected"], "RTNETLINK answers: Network is unreachable")
    assert validation.parse_route_get(PINNED) == {"via": "10.254.0.0", "dev": "swp9", "table": "10000"}


def test_scheme_b_queries_enter_on_the_routed_port():
    plan = build_plan(intents.small(scheme="p2p"))
    name, leaf = next(iter(plan["leafs"].items()))
    binding = leaf["bindings"][0]
    query = validation.path_queries(leaf, "192.0.2.1")[0]
    assert query["command"].endswith(" iif %s" % binding["ingress"])


def test_remote_destination_is_a_host_of_another_leaf_of_the_plane():
    plan = build_plan(intents.lab())
    remote = validation.remote_destination(plan, "leaf0")
    others = [d["host_address"] for n, lf in plan["leafs"].items() if n != "leaf0" for d in lf["downlinks"]]
    assert remote in others
    solo = copy.deepcopy(plan)
    for name in list(solo["leafs"]):
        if name != "leaf0":
            del solo["leafs"][name]
    assert validation.remote_destination(solo, "leaf0") is None


def test_failover_command_always_brings_the_link_back():
    cmd = validation.failover_command("swp9", "10.103.0.4", "10.100.0.1", "vlan100", 3000)
    assert cmd.startswith("nohup sh -c '") and "> /tmp/aif-failover-$$.out 2>&1 < /dev/null" in cmd
    down, up = cmd.index("ip link set swp9 down"), cmd.index("ip link set swp9 up")
    assert down < up and cmd.count("-gt 3000 ] && break") == 2   # both waits are bounded
    assert "'" not in cmd[len("nohup sh -c '"):cmd.index("' > /tmp")]   # one quoted script


def test_failover_output_judged():
    binding = LEAF0["bindings"][0]
    findings = validation.failover_findings(binding, _load("leaf0-failover-run.txt"))
    assert [f["status"] for f in findings] == ["ok", "ok"]
    assert findings[0]["actual"].endswith("dev swp10 after 9 ms")
    # the path never left the uplink: fail
    stuck = _load("leaf0-failover-run.txt").replace(
        "AIF-FALLBACK-PATH=10.103.0.4 from 10.100.0.1 via 10.254.0.2 dev swp10",
        "AIF-FALLBACK-PATH=" + PINNED.splitlines()[0])
    assert [f["status"] for f in validation.failover_findings(binding, stuck)] == ["fail", "ok"]
    cut = validation.failover_findings(binding, "AIF-FALLBACK-MS=9\n")
    assert cut[0]["status"] == "fail" and "check that swp9 is up" in cut[0]["message"]


def test_unwitnessed_platforms_are_skipped_as_unverified():
    findings = validation.unsupported(get_driver("dell_sonic"), validation.CHECKS)
    assert [f["status"] for f in findings] == ["skipped"] * 3
    assert all("unverified" in f["message"] and "not implemented for dell_sonic" in f["message"] for f in findings)
    # the report's item line says it too, not only the entry's message
    assert set(f["actual"] for f in findings) == {"unverified: not implemented for dell_sonic"}
    assert validation.unsupported(get_driver("frr"), validation.CHECKS) == []
    # EOS, NX-OS, NVUE, community SONiC: the PPD state and the BGP summary are read (nos/ppd_state.py,
    # nos/bgp_state.py); failover (a link taken down and timed on the switch) still has no witness there
    for platform in ("eos", "nxos", "nvue", "community_sonic"):
        assert [f["probe"] for f in validation.unsupported(get_driver(platform), validation.CHECKS)] == ["failover"]
    for platform in ("asternos", "dell_sonic"):
        assert [f["probe"] for f in validation.unsupported(get_driver(platform), validation.CHECKS)] == list(validation.CHECKS)


class FakeTerminal(object):
    """A shell on a pty: echoes the command line wrapped at 80 columns, then the answers."""

    def __init__(self, answers):
        self.answers = answers

    def send_command(self, line, **_kwargs):
        echo = "\n".join(line[i:i + 80] for i in range(0, len(line), 80))
        cmds = re.findall(r"echo '@@AIF-BEGIN'@@; (.*?) 2>&1; echo '@@AIF-END'@@", line)
        out = ["@@AIF-BEGIN@@\n%s@@AIF-END@@" % self.answers[cmd] for cmd in cmds]
        return echo + "\n" + "\n".join(out)


def test_run_batch_takes_answers_not_the_wrapped_echo():
    commands = ["ip route get 10.103.0.4 from 10.100.0.1 iif vlan100", "ip route get 10.100.0.2 from 10.100.0.1 iif vlan100"]
    got = switch_check.run_batch(FakeTerminal({commands[0]: PINNED, commands[1]: LOCAL}), commands * 5)
    assert got == [PINNED.strip(), LOCAL.strip()] * 5


class CountingTerminal(FakeTerminal):
    """FakeTerminal that keeps every line it was sent."""

    def __init__(self, answers):
        super(CountingTerminal, self).__init__(answers)
        self.lines = []

    def send_command(self, line, **kwargs):
        self.lines.append(line)
        return super(CountingTerminal, self).send_command(line, **kwargs)


def test_run_batch_fills_lines_up_to_the_terminal_budget_in_order():
    commands = ["ip route get 10.100.%d.%d from 10.100.0.1 iif vlan100" % divmod(n, 250) for n in range(128)]
    terminal = CountingTerminal(dict((cmd, "answer %d\n" % n) for n, cmd in enumerate(commands)))
    got = switch_check.run_batch(terminal, commands)
    assert got == ["answer %d" % n for n in range(128)]
    assert all(len(line) <= switch_check.LINE_BUDGET for line in terminal.lines)
    # 128 queries of a 64-port leaf in a handful of round trips (was 16 at 8 per line)
    assert len(terminal.lines) <= 10


@pytest.mark.parametrize("device, checks", [("leaf0", ["bgp_sessions", "ppd_paths"]), ("spine1", ["failover"])])
def test_module_reports_unwitnessed_platforms_without_connecting(tmp_path, capsys, device, checks):
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import write_plan
    plan = build_plan(intents.lab())
    write_plan(plan, str(tmp_path))
    result = run_module(switch_validate, {"plan": str(tmp_path), "device": device, "checks": checks, "failover": True,
                                          "host": "192.0.2.1", "username": "admin"}, capsys)
    assert result["rc"] == 0 and result["changed"] is False
    platform = plan["leafs"].get(device, plan["spines"].get(device))["platform"]
    assert platform != "frr"
    assert [f["status"] for f in result["findings"]] == ["skipped"] * len(checks)
    assert all("not implemented for %s" % platform in f["message"] for f in result["findings"])


def test_module_refuses_a_device_not_in_the_plan(tmp_path, capsys):
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import write_plan
    write_plan(build_plan(intents.lab()), str(tmp_path))
    result = run_module(switch_validate, {"plan": str(tmp_path), "device": "leaf99", "host": "192.0.2.1",
                                          "username": "admin"}, capsys)
    assert result["rc"] == 1 and "leaf99 is not a leaf or spine of the plan" in result["msg"]


# --- the whole fabric in one process (switch_check.check_all, module switches_validate) -------------------------------
class SummaryConn(object):
    def __init__(self, text):
        self.text, self.closed = text, False

    def send_command(self, cmd, **_kwargs):
        assert cmd == get_driver("frr").bgp_summary.command, cmd
        return self.text

    def disconnect(self):
        self.closed = True


def test_check_all_checks_every_switch_and_keeps_a_failed_one_apart():
    plan = {"leafs": {}, "spines": {"sw-up": LEAF0, "sw-down": LEAF0, "sw-dead": LEAF0}}   # spines: BGP only
    texts = {"up": _load("leaf0-bgp-summary.json"), "down": _load("leaf0-bgp-summary-swp9-down.json")}
    opened = []

    def factory(params, _driver):
        def connect():
            if params["host"] == "dead":
                raise OSError("timed out")
            opened.append(SummaryConn(texts[params["host"]]))
            return opened[-1]
        return connect

    sessions = [{"device": "sw-" + h, "host": h, "port": 22, "username": "admin"} for h in ("up", "down", "dead")]
    sessions.append({"device": "leaf99", "host": "up", "port": 22, "username": "admin"})
    got = switch_check.check_all(plan, sessions, ["bgp_sessions", "ppd_paths"], False, factory, workers=2)
    assert got["sw-up"]["findings"][-1]["status"] == "ok" and not got["sw-up"].get("failed")
    assert [f["probe"] for f in _bad(got["sw-down"]["findings"])] == ["bgp 10.254.0.0", "bgp_sessions"]
    assert got["sw-dead"]["failed"] and got["sw-dead"]["msg"] == "cannot connect to dead:22: timed out"
    assert got["sw-dead"]["failed_step"] == "connect"
    assert got["leaf99"]["failed"] and "leaf99 is not a leaf or spine of the plan" in got["leaf99"]["msg"]
    assert len(opened) == 2 and all(c.closed for c in opened)
    with pytest.raises(ValueError, match="unique device name"):
        switch_check.check_all(plan, sessions[:1] * 2, ["bgp_sessions"], False, factory)


def test_a_session_towards_a_switch_without_bgp_says_why_and_still_fails():
    """The lab's spines peer with the AsterNOS leaf, where the collection configures no BGP (no underlay section in its
    driver): those sessions stay failed, and their rows say why in one line; a session down for another reason and
    the sessions that are up are left as they were."""
    plan = {"leafs": {"leaf0": LEAF0}, "spines": {"spine1": dict(LEAF0, platform="asternos"), "spine2": LEAF0}}
    # 10.254.0.0 (spine1) down
    findings = bgp_state.findings(get_driver("frr"), LEAF0, _load("leaf0-bgp-summary-swp9-down.json"))
    got = dict((f["probe"], f) for f in validation.explain_peers_without_bgp(plan, LEAF0, findings, {"asternos"}))
    assert got["bgp 10.254.0.0"]["status"] == "fail"
    assert got["bgp 10.254.0.0"]["expected"].endswith(
        "(spine1 swp9); spine1 runs asternos, where this collection configures no BGP (only by hand)")
    assert got["bgp 10.254.0.4"] == next(f for f in findings if f["probe"] == "bgp 10.254.0.4")   # up: untouched
    assert got["bgp_sessions"]["status"] == "fail" and got["bgp_sessions"]["expected"] == (
        "4 planned sessions Established (1 towards spine1: no BGP configured there by this collection)")
    # the same peer on a platform the collection configures BGP on: nothing added
    assert validation.explain_peers_without_bgp(plan, LEAF0, findings, {"dell_sonic"}) == findings
    # check_switch derives the platforms from the drivers: asternos has no underlay section
    sessions = [{"device": "spine2", "host": "down", "port": 22, "username": "admin"}]
    checked = switch_check.check_all(plan, sessions, ["bgp_sessions"], False,
                                     lambda params, _d: lambda: SummaryConn(_load("leaf0-bgp-summary-swp9-down.json")))
    assert "spine1 runs asternos" in dict((f["probe"], f) for f in checked["spine2"]["findings"])["bgp 10.254.0.0"]["expected"]


def test_switches_validate_refuses_bad_sessions_by_name(tmp_path, capsys):
    from ansible_collections.aifabric.roce.plugins.module_utils.fabric.planstore import write_plan
    from ansible_collections.aifabric.roce.plugins.modules import switches_validate
    write_plan(build_plan(intents.lab()), str(tmp_path))
    for args, said in (
            ({"devices": [{"device": "leaf1", "host": "192.0.2.1"}]}, "devices[0] (leaf1): missing required arguments: username"),
            ({"devices": [{"device": "leaf1", "host": "192.0.2.1", "username": "a"}], "credentials": {"leaf9": {"password": "x"}}},
             "credentials: devices not listed in devices: leaf9"),
            ({"devices": [{"device": "leaf1", "host": "192.0.2.1", "username": "a"}], "credentials": {"leaf1": {"user": "x"}}},
             "credentials.leaf1: only password and secret are taken, not user")):
        result = run_module(switches_validate, dict(args, plan=str(tmp_path)), capsys)
        assert result["rc"] == 1 and result["msg"] == said, result


# --- the PPD path queries asked in one iproute2 batch (a real iproute2 6.1 answer: frr/SOURCE.md) ------------------
BATCH_QUERIES = [{"probe": "pinned 10.1.0.7 -> 10.9.0.5", "kind": "pinned", "dst": "10.9.0.5", "src": "10.1.0.7",
                  "iif": "d0", "next_hop": "10.2.0.1", "uplink": "d1", "expected": "via 10.2.0.1 dev d1 (spine1)"},
                 {"probe": "local 10.1.0.7 -> 10.1.0.8", "kind": "local", "dst": "10.1.0.8", "src": "10.1.0.7", "iif": "d0",
                  "expected": "on this leaf, not pinned (no via, main table)"},
                 {"probe": "pinned 10.1.0.9 -> 10.9.0.5", "kind": "pinned", "dst": "10.9.0.5", "src": "10.1.0.9",
                  "iif": "d0", "next_hop": "10.2.0.1", "uplink": "d1", "expected": "via 10.2.0.1 dev d1 (spine1)"},
                 {"probe": "local 10.1.0.9 -> 10.1.0.7", "kind": "local", "dst": "10.1.0.7", "src": "10.1.0.9", "iif": "d0",
                  "expected": "on this leaf, not pinned (no via, main table)"}]


def batch_capture():
    with open(os.path.join(HERE, "iproute2-6.1-route-get-batch-json.txt")) as handle:
        return handle.read()


def test_route_batch_asks_every_query_in_one_ip_process():
    cmd = validation.route_batch(BATCH_QUERIES[:2])
    assert cmd == ("printf '%s\\n' 'route get 10.9.0.5 from 10.1.0.7 iif d0' 'route get 10.1.0.8 from 10.1.0.7 iif d0' "
                   "| ip -j -force -batch -")
    assert cmd.count("ip ") == 1


def test_batch_answers_matched_to_their_queries_and_judged():
    text = batch_capture()
    answers = validation.parse_route_batch(text, BATCH_QUERIES)
    assert answers[0] == ({"via": "10.2.0.1", "dev": "d1", "table": "100"}, "10.9.0.5 from 10.1.0.7 via 10.2.0.1 dev d1 table 100")
    assert answers[1][0] == {"via": None, "dev": "d0", "table": None}
    assert answers[2] == ({"error": "RTNETLINK answers: Network is unreachable"}, "RTNETLINK answers: Network is unreachable")
    judged = [validation.judge_route_answer(q, got, actual) for q, (got, actual) in zip(BATCH_QUERIES, answers)]
    assert [f["status"] for f in judged] == ["ok", "ok", "fail", "ok"], judged
    # the report's text form reads back as `ip route get` text does (the PPD metrics parse it)
    assert validation.parse_route_get(answers[0][1]) == answers[0][0]
    # stderr may come before stdout: the refusal is still placed by its batch line, the answers by (dst, from)
    lines = text.splitlines()
    shuffled = "\n".join([ln for ln in lines if not ln.startswith("[")] + [ln for ln in lines if ln.startswith("[")])
    assert validation.parse_route_batch(shuffled, BATCH_QUERIES) == answers
    # a query the batch never answered (the session cut) is not passed
    got, actual = validation.parse_route_batch(lines[0], BATCH_QUERIES)[1]
    assert got == {"error": "no answer"} and validation.judge_route_answer(BATCH_QUERIES[1], got, actual)["status"] == "fail"


def test_route_batches_fit_the_terminal_line():
    leaf = leaf_with_ports(64)
    queries = validation.path_queries(leaf, "192.0.2.1")
    sent = []

    class Conn(object):
        def send_command(self, line, **_kw):
            sent.append(line)
            return ""

    answers = switch_check.run_route_batches(Conn(), queries)
    assert len(answers) == 128 and all(got == {"error": "no answer"} for got, dummy in answers)
    assert 3 <= len(sent) <= 8 and all(len(line) <= switch_check.LINE_BUDGET for line in sent), [len(x) for x in sent]
    assert sum(line.count("route get") for line in sent) == 128 and all(line.count("ip -j") == 1 for line in sent)
