# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run of the rail network on a host: read, safety checks, diff, apply, verify, persist, roll back.

Talks to the host only through a ``host`` object (see ``SystemHost`` in the module, ``FakeHost`` in
the unit tests) with these methods::

    ip_json(args) -> list            ip_batch(lines, force=False) -> (rc, stderr)
    read(path) -> str | None         write(path, content, mode)     remove(path)
    symlink(path, target)            readlink(path) -> str | None   glob(pattern) -> [path]
    exists(path) -> bool             ping(address) -> bool | None (None: no ping binary)
    reload_backend(backend, paths)   (e.g. `nmcli connection load`; may do nothing)
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress

from ansible_collections.aifabric.roce.plugins.module_utils.host_net.model import (
    MAIN, HostNetError, batch_lines, current_model, desired_model, diff, item_text, main_default_routes,
    model_text, owned_scope, parse_rt_tables, sysctl_path)
from ansible_collections.aifabric.roce.plugins.module_utils.host_net import persist

RT_TABLES = ("/etc/iproute2/rt_tables", "/usr/share/iproute2/rt_tables", "/usr/lib/iproute2/rt_tables")
MAX_PASSES = 3


class ApplyError(Exception):
    """Applying failed; the host was restored (see .result)."""

    def __init__(self, msg, result):
        Exception.__init__(self, msg)
        self.result = result


def read_state(host, scope, sysctl_names):
    names = parse_rt_tables([host.read(p) or "" for p in RT_TABLES])
    addr_json = host.ip_json(["addr", "show"])
    route_json = host.ip_json(["route", "show", "table", "all"])
    rule_json = host.ip_json(["rule", "show"])
    sysctls = {}
    for name in sysctl_names:
        value = host.read(sysctl_path(name))
        sysctls[name] = None if value is None else value.strip()
    model = current_model(addr_json, route_json, rule_json, scope, sysctls, names)
    return model, route_json


def mgmt_snapshot(host, targets, route_json):
    """What the management path looks like: main default route(s), route to each target, ping."""
    paths = {}
    for target in targets:
        got = host.ip_json(["route", "get", target])
        first = got[0] if got else {}
        paths[target] = {"dev": first.get("dev", ""), "via": first.get("gateway", ""), "ping": host.ping(target)}
    return {"default": main_default_routes(route_json), "paths": paths}


def ssh_connection_of_ancestors(read_bytes, pid, depth=16):
    """``SSH_CONNECTION`` of the nearest ancestor process that has it, or None. Become (sudo) resets the
    module's own environment, but the login shell that ran sudo still holds it (root may read its
    ``/proc/<pid>/environ``). ``read_bytes(path)`` returns bytes or None."""
    seen = set()
    while pid > 1 and pid not in seen and len(seen) < depth:
        seen.add(pid)
        for item in (read_bytes("/proc/%d/environ" % pid) or b"").split(b"\0"):
            if item.startswith(b"SSH_CONNECTION="):
                return item.split(b"=", 1)[1].decode("ascii", "replace")
        status = (read_bytes("/proc/%d/status" % pid) or b"").decode("ascii", "replace")
        ppid = [line.split()[1] for line in status.splitlines() if line.startswith("PPid:") and len(line.split()) == 2]
        pid = int(ppid[0]) if ppid and ppid[0].isdigit() else 0
    return None


def _holders(links, address):
    """Interfaces holding ``address`` (a literal IP; anything else, e.g. a host name, holds nothing)."""
    try:
        wanted = ipaddress.ip_address(address or "")
    except ValueError:
        return []
    return [link["ifname"] for link in links
            if any(_same_ip(a.get("local"), wanted) for a in link.get("addr_info") or [])]


def _same_ip(text, wanted):
    try:
        return ipaddress.ip_address(text or "") == wanted
    except ValueError:
        return False


