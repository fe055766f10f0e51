#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: rail_validate
short_description: Run post-bring-up probes on a GPU host (MTU pings, route lookups, LLDP, RDMA bandwidth)
description:
  - Runs the probes planned by M(aifabric.roce.validation_probes) on the host - C(ping -M do) at the
    planned MTU from each rail NIC to its peer, C(ip -j route get <dst> from <src>) compared with the
    expected device and gateway - and, where the tools exist, compares C(lldpctl -f json) neighbours
    with the cabling plan.
  - With O(rdma_bw=true), measures RDMA write bandwidth between the same-rail NICs of neighbouring
    hosts of the ring with perftest's C(ib_write_bw) (RoCE v2). It takes two runs over all hosts, the
    servers first - O(phase=server) starts this host's servers (one per rail NIC, detached, bounded by
    O(rdma_bw_server_timeout)) and returns as soon as they listen - then O(phase=client) runs this host's clients,
    all rails at once, and judges each average against the probe's threshold x line rate.
  - The RoCE v2 GID index of each rail address is looked up in sysfs
    (C(/sys/class/infiniband/<dev>/ports/1/gids/<n>) and C(gid_attrs/types/<n>)) when the probe runs.
  - A missing tool (C(ib_write_bw), C(timeout)), RDMA device or RoCE v2 GID is reported as a skipped
    probe with the reason, never as an error. Without O(rdma_bw), the RDMA bandwidth mesh is reported
    as skipped (not requested).
  - Changes no configuration. O(phase=server) leaves one log file per server in the temporary directory
    (see RV(servers)), and the bandwidth test loads the rails for its duration.
version_added: 0.1.0
author:
  - aifabric.roce developers (@aifabric)
options:
  probes:
    description:
      - This host's probes from M(aifabric.roce.validation_probes) (kinds C(mtu_ping), C(route), C(rdma_bw)).
      - O(phase=probes) runs the C(mtu_ping) and C(route) probes; O(phase=server) and O(phase=client) run the
        C(rdma_bw) probes of that role.
    type: list
    elements: dict
    default: []
  phase:
    description:
      - C(probes) - pings, route lookups and LLDP.
      - C(server) - start this host's C(ib_write_bw) servers and return once they listen (or after 5 seconds).
        Run it on every host before any host runs O(phase=client).
      - C(client) - run this host's C(ib_write_bw) clients and judge their results.
    type: str
    choices: [probes, server, client]
    default: probes
  rdma_bw:
    description:
      - Run the RDMA bandwidth mesh in O(phase=server) and O(phase=client).
      - When false, O(phase=probes) and O(phase=client) report the mesh as skipped (not requested) and
        O(phase=server) starts nothing. When true, O(phase=probes) leaves the mesh to the other two phases.
    type: bool
    default: false
  rdma_bw_server_timeout:
    description:
      - Seconds a server waits for its client before C(timeout) ends it. A server exits by itself once its
        client is done; raise this when the client runs of all hosts take longer (many hosts, few forks).
    type: int
    default: 300
  root:
    description: Root of the filesystem holding C(/sys/class/infiniband) (C(/) on a host; a fixture tree in tests).
    type: path
    default: /
  lldp:
    description: Expected LLDP neighbour per netdev, as C([leaf, port]); checked only when C(lldpctl) exists.
    type: dict
    default: {}
  ping_count:
    description: Echo requests per ping probe.
    type: int
    default: 2
  timeout:
    description: Seconds to wait for each echo reply.
    type: int
    default: 1
attributes:
  check_mode:
    support: full
    description: Read-only; runs the same probes in check mode.
  diff_mode:
    support: none
    description: Nothing changes.
notes:
  - The bandwidth servers listen on TCP port C(18515 + rail) by default (see M(aifabric.roce.validation_probes));
    the rail addresses must accept that port between the hosts.
