# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read many switches once, side by side, and say which ones module switch_config must reconcile (issue 28: a
no-op run pays one process for the whole fabric instead of one Python start, netmiko import and hier_config
import per switch).
The read is switch_config's own first step (``Applier.plan()``), so "in sync" means exactly what a switch_config run
with no commands means; anything this read cannot prove in sync is reported drifted, with the reason, and switch_config
runs for it and speaks for itself. Nothing is written; no device lock is taken (switch_config re-reads under it).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.aifabric.roce.plugins.module_utils import bounds
from ansible_collections.aifabric.roce.plugins.module_utils.nos import devicelock
from ansible_collections.aifabric.roce.plugins.module_utils.nos import switch_args
from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import Applier, refusal
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

DEFAULT_WORKERS = 16


def verdict(in_sync, reason, **figures):
    out = dict(in_sync=in_sync, reason=reason)
    out.update(figures)
    return out


def validated(entry):
    """switch_config's arguments of one switch, with its defaults -> (params, None) or (None, why)."""
    args = dict((k, v) for k, v in entry.items() if k != "name")
    checked = ArgumentSpecValidator(copy.deepcopy(switch_args.argument_spec())).validate(args)
    if checked.error_messages:
        return None, "; ".join(checked.error_messages)
    params = checked.validated_parameters
    problems = bounds.check("switch_config", params, switch_args.argument_spec())
    problems = problems or devicelock.lease_covers(params["lock_ttl"], params["read_timeout"])
    if problems:
        return None, "; ".join(problems)
    return checked.validated_parameters, None


def read_one(entry, connect_factory):
    """The verdict of one switch (never raises: a failure is a reason to let switch_config run)."""
    params, why = validated(entry)
    if why:
        return verdict(False, "arguments refused (switch_config names them): %s" % why)
    try:
        driver = get_driver(params["platform"])
    except KeyError as exc:
        return verdict(False, str(exc))
    if refusal(driver, params["intent"], params["qos"], params["sections"]):
        return verdict(False, "the %s driver refuses this request (switch_config says why)" % driver.name)
    if params["expected_config_digest"]:
        return verdict(False, "a reviewed config digest is given: switch_config verifies it")
    applier = Applier(driver, connect_factory(params, driver), params["intent"], params["qos"], params["sections"],
                      read_timeout=params["read_timeout"], reconnect_timeout=params["reconnect_timeout"],
                      lock_ttl=params["lock_ttl"], drain=params["drain"], drain_wait=params["drain_wait"])
    try:
        plan = applier.plan()
        digest = plan.digest
        cmds = driver.commands(plan.ops)   # the NOS's view of the typed ops: what switch_config would send
        if cmds:
            return verdict(False, "%d command(s) to send" % len(cmds), commands=len(cmds), config_digest=digest)
        if plan.drain:
            return verdict(False, "drained: %s" % ", ".join(plan.drain["lines"]), commands=0, config_digest=digest)
        if plan.takeover:
            return verdict(False, "objects the plan would take over", commands=0, config_digest=digest)
        return verdict(True, "in sync", commands=0, config_digest=digest)
    except Exception as exc:  # noqa: BLE001 - connect, host key and read errors alike: switch_config reports them
        return verdict(False, "read failed: %s" % (str(exc) or type(exc).__name__))
    finally:
        applier.close()


def read_all(entries, connect_factory, workers=DEFAULT_WORKERS):
    """{name: verdict} for every switch, read side by side (at most ``workers`` sessions at once)."""
    names = [e.get("name") for e in entries]
    if None in names or len(set(names)) != len(names):
        raise ValueError("every switch needs a unique name (the inventory hostname)")
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(entries) or 1))) as pool:
        verdicts = list(pool.map(lambda e: read_one(e, connect_factory), entries))
    return dict(zip(names, verdicts))
