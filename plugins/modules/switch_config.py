#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
---
module: switch_config
short_description: Render, diff and atomically apply a switch's RoCE QoS, MTU, underlay and port-binding config
version_added: "1.0.0"
description:
  - Runs on the controller and reaches the switch with netmiko.
  - Reads the running config once, renders the intent with the NOS driver for O(platform), and computes
    the remediation (hier_config for CLI NOSes, a structured compare of C(nv set) commands for NVUE).
  - In check mode returns the diff without entering config mode.
  - Otherwise applies inside the NOS's own transaction (EOS configuration session with a confirmed commit
    timer, NX-OS checkpoint and rollback, NVUE revision, on klish the reverse of the managed lines only),
    reads the whole running config back and verifies it equals the before-image plus the intended change,
    saves, and on any failure undoes the change and reads the whole running config back again.
    RV(rolled_back) is true only when that read-back proves the before-image; otherwise the message says
    exactly what differs. The message names the step, the command and the device's own answer.
  - A rollback never removes an interface; it takes back only the managed lines under it.
  - Concurrency. A per-device lock on the controller serialises runs; the apply refuses when the running
    config changed since it was read, when another operator has a pending EOS configuration session or
    NVUE revision, or when O(expected_config_digest) does not match. Nothing is sent then.
  - Brownfield guard. Objects the plan owns whole but this collection did not put there are a I(takeover) -
    the default-VRF BGP instance under another ASN than the plan's, an address on an interface the plan owns that
    differs from the planned one (or where the plan puts none), a policy bound by name on a planned interface that is
    not one of ours (not C(AIF-)). They are listed in RV(takeover). In apply mode the run refuses, sending nothing,
    unless O(takeover=true) (role variable C(switch_takeover) for that switch, after review); in check mode they are
    reported, not a failure, and the audit lists them as a takeover, not as ordinary drift.
  - On C(frr) (no NOS transaction in FRR 8.4) the same flow, lock and checks apply the change as a file - a C(vtysh -C -f)
    dry run, then C(vtysh -f), the whole running config read back, and on failure the computed reverse of the managed
    lines, proven by read-back; saved with C(write memory).