def detect_management(host, ssh_connection=None, facts_interface=None, route_json=None, declared=(), connection_address=None):
    """The management path this run must not cut, found from the connection itself:
    ``SSH_CONNECTION`` on the host (``client_ip client_port server_ip server_port``) gives the controller
    address and the host address it reached; the interface holding that address is the management
    interface. Become drops SSH_CONNECTION, so the address Ansible connected to (``ansible_host``), the
    interfaces the inventory declares (``host_mgmt_interface``), Ansible's ``default_ipv4.interface`` fact
    and the main table's default route add theirs: each protects on its own."""
    found = {"controller": None, "address": None, "interfaces": [], "sources": []}
    parts = (ssh_connection or "").split()
    links = host.ip_json(["addr", "show"]) if len(parts) == 4 or connection_address else []
    if len(parts) == 4:
        found["controller"], found["address"] = parts[0], parts[2]
        for name in _holders(links, parts[2]):
            found["interfaces"].append(name)
            found["sources"].append("SSH_CONNECTION (%s on %s)" % (parts[2], name))
    for name in _holders(links, connection_address):
        found["interfaces"].append(name)
        found["sources"].append("the address Ansible connects to, ansible_host (%s on %s)" % (connection_address, name))
        found["address"] = found["address"] or connection_address
    for name in declared or ():
        found["interfaces"].append(name)
        found["sources"].append("host_mgmt_interface (%s)" % name)
    if facts_interface:
        found["interfaces"].append(facts_interface)
        found["sources"].append("ansible fact default_ipv4.interface (%s)" % facts_interface)
    for key in main_default_routes(route_json or []):
        found["interfaces"].append(key[4])
        found["sources"].append("main default route (dev %s)" % key[4])
    found["interfaces"] = sorted(set(i for i in found["interfaces"] if i))
    return found


def management_problems(mgmt, devs):
    problems = []
    for dev in mgmt["interfaces"]:
        if dev in devs:
            problems.append("the plan names %s as a rail NIC, but it is this host's management interface (detected from %s): "
                            "fix servers.nics, or set allow_mgmt_change if this is really intended" % (dev, "; ".join(
                                s for s in mgmt["sources"] if dev in s)))
    return problems


def safety_checks(intent, desired, scope, current, snapshot):
    """Problems that must stop the run before anything is applied (each a sentence with the fix)."""
    problems = []
    devs = set(scope["devs"])
    mgmt = intent.get("mgmt_interface")
    if mgmt and mgmt in devs:
        problems.append("the plan names the management interface %s as a rail NIC: fix servers.nics / servers.mgmt_interface" % mgmt)
    present = set(current["_present"])
    for dev in sorted(devs - present):
        problems.append("interface %s does not exist on this host (present: %s): fix servers.nics[].netdev or the host's "
                        "NIC naming" % (dev, ", ".join(sorted(present))))
    for key in snapshot["default"]:
        if key[4] in devs:
            problems.append("rail NIC %s carries the main table's default route (the management path): refusing to touch it" % key[4])
    for key in desired["routes"]:
        if key[0] == MAIN and key[2] == "default":
            problems.append("the plan would change the main table's default route (%s): main-table rail routes must be "
                            "rail pools, never default" % key[2])
    for target, path in sorted(snapshot["paths"].items()):
        if path["dev"] in devs:
            problems.append("management target %s is reached through rail NIC %s: the rail plan would cut the "
                            "management path" % (target, path["dev"]))
        addr = ipaddress.ip_address(target)
        for key in desired["routes"]:
            if key[0] == MAIN and key[2] != "default" and addr in ipaddress.ip_network(key[2]):
                problems.append("planned main-table route %s covers management target %s" % (key[2], target))
    return problems


def mgmt_problems(before, after):
    problems = []
    if before["default"] != after["default"]:
        problems.append("the main table's default route changed: %s -> %s" % (before["default"], after["default"]))
    for target, path in sorted(before["paths"].items()):
        now = after["paths"].get(target, {})
        if (now.get("dev"), now.get("via")) != (path["dev"], path["via"]):
            problems.append("route to management target %s changed: dev %s via %s -> dev %s via %s" % (
                target, path["dev"], path["via"] or "-", now.get("dev"), now.get("via") or "-"))
        if path["ping"] and not now.get("ping"):
            problems.append("management target %s answered ping before the change and does not now" % target)
    return problems