"""

EXAMPLES = r"""
- name: Run this host's probes
  aifabric.roce.rail_validate:
    probes: "{{ hostvars['localhost'].validation_plan.probes[inventory_hostname] }}"
    lldp: "{{ hostvars['localhost'].validation_plan.lldp[inventory_hostname] }}"
  register: validation

# RDMA bandwidth mesh: every host starts its servers before any host runs its clients
# (the default linear strategy finishes a task on all hosts before the next one starts).
- name: Start the RDMA bandwidth servers
  aifabric.roce.rail_validate:
    probes: "{{ hostvars['localhost'].validation_plan.probes[inventory_hostname] }}"
    phase: server
    rdma_bw: true
  register: rdma_bw_servers

- name: Measure RDMA bandwidth
  aifabric.roce.rail_validate:
    probes: "{{ hostvars['localhost'].validation_plan.probes[inventory_hostname] }}"
    phase: client
    rdma_bw: true
  register: rdma_bw
"""

RETURN = r"""
findings:
  description:
    - One record per probe - C(probe), C(status) (ok, fail, skipped), C(expected), C(actual); a skipped probe says
      why in C(actual). C(required=false) marks one nobody asked for (the RDMA mesh without O(rdma_bw)).
  returned: always
  type: list
  elements: dict
  sample: [{"probe": "route 10.101.0.2 from 10.100.0.1", "status": "ok", "expected": "dev rail0 via 10.100.0.6", "actual": "dev rail0 via 10.100.0.6"},
           {"probe": "rdma_bw mlx5_0 (rail0) 10.100.0.1 -> gpu02 10.100.0.2:18515", "status": "ok",
            "expected": ">= 90 Gb/s (0.9 x 100 Gb/s line rate)", "actual": "92.57 Gb/s average (92.6% of line rate)"}]
failed_probes:
  description: Number of probes with status fail.
  returned: always
  type: int
  sample: 0
servers:
  description: Servers started by O(phase=server) - C(rdma), C(port), C(pid) (of the C(timeout) wrapper, which leads its own session), C(log).
  returned: always
  type: list
  elements: dict
  sample: [{"rdma": "mlx5_0", "port": 18515, "pid": 4242, "log": "/tmp/aifabric-ib_write_bw-mlx5_0-18515-x1y2.log"}]
measurements:
  description: Client results of O(phase=client) - C(rail), C(rdma), C(peer), C(average_gbps) (null without a result), C(line_rate_gbps).
  returned: always
  type: list
  elements: dict
  sample: [{"rail": 0, "rdma": "mlx5_0", "peer": "gpu02", "average_gbps": 92.57, "line_rate_gbps": 100}]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aifabric.roce.plugins.module_utils.validate.perftest import (
    client_command, judge_rdma_bw, parse_ib_write_bw, probe_name, rdma_devices, roce_v2_gid_index, server_command)
from ansible_collections.aifabric.roce.plugins.module_utils.validate.processes import (
    listening, log_tail, run_all, start_detached, wait_listening)
from ansible_collections.aifabric.roce.plugins.module_utils.validate.probes import (
    judge_lldp, judge_ping, judge_route, parse_lldp, parse_ping, parse_route_batch, route_batch_input)
from ansible_collections.aifabric.roce.plugins.module_utils import bounds

NOT_REQUESTED = "RDMA bandwidth mesh not requested (validate_rdma_bw=false)"
LISTEN_WAIT = 5.0      # seconds a server gets to open its TCP port
CLIENT_MARGIN = 60     # seconds on top of the test duration before a client is given up


def _skip(probe, reason, required=True):
    """A probe that did not run, with why. `required=False`: nobody asked for it (the report lists it, but it does
    not leave the host NOT VERIFIED)."""
    finding = {"probe": probe, "status": "skipped", "expected": "", "actual": reason}
    if not required:
        finding["required"] = False
    return finding