author: aifabric.roce developers (@aifabric)
options:
  intent:
    description: The device's slice of the plan (lookup C(aifabric.roce.device_intent), C(devices/<name>.json)).
    type: dict
    required: true
  qos:
    description: The fabric QoS profile (the slice's C(qos)).
    type: dict
    required: true
  sections:
    description:
      - Managed sections to render and reconcile.
      - C(underlay) (loopback, fabric /31s, the host VLAN and SVI or routed host ports, eBGP from the plan's C(bgp),
        ECMP hash fields where the NOS has a line for them) is rendered by the drivers that list it in their
        C(sections) (C(frr), C(eos), C(nvue), C(nxos), C(dell_sonic), C(community_sonic)); any other driver refuses it.
      - C(qos) and C(mtu) render nothing on C(frr).
      - C(asternos) renders only C(qos), through Easy RoCE's REST model (the switch computes thresholds, weights and
        buffers); C(mtu), C(pbr) and C(underlay) are refused with a message naming the opt-in
        C(asternos_config=config_db) (SONiC-native CONFIG_DB, not an Asterfusion-documented interface); with the opt-in
        they are refused too, check mode included, until the SONiC GCU transaction exists (as on C(community_sonic)).
    type: list
    elements: str
    choices: [qos, mtu, pbr, underlay]
    default: [qos, mtu, pbr]
  save:
    description: Save the running config to startup after a verified change.
    type: bool
    default: true
  commit_timer:
    description:
      - EOS only. Minimum C(commit timer) in seconds. The session is always committed with a timer and confirmed
        after verification; the timer used is at least twice O(read_timeout) plus 30 s, so it outlasts the verification.
    type: int
    default: 0
  lock_ttl:
    description:
      - The device lock's lease, in seconds of the DEVICE's clock. The lock is a marker on the device (an EOS configuration
        session, an NX-OS checkpoint, a marker file on NVUE, SONiC, AsterNOS and FRR) named
        C(aif-<device time>-<host>-<machine>-<pid>-<random>-t<lock_ttl>), where C(machine) is a hash of the controller's
        boot id, machine id and PID namespace and C(t) records this run's lease, by which every other controller judges
        it. The run renews it (a C(-l<device epoch>) object) before each long step, and checks that it still holds it
        before the change, before the commit, in the drain wait and before an undo; no write goes out unless the lease,
        as last confirmed by the device, covers it to its end (else it is checked and renewed first); a run that lost
        it stops and touches nothing more.
      - Must exceed O(read_timeout) by 30 seconds (the longest single command must fit in a lease).
      - Another run's marker not renewed for its holder's TTL (O(lock_ttl) for a marker without one) of the device's
        clock is stale and recovered with a note
        naming it; a live one blocks until O(lock_timeout), then the run is refused, naming the holder. A marker of this
        very machine and PID namespace whose process is gone is recovered at once; a pid is never looked up for another
        machine. A marker this login user cannot remove (another user's file in a sticky C(/tmp)) is named in
        RV(run_notes) and skipped.
      - Between 60 and 86400; any other value (or a boolean) is refused before anything is sent.
    type: int
    default: 1800
  drain:
    description:
      - Maintenance drain around a change that can disturb forwarding (an underlay or MTU change, a first QoS/lossless
        buffer init) on a switch whose default-VRF C(router bgp) this plan runs. The switch announces its routes with the
        BGP GRACEFUL_SHUTDOWN community (FRR C(bgp graceful-shutdown), NX-OS C(graceful-shutdown activate), NVUE
        C(router bgp graceful-shutdown on)), waits O(drain_wait), applies and verifies the change, waits again and
        takes the drain back; each step is proven by reading the whole config back, and a failed change is undrained too.
      - C(auto) drains only such changes and only on spines (a host-facing leaf's hosts are single-homed on it, so there
        is no other path to move them to, and the drain was measured to cost probes on the twin), C(always) every
        change on any switch, C(never) none. EOS, Enterprise SONiC and AsterNOS
        have no drain here yet (RV(drained) says so and the change goes on undrained).
      - A switch already drained by someone else (the line present before the run) is left drained.
      - The drain is recorded on the device before the line is sent (a C(<run>-d) object of the device lock). A run that
        ends between drain and undrain (killed, lost session) leaves that record; the next run of this collection on
        the switch, even one with nothing else to change, takes the drain back first (proven) and removes the record.
        RV(drain_state) reports any drain on the switch, ours or an engineer's, in check mode too.
    type: str
    choices: [auto, always, never]
    default: auto
  drain_wait:
    description:
      - Seconds to wait after the drain (neighbours move traffic away) and after the change (sessions come back); the
        lease is renewed during the wait.
      - Between 0 and 600; any other value (or a boolean) is refused before anything is sent.
    type: int
    default: 5
  expected_config_digest:
    description:
      - The RV(config_digest) of a reviewed check run. The apply refuses, changing nothing, when the device's running
        config no longer has this digest.
    type: str
  read_timeout:
    description:
      - Seconds to wait for the device's answer to one command or one config read (the longest a single command may
        run, a GCU apply-patch included). O(lock_ttl) must exceed it by 30 seconds.
    type: int
    default: 120
  reconnect_timeout:
    description: Seconds to keep trying to reconnect for the undo after the session was lost.
    type: int
    default: 30
  lock_dir:
    description: Directory of the controller's per-device lock files (default C(<tmp>/aifabric-switch-locks)).
    type: path
  lock_timeout:
    description: Seconds to wait for another run on the same switch to finish before refusing.
    type: int
    default: 300
  takeover:
    description:
      - Let the plan replace objects it owns whole that the switch holds from someone else (RV(takeover)) - the
        operator's own default-VRF C(router bgp) under another ASN, addresses on the interfaces the plan addresses,
        foreign policies on planned interfaces.
      - When false (the default) and there is anything to take over, an apply fails before anything is sent, naming
        each object; check mode reports them. Set it for one switch, after reviewing C(--check --diff).
    type: bool
    default: false
extends_documentation_fragment:
  - aifabric.roce.switch_connection
  - aifabric.roce.switch_platform