def persistence_plan(host, backend, intent, desired):
    """File changes needed for the backend: list of items and the rendered files."""
    files, links, stale_globs = persist.render(backend, intent, desired)
    items = []
    for path in sorted(files):
        content, mode = files[path]
        old = host.read(path)
        if old != content:
            items.append({"kind": "file", "action": "write", "path": path, "before": old or "", "after": content, "mode": mode})
    for path in sorted(links):
        if host.readlink(path) != links[path]:
            items.append({"kind": "file", "action": "link", "path": path, "target": links[path]})
    for pattern in stale_globs:
        for path in sorted(host.glob(pattern)):
            if path not in files:
                items.append({"kind": "file", "action": "remove", "path": path, "before": host.read(path) or "", "after": ""})
    return items, sorted(files) + sorted(links)


def file_item_text(item):
    if item["action"] == "link":
        return "file link %s -> %s" % (item["path"], item["target"])
    return "file %s %s" % (item["action"], item["path"])


def apply_runtime(host, desired, scope, current):
    """Apply until the host matches (the kernel may drop things as a side effect); return batches run."""
    batches = []
    for dummy in range(MAX_PASSES):
        items = diff(desired, current)
        if not items:
            return batches, []
        lines = batch_lines(items, current)
        if lines:
            batches.append(lines)
            rc, err = host.ip_batch(lines)
            if rc != 0:
                raise HostNetError("ip -batch failed (rc %d): %s" % (rc, err.strip()))
        for item in items:
            if item["kind"] == "sysctl":
                host.write(sysctl_path(item["name"]), item["after"] + "\n", None)
        current = read_state(host, scope, sorted(desired["sysctls"]))[0]
    return batches, diff(desired, current)


def restore(host, before, scope):
    """Put the owned state back as it was before this run (best effort, every step attempted)."""
    now = read_state(host, scope, sorted(before["sysctls"]))[0]
    wanted = dict(before)
    wanted["sysctls"] = {k: v for k, v in before["sysctls"].items() if v is not None}
    items = diff(wanted, now)
    lines = batch_lines(items, now)
    errors = []
    if lines:
        rc, err = host.ip_batch(lines, force=True)
        if rc != 0:
            errors.append(err.strip())
    for item in items:
        if item["kind"] == "sysctl":
            host.write(sysctl_path(item["name"]), item["after"] + "\n", None)
    left = diff(wanted, read_state(host, scope, sorted(before["sysctls"]))[0])
    return {"restore_batch": lines, "restore_errors": errors, "not_restored": [item_text(i) for i in left]}