def run_probes(module):
    ip_bin = module.get_bin_path("ip")
    ping_bin = module.get_bin_path("ping")
    findings, pings, routes = [], [], []
    for probe in module.params["probes"]:
        if probe.get("kind") == "route":
            if not ip_bin:
                findings.append(_skip("route %s" % probe.get("dst"), "iproute2 'ip' not installed"))
                continue
            findings.append(None)
            routes.append((len(findings) - 1, probe))
        elif probe.get("kind") == "mtu_ping":
            if not ping_bin:
                findings.append(_skip("ping %s" % probe.get("dst"), "ping not installed (iputils-ping)"))
                continue
            # each NIC pings its own peer: all at once (one NIC's wait no longer adds to the next one's)
            findings.append(None)
            pings.append((len(findings) - 1, probe))
        elif probe.get("kind") != "rdma_bw":  # rdma_bw probes run in the server and client phases
            module.fail_json(msg="unknown probe kind %r" % (probe.get("kind"),))
    if routes:
        # every lookup in one iproute2 batch (one process); -force goes on past a refused lookup
        dummy, out, dummy = module.run_command([ip_bin, "-j", "-force", "-batch", "-"],
                                               data=route_batch_input([p for dummy, p in routes]))
        for (index, probe), route in zip(routes, parse_route_batch(out, [p for dummy, p in routes])):
            findings[index] = judge_route(probe, route)
    count, timeout = module.params["ping_count"], module.params["timeout"]
    commands = [[ping_bin, "-n", "-q", "-M", "do", "-s", str(probe["size"]), "-c", str(count), "-W", str(timeout),
                 "-I", probe["src"], probe["dst"]] for dummy, probe in pings]
    budget = count + timeout + 10   # ping's default 1 s between echo requests
    for (index, probe), (rc, out, dummy) in zip(pings, run_all(commands, budget) if commands else []):
        findings[index] = judge_ping(probe, parse_ping(out, rc))
    if module.params["lldp"]:
        lldpctl = module.get_bin_path("lldpctl")
        if lldpctl:
            rc, out, err = module.run_command([lldpctl, "-f", "json"])
            expected = dict((k, tuple(v)) for k, v in module.params["lldp"].items())
            if rc == 0:
                findings.extend(judge_lldp(expected, parse_lldp(out)))
            else:   # no daemon to ask: the neighbours were not compared, which is not a missing neighbour
                findings.append(_skip("lldp", "lldpctl failed (is lldpd running?): %s" % (err or out).strip()[:200]))
        else:
            findings.append(_skip("lldp", "lldpctl (lldpd) not installed: neighbours not compared with the cabling plan"))
    return findings


def rdma_bw_ready(module, probes):
    """(ib_write_bw path, timeout path, None) or (None, None, skipped findings) when the mesh cannot run here."""
    binary = module.get_bin_path("ib_write_bw")
    timeout_bin = module.get_bin_path("timeout")
    if not binary:
        return None, None, [_skip("rdma bandwidth", "perftest (ib_write_bw) not installed")]
    if module.params["phase"] == "server" and not timeout_bin:
        return None, None, [_skip("rdma bandwidth", "coreutils 'timeout' not installed: a server without a client would never exit")]
    if not rdma_devices(module.params["root"]):
        return None, None, [_skip("rdma bandwidth", "no RDMA devices (/sys/class/infiniband is empty)")]
    if not probes:
        return None, None, [_skip("rdma bandwidth", "no peer: the RDMA bandwidth mesh needs two or more GPU hosts in play")]
    return binary, timeout_bin, None


def with_gid(module, probes, findings):
    """Probes that have a RoCE v2 GID for their address, with its index; a skipped finding for the others."""
    ready = []
    for probe in probes:
        index, reason = roce_v2_gid_index(module.params["root"], probe["rdma"], probe["address"])
        if reason:
            findings.append(_skip(probe_name(probe), reason))
        else:
            ready.append((probe, index))
    return ready