requirements: [netmiko, hier_config]
notes:
  - Supports check mode and diff mode.
"""

EXAMPLES = r"""
- name: Apply RoCE QoS and MTU to a leaf
  aifabric.roce.switch_config:
    platform: "{{ lookup('aifabric.roce.device_intent', inventory_hostname).platform }}"
    intent: "{{ lookup('aifabric.roce.device_intent', inventory_hostname) }}"
    qos: "{{ lookup('aifabric.roce.device_intent', inventory_hostname).qos }}"
    sections: [qos, mtu]
    host: "{{ ansible_host }}"
    port: "{{ ansible_port | default(22) }}"
    username: "{{ ansible_user }}"
    password: "{{ ansible_password }}"
  delegate_to: localhost
"""

RETURN = r"""
commands:
  description: Remediation commands (sent unless in check mode).
  returned: always
  type: list
  elements: str
attempted:
  description: Commands actually sent to the device, including transaction commands.
  returned: always
  type: list
  elements: str
before:
  description: Managed sections of the running config before the run (canonical text).
  returned: always
  type: str
after:
  description: Managed sections as intended (canonical text).
  returned: always
  type: str
drift:
  description:
    - Differences between the running and the intended managed config, one entry per item.
    - A changed value pairs up under one item; C(actual) is null for a missing line, C(expected) null for an unexpected one.
  returned: always
  type: list
  elements: dict
  contains:
    item:
      description: Config path of the item (parent lines joined with C( > ), then the line without its value).
      type: str
    expected:
      description: Intended line(s) under the item.
      type: str
    actual:
      description: Running line(s) under the item.
      type: str
config_mode:
  description: Whether the run entered config mode on the device (never in check mode or when nothing differs).
  returned: always
  type: bool
diff:
  description: Before/after managed config (with C(--diff)).
  returned: when diff mode is on
  type: dict
device_error:
  description: On failure, the device's own answer (or what the session last showed, for a timeout).
  returned: failure
  type: str
config_digest:
  description:
    - Digest of the whole running config as read (managed view and everything outside it). Pass it as
      O(expected_config_digest) to bind an apply to the reviewed check run.
  returned: always
  type: str
  sample: "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
rolled_back:
  description:
    - On failure, true only when the whole running config read back after the undo equals the before-image;
      false when it differs or could not be read; null when the run refused before sending anything.
  returned: failure
  type: bool
failed_step:
  description: On failure, the step that failed (connect, takeover, preflight, begin, stage, commit, verify, confirm, save).
  returned: failure
  type: str
failed_command:
  description: On failure, the command whose answer failed the step.
  returned: failure
  type: str
differs:
  description: On failure, what still differs from the before-image after the undo (null when restored).
  returned: failure
  type: str
run_notes:
  description:
    - What the run found and did beside the change, e.g. lock markers of earlier runs recovered (stale past O(lock_ttl),
      or their run ended) with their names, a commit timer raised, the drain.
  returned: when a change was applied or failed
  type: list
  elements: str
foreign:
  description:
    - On failure, the lines someone else (another controller, an engineer at the CLI) changed on the switch during
      this run. Then only this run's own lines are ever taken back, never the other change, and RV(rolled_back) is false.
  returned: on failure
  type: list
  elements: str
drained:
  description: What the maintenance drain did on this apply (drained and undrained, not drained and why, left drained).
  returned: when a change needed a drain
  type: str
  sample: drained (underlay changes) for the change, undrained after it (proven)
drain_state:
  description:
    - Any drain on the switch, ours or an engineer's (null when not drained). C(lines) the drain lines of the running
      config (our GRACEFUL_SHUTDOWN line, or EOS maintenance mode C(quiesce), unverified), C(records) this collection's
      drain records, C(by) whose drain it is, C(undrain) true when a run of ours left it drained and ended (the next
      apply takes it back; check mode reports it as a change).
  returned: always
  type: dict
  sample: {"drained": true, "lines": ["router bgp graceful-shutdown on"], "records": [], "undrain": false,
           "by": "not this collection (no drain record of ours): left drained; undrain it by hand when done"}
