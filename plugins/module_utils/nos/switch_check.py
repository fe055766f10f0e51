# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One switch's forwarding checks against the plan, over its management session (module switch_validate for one
switch, module switches_validate for the whole fabric in one process). What each check judges is in
nos/validation.py (and nos/ppd_state.py for the vendor NOSes' PBR state); this module runs the commands."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.aifabric.roce.plugins.module_utils.nos import bgp_state, ppd_state, validation
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

OUTPUT = re.compile(r"@@AIF-BEGIN@@[^\n]*\n(.*?)@@AIF-END@@", re.S)
LINE_BUDGET = 2000   # characters per command line: well under the 4095 a terminal in canonical mode takes
DEFAULT_WORKERS = 16


class CheckError(Exception):
    """A check that could not run (unknown device, no session, a dead session): the message and the findings so far."""

    def __init__(self, msg, result):
        super(CheckError, self).__init__(msg)
        self.result = result


def chunks(commands, budget=LINE_BUDGET):
    """``commands`` wrapped in their markers, grouped into lines of at most ``budget`` characters
    (a single longer command still goes, alone)."""
    line, count = [], 0
    for cmd in commands:
        wrapped = "echo '@@AIF-BEGIN'@@; %s 2>&1; echo '@@AIF-END'@@" % cmd
        if line and count + len(wrapped) + 2 > budget:
            yield line
            line, count = [], 0
        line.append(wrapped)
        count += len(wrapped) + 2
    if line:
        yield line


def run_batch(conn, commands):
    """Outputs of ``commands``, as many per round trip as fit a line, each between two markers whose echoed
    form differs from their output (the quotes), so the terminal's echo of a long line is never taken
    for an answer."""
    outputs = []
    for chunk in chunks(commands):
        found = OUTPUT.findall(conn.send_command("; ".join(chunk), read_timeout=60, cmd_verify=False))
        outputs += [text.strip() for text in found] + [""] * (len(chunk) - len(found))
    return outputs


def run_route_batches(conn, queries, budget=LINE_BUDGET):
    """Answers to the ``ip route get`` ``queries`` of a Linux router, asked in iproute2 batches (one ``ip`` process
    per command line of at most ``budget`` characters, instead of one per query) -> [(got, actual)] in order."""
    groups, group = [], []
    for query in queries:
        if group and len(validation.route_batch(group + [query])) + 60 > budget:
            groups.append(group)
            group = []
        group.append(query)
    if group:
        groups.append(group)
    answers = []
    for group, output in zip(groups, run_batch(conn, [validation.route_batch(g) for g in groups])):
        answers += validation.parse_route_batch(output, group)
    return answers


def check_switch(plan, name, params, checks, failover, failover_timeout_ms, check_mode, connect_factory, missing_lib=None):
    """Run ``checks`` on switch ``name`` of ``plan`` -> the result (changed, platform, findings, failover_ms); raise
    CheckError when they cannot run. ``params``: the connection arguments (host, port, username, password, ...).
    ``connect_factory`` None: netmiko is missing (``missing_lib`` says so), which matters only when a check is left."""
    record = plan["leafs"].get(name) or plan["spines"].get(name)
    if record is None:
        raise CheckError("device %s is not a leaf or spine of the plan; check device (inventory_hostname) "
                         "against the plan's leafs and spines" % name, {})
    is_leaf = name in plan["leafs"]
    platform = record["platform"]
    checks = [c for c in checks if c != "failover" or failover]
    result = dict(changed=False, platform=platform, findings=[])
    driver = get_driver(platform)
    skipped = validation.unsupported(driver, checks)
    result["findings"] += skipped
    checks = [c for c in checks if c not in [f["probe"] for f in skipped]]
    if not is_leaf:
        if checks and "bgp_sessions" not in checks:
            result["findings"].append(dict(validation.finding(", ".join(checks), "skipped",
                                                              message="not applicable on a spine (no host ports)"),
                                           required=False))
        checks = [c for c in checks if c == "bgp_sessions"]
    if "failover" in checks and check_mode:
        result["findings"].append(validation.finding("failover", "skipped", message="not run in check mode (it sets a link down)"))
        checks.remove("failover")
    if not checks:
        return result
    if connect_factory is None:
        raise CheckError(missing_lib or "netmiko is required", result)
    params = dict(params, device_type=params.get("device_type") or record.get("device_type"))
    try:
        conn = connect_factory(params, driver)()
    except Exception as exc:  # noqa: BLE001 - netmiko raises timeouts, auth and SSH errors alike
        raise CheckError("cannot connect to %s:%s: %s" % (params["host"], params["port"], exc), dict(result, failed_step="connect"))
    try:
        if "bgp_sessions" in checks:
            text = conn.send_command(driver.bgp_summary.command, read_timeout=60)
            without_bgp = set(p for p in set(r["platform"] for r in list(plan["leafs"].values()) + list(plan["spines"].values()))
                              if "underlay" not in get_driver(p).sections)
            result["findings"] += validation.explain_peers_without_bgp(plan, record, bgp_state.findings(driver, record, text),
                                                                       without_bgp)
        remote = validation.remote_destination(plan, name) if is_leaf else None
        if "ppd_paths" in checks and not driver.ppd_read.route_lookup:
            # a vendor NOS: the PBR state it shows (policy per host source, its next hop), not a route lookup
            pins = driver.ppd_pins(record)
            outputs = [conn.send_command(cmd, read_timeout=60) for cmd in driver.ppd_read.commands(pins)]
            result["findings"] += ppd_state.judge(driver, record, pins, outputs)
        elif "ppd_paths" in checks:
            if remote is None:
                result["findings"].append(dict(validation.finding(
                    "ppd_paths", "skipped", message="no host on another leaf of this plane to route towards"), required=False))
            queries = validation.path_queries(record, remote)
            for query, (got, actual) in zip(queries, run_route_batches(conn, queries)):
                result["findings"].append(validation.judge_route_answer(query, got, actual))
        if "failover" in checks and record.get("bindings") and remote:
            binding = record["bindings"][0]
            src = binding["source"].split("/")[0]
            cmd = validation.failover_command(binding["uplink"], remote, src, validation.ingress_of(record, binding),
                                              failover_timeout_ms)
            output = conn.send_command(cmd, read_timeout=2 * failover_timeout_ms / 1000.0 + 30, cmd_verify=False)
            result["findings"] += validation.failover_findings(binding, output, failover_timeout_ms)
            marks = dict(re.findall(r"^AIF-(FALLBACK|BACK)-MS=(\d+)", output, re.M))
            if marks:
                result["failover_ms"] = dict((k.lower(), int(v)) for k, v in marks.items())
    except Exception as exc:  # noqa: BLE001 - a dead session or a refused command fails the check with the reason
        raise CheckError("validation of %s failed: %s" % (name, exc), result)
    finally:
        try:
            conn.disconnect()
        except Exception:  # noqa: BLE001 - the session may already be gone
            pass
    return result


def check_all(plan, sessions, checks, check_mode, connect_factory, missing_lib=None, workers=DEFAULT_WORKERS):
    """``check_switch`` for every switch of ``sessions`` (dicts of ``device`` and its connection arguments), at most
    ``workers`` at once, no failover (it takes links down: one switch at a time, module switch_validate) ->
    {device: result}; a switch whose checks could not run gets ``failed: true`` and ``msg`` in its result."""
    names = [s.get("device") for s in sessions]
    if None in names or len(set(names)) != len(names):
        raise ValueError("every switch needs a unique device name (the inventory hostname)")

    def one(session):
        params = dict((k, v) for k, v in session.items() if k != "device")
        try:
            return check_switch(plan, session["device"], params, checks, False, validation.FAILOVER_TIMEOUT_MS,
                                check_mode, connect_factory, missing_lib)
        except CheckError as exc:
            return dict(exc.result, failed=True, msg=str(exc))

    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(sessions) or 1))) as pool:
        return dict(zip(names, pool.map(one, sessions)))