def start_servers(module, binary, timeout_bin, probes, findings):
    """Start each server detached, bounded by `timeout`, and wait (at most LISTEN_WAIT s) until it listens."""
    servers, started = [], []
    busy = listening()
    for probe, index in with_gid(module, probes, findings):
        if probe["port"] in busy:
            findings.append(_skip(probe_name(probe), "TCP port %d already in use (a server of an earlier run may still be waiting)"
                                  % probe["port"]))
            continue
        argv = [timeout_bin, "--kill-after=5", str(module.params["rdma_bw_server_timeout"])] + server_command(binary, probe, index)
        server = start_detached(argv, "ib_write_bw-%s-%d" % (probe["rdma"], probe["port"]))
        started.append((probe, server))
        servers.append({"rdma": probe["rdma"], "port": probe["port"], "pid": server["pid"], "log": server["log"]})
    states = wait_listening([(probe["port"], server) for probe, server in started], LISTEN_WAIT)
    for (probe, server), state in zip(started, states):
        finding = {"probe": probe_name(probe), "status": "ok", "expected": "listening on TCP port %d" % probe["port"]}
        if state == "exited":
            finding.update(status="fail", actual="exited with %d: %s (%s)" % (
                server["process"].returncode, log_tail(server["log"]), server["log"]))
        elif state == "listening":
            finding["actual"] = "listening (pid %d, log %s)" % (server["pid"], server["log"])
        else:
            finding["actual"] = "running (pid %d), not seen listening within %ds (log %s)" % (server["pid"], LISTEN_WAIT, server["log"])
        findings.append(finding)
    return servers


def run_clients(module, binary, probes, findings):
    """Run this host's clients at once and judge each; a client still running after the test duration
    plus CLIENT_MARGIN seconds is stopped and fails."""
    ready = with_gid(module, probes, findings)
    limit = max([probe["duration"] for probe, index in ready] or [0]) + CLIENT_MARGIN
    results = run_all([client_command(binary, probe, index) for probe, index in ready], limit)
    measurements = []
    for (probe, index), (rc, output, timed_out) in zip(ready, results):
        average = None if timed_out else parse_ib_write_bw(output)
        findings.append(judge_rdma_bw(probe, average, output + ("\nstill running after %ds, stopped" % limit if timed_out else "")))
        measurements.append({"rail": probe["rail"], "rdma": probe["rdma"], "peer": probe["peer"], "average_gbps": average,
                             "line_rate_gbps": probe.get("line_rate_gbps")})
    return measurements


def main():
    module = AnsibleModule(
        argument_spec=dict(probes=dict(type="list", elements="dict", default=[]), lldp=dict(type="dict", default={}),
                           ping_count=dict(type="int", default=2), timeout=dict(type="int", default=1),
                           phase=dict(type="str", default="probes", choices=["probes", "server", "client"]),
                           rdma_bw=dict(type="bool", default=False),
                           rdma_bw_server_timeout=dict(type="int", default=300),
                           root=dict(type="path", default="/")),
        supports_check_mode=True,
    )
    bounds.enforce(module, "rail_validate")
    phase = module.params["phase"]
    findings, servers, measurements = [], [], []
    if phase == "probes":
        findings = run_probes(module)
        if not module.params["rdma_bw"]:
            findings.append(_skip("rdma bandwidth", NOT_REQUESTED, required=False))
    elif not module.params["rdma_bw"]:
        if phase == "client":
            findings.append(_skip("rdma bandwidth", NOT_REQUESTED, required=False))
    else:
        probes = [p for p in module.params["probes"] if p.get("kind") == "rdma_bw" and p.get("role") == phase]
        binary, timeout_bin, skipped = rdma_bw_ready(module, probes)
        if skipped:
            findings = skipped
        elif phase == "server":
            servers = start_servers(module, binary, timeout_bin, probes, findings)
        else:
            measurements = run_clients(module, binary, probes, findings)
    module.exit_json(changed=False, findings=findings, failed_probes=sum(1 for f in findings if f["status"] == "fail"),
                     servers=servers, measurements=measurements)


if __name__ == "__main__":
    main()