takeover:
  description:
    - Objects of the running config the plan owns whole and would replace although this collection did not put them
      there (brownfield guard); empty on a clean switch and on one this collection configured.
    - In check mode a non-empty list is a takeover to review, not ordinary drift; in apply mode it fails the run unless
      O(takeover=true).
  returned: always
  type: list
  elements: dict
  contains:
    kind:
      description: C(bgp) (the default-VRF BGP instance), C(address) (an interface address) or C(policy) (a policy bound on an interface).
      type: str
    item:
      description: Config path of the object (as in RV(drift)).
      type: str
    actual:
      description: What the switch holds now.
      type: str
    expected:
      description: What the plan puts there instead (null when it removes the object).
      type: str
    message:
      description: One line for a human naming the object, what the plan puts there, and that it would be replaced or removed.
      type: str
fitted:
  description:
    - What the run left to the switch's own machinery instead of writing it, and why (community SONiC - the traditional
      buffer model's buffermgrd writes the lossless PGs, a template's NULL-profile PG range already covers a lossless
      priority, GCU cannot create a PFC_WD table).
  returned: always
  type: list
  elements: str
disruptive:
  description:
    - What the planned change disturbs beyond its own lines, named before anything is sent (check mode and diff
      included; C(drain=auto) drains for it). Community SONiC - the ports GCU's patch sorter takes admin down and up
      again around changes to their BUFFER_PG, BUFFER_QUEUE, BUFFER_PORT_*_PROFILE_LIST, PORT_QOS_MAP or QUEUE rows.
  returned: always
  type: list
  elements: dict
  contains:
    kind:
      description: C(port flap).
      type: str
    ports:
      description: The ports that go admin down and up again.
      type: list
      elements: str
    message:
      description: One line for a human.
      type: str
taken_over:
  description: The RV(takeover) objects this run replaced (apply mode with O(takeover=true) and a verified change).
  returned: when objects were taken over
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

try:
    import netmiko  # noqa: F401 pylint: disable=unused-import
    HAS_NETMIKO = True
except ImportError:
    HAS_NETMIKO = False

from ansible_collections.aifabric.roce.plugins.module_utils.nos.apply import Applier, ApplyError, ConnectError, refusal
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import drift
from ansible_collections.aifabric.roce.plugins.module_utils.nos.cli import HAS_HIER_CONFIG
from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import lock_key, netmiko_factory
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
from ansible_collections.aifabric.roce.plugins.module_utils.nos import switch_args
from ansible_collections.aifabric.roce.plugins.module_utils.nos import devicelock
from ansible_collections.aifabric.roce.plugins.module_utils.nos import takeover as brownfield
from ansible_collections.aifabric.roce.plugins.module_utils import bounds