def run(host, intent, check_mode=False, persistence="auto", manage_sysctls=True, owned_tables=None,
        owned_priorities=None, mgmt_targets=(), rollback=True, ssh_connection=None, mgmt_interface=None,
        allow_mgmt_change=False, mgmt_interfaces=(), mgmt_address=None):
    """Converge the host's rail network to the intent.  Returns the module result (dict)."""
    desired = desired_model(intent, manage_sysctls)
    scope = owned_scope(intent, owned_tables, owned_priorities)
    before, route_json = read_state(host, scope, sorted(desired["sysctls"]))
    mgmt = detect_management(host, ssh_connection, mgmt_interface, route_json, mgmt_interfaces, mgmt_address)
    targets = list(mgmt_targets)
    if mgmt["controller"] and mgmt["controller"] not in targets and not allow_mgmt_change:
        targets.append(mgmt["controller"])   # the controller must stay reachable the same way
    mgmt_targets = targets
    snapshot = mgmt_snapshot(host, list(mgmt_targets), route_json)
    problems = safety_checks(intent, desired, scope, before, snapshot)
    present = set(before["_present"])
    for name in sorted(set(mgmt_interfaces or ()) - present):
        # a misspelt declaration (eht0) would protect nothing, silently
        problems.append("host_mgmt_interface names %s, which does not exist on this host (present: %s): fix "
                        "host_mgmt_interface" % (name, ", ".join(sorted(present))))
    if not allow_mgmt_change:
        problems += management_problems(mgmt, set(scope["devs"]))
    if problems:
        raise HostNetError("refusing to change the rail network: " + "; ".join(problems))

    if persistence == "auto":
        persistence = persist.detect_backend(persist.parse_os_release(host.read("/etc/os-release") or ""), host.exists)
    items = diff(desired, before)
    file_items, managed_files = persistence_plan(host, persistence, intent, desired)
    result = {
        "changed": bool(items or file_items),
        "changes": [item_text(i) for i in items] + [file_item_text(i) for i in file_items],
        "items": items + [{k: v for k, v in i.items() if k not in ("before", "after")} for i in file_items],
        "backend": persistence,
        "files": managed_files,
        "batch": batch_lines(items, before),
        "owned": {"devs": scope["devs"], "tables": scope["tables"], "rule_priorities": scope["priorities"]},
        "rolled_back": False,
        "management": {"interfaces": mgmt["interfaces"], "controller": mgmt["controller"], "address": mgmt["address"],
                       "sources": mgmt["sources"], "protected": not allow_mgmt_change},
        "diff": [{"before_header": "rail network (runtime)", "after_header": "rail network (plan)",
                  "before": model_text(before), "after": model_text(desired)}]
        + [{"before_header": i["path"], "after_header": i["path"], "before": i["before"], "after": i["after"]}
           for i in file_items if i["action"] != "link"],
    }
    if check_mode or not result["changed"]:
        return result

    if items:
        try:
            batches, left = apply_runtime(host, desired, scope, before)
            result["batch"] = [line for batch in batches for line in batch]
            if left:
                raise HostNetError("the host did not converge; still different: " + "; ".join(item_text(i) for i in left))
            after_json = host.ip_json(["route", "show", "table", "all"])
            lost = mgmt_problems(snapshot, mgmt_snapshot(host, list(mgmt_targets), after_json))
            if lost:
                raise HostNetError("management path check failed after the change: " + "; ".join(lost))
        except Exception as exc:  # noqa: BLE001 - any failure after the batch (sysctl, ip -j, read-back) restores
            _fail_and_restore(host, before, scope, rollback, result, "runtime change", exc, [])

    done = []
    try:
        for item in file_items:
            if item["action"] == "write":
                host.write(item["path"], item["after"], item["mode"])
            elif item["action"] == "link":
                host.symlink(item["path"], item["target"])
            else:
                host.remove(item["path"])
            done.append(item)
        written = [i["path"] for i in file_items if i["action"] != "remove"]
        if written:
            host.reload_backend(persistence, written)
    except Exception as exc:  # noqa: BLE001
        _fail_and_restore(host, before, scope, rollback and bool(items), result, "persistence", exc, done if rollback else [])
    return result


def _undo_files(host, done):
    """Put back the files this run wrote or removed (previous content, or no file); returns errors."""
    errors = []
    for item in reversed(done):
        try:
            if item["action"] == "link" or not item.get("before"):
                host.remove(item["path"])
            else:
                host.write(item["path"], item["before"], item.get("mode") or 0o644)
        except Exception as exc:  # noqa: BLE001
            errors.append("%s: %s" % (item["path"], exc))
    return errors


def _fail_and_restore(host, before, scope, rollback, result, stage, exc, done):
    reason = str(exc) if isinstance(exc, HostNetError) else "%s failed: %s: %s" % (stage, type(exc).__name__, exc)
    file_errors = _undo_files(host, done)
    if rollback:
        try:
            result.update(restore(host, before, scope))
            result["rolled_back"] = not result.get("not_restored") and not result.get("restore_errors") and not file_errors
        except Exception as rexc:  # noqa: BLE001
            result.update(rolled_back=False, restore_errors=["restore failed: %s: %s" % (type(rexc).__name__, rexc)])
    if file_errors:
        result["restore_errors"] = result.get("restore_errors", []) + file_errors
    if not rollback:
        tail = " (rollback disabled)"
    elif result.get("rolled_back"):
        tail = " (restored the previous state, read back)"
    else:
        tail = " (NOT fully restored: %s)" % "; ".join(result.get("not_restored", []) + result.get("restore_errors", []))
    raise ApplyError(reason + tail, result)
