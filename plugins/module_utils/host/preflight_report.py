# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The RDMA preflight fleet summary (module rdma_preflight_report): per host findings + the fleet firmware check ->
preflight.json, preflight.md and one <host>.json. Pure logic plus the file writes, shared by the module and its action
plugin (which runs it in the controller's own process: no Python start and no Ansible import per run)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os

from ansible_collections.aifabric.roce.plugins.module_utils.atomic_file import inside
from ansible_collections.aifabric.roce.plugins.module_utils.host import checks
from ansible_collections.aifabric.roce.plugins.module_utils.host.files import RunError, ensure_file
from ansible_collections.aifabric.roce.plugins.module_utils.host.sysroot import SysRoot

ARGUMENT_SPEC = dict(hosts=dict(type="dict", required=True), facts=dict(type="dict", default={}), dest=dict(type="path", required=True),
                     strict=dict(type="bool", default=True),
                     fleet_severity=dict(type="str", choices=["error", "warning"], default="warning"))


def summary_files(hosts, dest, strict, fleet_severity, facts=None):
    """-> (summary, fleet findings, {path: content}); RunError for a host name that would write outside ``dest``.
    A host's facts are its entry's ``facts`` or else ``facts[host]``."""
    facts_by_host = {}
    for host, entry in hosts.items():
        gathered = entry.get("facts") or (facts or {}).get(host)
        if gathered:
            facts_by_host[host] = gathered
    exp_by_host = dict((h, checks.expectations(v.get("nics") or [], severity={"fw_fleet_mixed": fleet_severity}))
                       for h, v in hosts.items())
    fleet = checks.fleet_findings(facts_by_host, exp_by_host)
    summary = checks.summarize(dict((h, v.get("findings") or []) for h, v in hosts.items()), fleet, strict)
    files = {os.path.join(dest, "preflight.json"): json.dumps(summary, indent=2, sort_keys=True) + "\n",
             os.path.join(dest, "preflight.md"): checks.render_markdown(summary)}
    for host, item in summary["hosts"].items():
        try:
            path = inside(dest, "%s.json" % host)
        except ValueError as exc:
            raise RunError("refusing to write a host report outside %s: %s" % (dest, exc))
        files[path] = json.dumps(dict(item, host=host), indent=2, sort_keys=True) + "\n"
    return summary, fleet, files


def run(params, check_mode):
    """Validated parameters -> the module's result (files written unless ``check_mode``); RunError on bad input."""
    summary, fleet, files = summary_files(params["hosts"], params["dest"], params["strict"], params["fleet_severity"],
                                          params["facts"])
    changed = False
    diff = []
    root = SysRoot("/")
    for path, content in sorted(files.items()):
        this, d = ensure_file(root, path, content, check_mode=check_mode, durable=False)
        changed = changed or this
        if this and path.endswith(".md"):
            diff.append(d)
    return dict(changed=changed, summary=summary, fleet_findings=fleet, files=sorted(files), diff=diff)