def main():
    argument_spec = switch_args.argument_spec()
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    p = module.params
    # bounds before anything is sent (role variables switch_lock_ttl, switch_drain_wait)
    bad = devicelock.check_bounds(p["lock_ttl"], p["drain_wait"], "lock_ttl (role variable switch_lock_ttl)",
                                  "drain_wait (role variable switch_drain_wait)")
    if bad:
        module.fail_json(msg="; ".join(bad) + "; nothing was sent", failed_step="arguments", rolled_back=None)
    bounds.enforce(module, "switch_config")
    bad = devicelock.lease_covers(p["lock_ttl"], p["read_timeout"], "lock_ttl (role variable switch_lock_ttl)",
                                  "read_timeout (role variable switch_read_timeout)")
    if bad:
        module.fail_json(msg="; ".join(bad) + "; nothing was sent", failed_step="arguments", rolled_back=None)
    if not HAS_NETMIKO:
        module.fail_json(msg=missing_required_lib("netmiko"))
    if not HAS_HIER_CONFIG:
        module.fail_json(msg=missing_required_lib("hier_config"))
    driver = get_driver(module.params["platform"])
    p = module.params
    # refused before anything is read: the driver's own refusal (AsterNOS: Easy RoCE only) or a section it does not
    # render (nos/apply.py refusal, as switch_read)
    why = refusal(driver, p["intent"], p["qos"], p["sections"])
    if why:
        module.fail_json(msg=why)
    applier = Applier(driver, netmiko_factory(p, driver), p["intent"], p["qos"], p["sections"], commit_timer=p["commit_timer"],
                      read_timeout=p["read_timeout"], reconnect_timeout=p["reconnect_timeout"], lock_key=lock_key(p),
                      lock_dir=p["lock_dir"], lock_timeout=p["lock_timeout"], lock_ttl=p["lock_ttl"],
                      drain=p["drain"], drain_wait=p["drain_wait"])
    result = dict(changed=False, commands=[], attempted=[], drift=[], config_mode=False, takeover=[], drain_state=None)
    try:
        try:
            plan = applier.plan()
            before, after, cmds = plan
        except ConnectError as exc:
            module.fail_json(msg="cannot connect to %s:%s: %s; nothing was sent" % (p["host"], p["port"], exc.reason),
                             failed_step="connect", **result)
        except Exception as exc:  # noqa: BLE001 - host key problems, a device that rejects the read
            module.fail_json(msg="cannot read running config from %s:%s: %s" % (module.params["host"], module.params["port"], exc), **result)
        undrain = plan.undrain
        result.update(before=before, after=after, commands=cmds, changed=bool(cmds) or undrain,
                      drift=drift(before, after, driver), config_digest=plan.digest,
                      drain_state=plan.drain, fitted=plan.fitted, disruptive=plan.disruptions)
        for item in plan.disruptions:
            module.warn("%s: %s" % (p["intent"].get("name") or p["host"], item["message"]))
        if plan.drain:
            drained = plan.drain
            module.warn("%s is drained (%s): %s" % (p["intent"].get("name") or p["host"], ", ".join(drained["lines"]),
                                                    drained["by"]))
        if p["expected_config_digest"] and p["expected_config_digest"] != plan.digest:
            module.fail_json(msg="the running config of %s changed since the reviewed check run (digest %s, expected %s); "
                                 "nothing was changed: review the new diff" % (p["host"], plan.digest, p["expected_config_digest"]),
                             rolled_back=None, failed_step="preflight", **result)
        if module._diff:
            result["diff"] = dict(before=before, after=after)
        # brownfield guard: objects the plan would replace whole that someone else configured
        result["takeover"] = plan.takeover
        verdict = brownfield.decide(result["takeover"], p["takeover"], module.check_mode)
        switch = p["intent"].get("name") or p["host"]
        if module._diff and plan.disruptions:
            result["diff"]["before_header"] = "%s running config - DISRUPTIVE: %s" % (
                p["intent"].get("name") or p["host"], "; ".join(d["message"] for d in plan.disruptions))
        if module._diff and result["takeover"]:
            # --diff names the takeover above the before/after text, not only as removed lines
            result["diff"]["before_header"] = "%s running config - TAKEOVER: %s" % (
                switch, "; ".join(brownfield.messages(result["takeover"])))
            result["diff"]["after_header"] = "%s as planned" % switch
        if verdict == "report":
            module.warn("takeover on %s (an apply refuses it unless switch_takeover is true): %s"
                        % (switch, "; ".join(brownfield.messages(result["takeover"]))))
        elif verdict == "refuse":
            module.fail_json(msg=brownfield.refusal(result["takeover"], switch), rolled_back=None, failed_step="takeover",
                             **result)
        if (cmds or undrain) and not module.check_mode:
            result["config_mode"] = True
            try:
                applier.apply(before, after, cmds, save=p["save"], expected_digest=p["expected_config_digest"])
            except ApplyError as exc:
                result.update(run_notes=applier.notes, foreign=exc.foreign)
                result.update(attempted=exc.attempted, rolled_back=exc.rolled_back, device_error=exc.device_error,
                              failed_step=exc.step, failed_command=exc.command, differs=exc.differs)
                module.fail_json(msg=str(exc), **result)
            result["attempted"] = applier.attempted
            if applier.drained:
                result["drained"] = applier.drained
            result["run_notes"] = applier.notes
            if verdict == "take":
                result["taken_over"] = result["takeover"]
    finally:
        applier.close()
    module.exit_json(**result)


if __name__ == "__main__":
    main()
