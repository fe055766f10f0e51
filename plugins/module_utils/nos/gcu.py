# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The community SONiC transaction on SONiC's Generic Config Updater (GCU), from the login shell (bash):

    sudo -n config checkpoint <run>            the rollback point: the whole CONFIG_DB of this moment
    sudo -n config apply-patch <file>          one RFC 6902 JSON Patch, validated by GCU against SONiC's YANG models
    show runningconfiguration all              read back: managed tables == intent, everything else unchanged
    sudo -n config save -y                     CONFIG_DB -> /etc/sonic/config_db.json
    sudo -n config delete-checkpoint <run>

On failure: ``sudo -n config rollback <run>`` (GCU's ``config replace`` of the checkpoint) only while the switch holds
nothing but its before-image and this run's change; a change someone else made meanwhile stops the rollback, and
apply.py then takes back this run's own fields alone (a JSON Patch of them) or touches nothing, saying what the
switch holds.

Sources: sonic-net/sonic-utilities config/main.py (``apply-patch``, ``checkpoint``, ``rollback``,
``delete-checkpoint``, ``list-checkpoints``, ``save``: each fails through click's ``ctx.fail``, exit status 2 and
``Error: ...``), generic_config_updater/generic_updater.py (``PatchApplier.apply``: simulate, YANG-validate, refuse
empty tables, apply, verify; ``FileSystemConfigRollbacker``: checkpoints as /etc/sonic/checkpoints/<name>.cp.json,
rollback = replace by the checkpoint), show/main.py ``runningconfiguration all`` (CONFIG_DB as JSON plus ``bgpraw``);
sudo without a password for the ``sudo`` group: sonic-buildimage files/image_config/sudoers/sudoers
(``%sudo ALL=(ALL:ALL) NOPASSWD: ALL``); ``-n`` makes a login without it fail at once instead of waiting on a prompt.

Why the device lock is not the checkpoint: ``config checkpoint`` overwrites an existing name without a word
(``FileSystemConfigRollbacker.checkpoint`` has no existence check) and ``list-checkpoints`` tells no device clock,
so a checkpoint cannot be the exclusive, leased marker nos/devicelock.py needs; the lock is the Linux marker file
every Linux-based NOS here uses (transactions.ShellMarkers), and the checkpoint carries the run's name so a later
run recovers it.
"""

from __future__ import annotations

import json
import re

from ansible_collections.aifabric.roce.plugins.module_utils.nos import configdb, sudolog
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import Changes, read
from ansible_collections.aifabric.roce.plugins.module_utils.nos.ops import Command, sent_ops
from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import (
    RefusedError, ShellMarkers, StepError, Transaction, _safe, clock_window)

CONFIG = "sudo -n config"
CHECKPOINTS = "/etc/sonic/checkpoints"   # generic_updater.py FileSystemConfigRollbacker: <name>.cp.json
# a patch SONiC's own sonic-acl.yang refuses (PACKET_ACTION is an enumeration without REDIRECT:<ip>): GCU validates
# every patch against the models and would refuse it, so it is refused here before anything is sent
YANG_REFUSED = re.compile(r"^REDIRECT:")
# GCU validates the whole target CONFIG_DB, not only the patch (generic_config_updater patch_sorter.py
# StrictPatchSorter: validate_config_db_config(target_config)): a switch holding such redirect rules (loaded by an
# engineer with acl-loader or sonic-db-cli) refuses every patch. Its hidden ``-i/--ignore-path`` option (config/main.py
# apply-patch and rollback, "ignore validation for config specified by given path which is a JsonPointer";
# IgnorePathsFromYangConfigSplitter) leaves that table out of the YANG check; it is passed only while the switch
# holds such a rule, or when this run adds one under the fabric's opt-in (community_sonic_pbr: gcu_ignore_acl_rule).
ACL_RULE_PATH = "/ACL_RULE"
OPT_IN = "gcu_ignore_acl_rule"


class GcuTxn(ShellMarkers, Transaction):
    mechanism = ("GCU: config checkpoint, one config apply-patch (JSON Patch), read-back verify, config save -y; "
                 "config rollback to the checkpoint while the switch holds only this run's change")
    native_undo = True
    chunk = 3000   # base64 characters per shell line (with the command, under a tty line's 4095 bytes)

    def patch_file(self):
        return "/tmp/%s.json-patch" % _safe(self.tag)

    # ---- the transaction -----------------------------------------------------------------------------------
    def preflight(self):
        if self.base_image is not None and self.pending:
            refused = field_refusal(configdb.device_view(self.base_image.managed, self.base_image.outside)[0],
                                    self._device_ops(self._ops_of(self.pending), self.base_image))
            if refused:
                raise RefusedError("community_sonic: %s; nothing was sent" % refused)
        if (self.intent or {}).get("community_sonic_pbr") == OPT_IN:
            return   # the operator accepted ACL_RULE outside GCU's YANG check (_ignore passes -i /ACL_RULE)
        for op in self._ops_of(self.pending):
            for value in _values(op.get("value")):
                if YANG_REFUSED.match(value):
                    raise RefusedError(
                        "community_sonic: the pbr section's ACL_RULE PACKET_ACTION %s is outside SONiC's sonic-acl.yang "
                        "(PACKET_ACTION is an enumeration without a next hop), and config apply-patch validates every "
                        "patch against SONiC's YANG models, so the switch would refuse it; nothing was sent. Leave pbr out "
                        "for community_sonic (--skip-tags switch_port_binding, or switch_sections: [qos, mtu] in its "
                        "host_vars), or set fabric.community_sonic_pbr: gcu_ignore_acl_rule to leave ACL_RULE out of "
                        "GCU's YANG check on such switches (docs/switches.md)" % value)

    checkpointed = False   # this object made the run's checkpoint (a drain's own object never deletes it)
    flaps = ()       # the ports GCU takes admin down and up again for the staged patch (flapping_ports below)

    def begin(self):
        self.checkpointed = True   # before the command: a lost answer may still have made it
        self._ok("begin", "%s checkpoint %s" % (CONFIG, _safe(self.tag)), note="config checkpoint failed")

    def stage(self, cmds):
        """The patch for this switch (configdb.device_patch over the before-image), written to a file."""
        if self.base_image is None:
            raise StepError("stage", None, "", "no before-image to build the device patch from")
        config, owned, foreign = configdb.device_view(self.base_image.managed, self.base_image.outside)
        ops = configdb.device_patch(self._ops_of(cmds), config, owned, foreign, managed=self.driver.config_tables)
        self.staged = ops
        self.flaps = flapping_ports(ops, config)
        # what GCU's own admin-down moves show while the patch is applied (Changes(transient=...))
        self.transient = set("PORT > %s > admin_status %s" % (p, a) for p in self.flaps for a in ("down", "up"))
        self.put_file("stage", self.patch_file(), _compact(guarded(ops, config)))

    def commit(self, verify, precheck=None):
        if precheck is not None:
            precheck("precheck")   # the switch is still the run's base just before GCU applies the patch
        self.committed = True   # from here the switch may hold some of the patch (GCU applies it in steps)
        self.io.attempted.extend(configdb.commands(configdb.patch_ops(self.staged)))
        self._ok("commit", "%s apply-patch %s%s" % (CONFIG, self._ignore(self.base_image, self.staged), self.patch_file()),
                 note="GCU rejected the patch")
        self.confirmed = True
        verify("verify")

    def save(self):
        return self._ok("save", "%s save -y" % CONFIG, note="config save failed")

    # who wrote CONFIG_DB in this run's window (an edit GCU reverted leaves no trace in CONFIG_DB): nos/sudolog.py
    edit_record = sudolog.RECORD

    def record_clock(self):
        return clock_window(self._wall_clock("record"))

    def recorded_edits(self, window, final_paths):
        _status, out = self._shell("record", sudolog.READ)
        own = [" > ".join(op.path[:-1] + (line,)) for op in sent_ops(self.io.attempted) for line in op.lines()]
        return sudolog.edits(out, window.start, _safe(self.tag), own)

    def abort(self, read_managed, before_managed):
        self.io.fresh("abort")
        if not self.committed:
            return "nothing was applied (stopped before config apply-patch)"
        got = self._image("abort")
        if self.base_image is not None:
            if got == self.base_image:
                return "nothing to undo (the switch holds the before-image)"
            ch = Changes(self.base_image, self.want_image, got, transient=self.transient)
            if ch.foreign:
                raise StepError("abort", None, "", "config rollback %s not run: the switch holds changes this run did not "
                                "make (%s), which a rollback to the checkpoint would undo" % (self.tag, ch.describe()))
        self._ok("abort", "%s rollback %s%s" % (CONFIG, self._ignore(got, ()), _safe(self.tag)), note="config rollback failed")
        return "rolled back to checkpoint %s (config rollback)" % self.tag

    def push_reverse(self, cmds):
        """Apply managed-view ops (this run's own fields back, or a drain) as one patch, built on a fresh read."""
        self.io.fresh("abort")
        img = self._image("abort")
        ops = self._device_ops(self._ops_of(cmds), img)
        if not ops:
            return
        self.io.attempted.extend(configdb.commands(configdb.patch_ops(ops)))
        self.put_file("abort", self.patch_file(), _compact(ops))
        self._ok("abort", "%s apply-patch %s%s" % (CONFIG, self._ignore(img, ops), self.patch_file()),
                 note="GCU rejected the reverse patch")

    def cleanup(self):
        try:
            if self.checkpointed and self.tag in self._checkpoints("cleanup"):
                self._ok("cleanup", "%s delete-checkpoint %s" % (CONFIG, _safe(self.tag)))
            self._ok("cleanup", "rm -f %s %s.b64" % (self.patch_file(), self.patch_file()))
        except Exception as exc:  # noqa: BLE001 - reported as a leftover; the config is not affected
            self.notes.append("checkpoint / patch file of %s could not be removed: %s" % (self.tag, exc))

    def leftovers(self):
        left = ["checkpoint %s" % n for n in self._checkpoints("leftovers") if n == self.tag or n.startswith(self.tag + "-")]
        status, _out = self._shell("leftovers", "test -e %s -o -e %s.b64" % (self.patch_file(), self.patch_file()))
        return left + (["staged patch file %s" % self.patch_file()] if status == 0 else [])

    def recover(self, marker):
        """An ended or stale run of ours: delete its checkpoint(s) and patch file (the running config is not rolled
        back: whatever that run left is judged by this run's own read), then its lock objects."""
        gone, raised = [], []
        for name in self._checkpoints("lock"):
            if name == marker.name or name.startswith(marker.name + "-"):
                raised += self._raise_left_down(name, marker.name)
                self._ok("lock", "%s delete-checkpoint %s" % (CONFIG, _safe(name)))
                gone.append(name)
        self._ok("lock", "rm -f /tmp/%s.json-patch /tmp/%s.json-patch.b64" % (_safe(marker.name), _safe(marker.name)))
        Transaction.recover(self, marker)
        self.recovered_ports = list(self.recovered_ports) + raised
        up = ("; brought back up the port(s) GCU had taken admin down for that run's port-critical changes and not "
              "brought back (admin up in its checkpoint, down now): %s" % ", ".join(raised)) if raised else ""
        return ("deleted its checkpoint %s (the running config was not rolled back)%s" % (", ".join(gone), up) if gone
                else "marker removed")

    def _raise_left_down(self, name, run):
        """An apply-patch that died part-way (its session lost) leaves the ports GCU took admin down for port-critical
        changes down. Read the ended run's checkpoint (/etc/sonic/checkpoints/<name>.cp.json, generic_updater.py
        FileSystemConfigRollbacker) and its staged patch when still there, and bring back up each port that was admin
        up in the checkpoint, is admin down now and that GCU takes down for that patch (flapping_ports), or, without
        the patch, whose port-critical rows differ from the checkpoint (the change GCU was making); any other port
        admin down now was taken down by someone else and stays down."""
        before = self._json_of("sudo -n cat %s/%s.cp.json" % (CHECKPOINTS, _safe(name)))
        if not isinstance(before, dict):
            return []
        staged = self._json_of("cat /tmp/%s.json-patch" % _safe(run))
        now = self.driver.config(self.io.run("lock", self.driver.show_running))
        flapped = set(flapping_ports(staged, before)) if isinstance(staged, list) else None
        ports = [p for p in sorted(now.get("PORT") or {}, key=lambda p: (len(p), p))
                 if ((before.get("PORT") or {}).get(p) or {}).get("admin_status") == "up"
                 and ((now.get("PORT") or {}).get(p) or {}).get("admin_status") == "down"
                 and (p in flapped if flapped is not None else _critical_rows(before, p) != _critical_rows(now, p))]
        if ports:
            ops = [{"op": "replace", "path": configdb.pointer("PORT", p, "admin_status"), "value": "up"} for p in ports]
            self.io.attempted.extend(configdb.commands(configdb.patch_ops(ops)))
            self.put_file("lock", self.patch_file(), _compact(ops))
            self._ok("lock", "%s apply-patch %s" % (CONFIG, self.patch_file()), note="GCU rejected the port admin-up patch")
        return ports

    # ---- helpers ---------------------------------------------------------------------------------------------
    def _json_of(self, command):
        """The JSON document a shell command prints, or None (not there, not JSON)."""
        status, out = self._shell("lock", command)
        starts = [i for i in (out.find("{"), out.find("[")) if i >= 0]
        if status != 0 or not starts:
            return None
        start = min(starts)
        try:
            return json.loads(out[start:max(out.rfind("}"), out.rfind("]")) + 1])
        except ValueError:
            return None

    @staticmethod
    def _ops_of(cmds):
        """The JSON Patch ops (dicts) of the commands: a driver's Command carries its PatchOp (nos/configdb.py)."""
        return [c.op.patch() if isinstance(c, Command) and c.op is not None else json.loads(c) if isinstance(c, str) else c
                for c in cmds]

    def _image(self, step):
        return read(self.io, self.driver, self.intent, self.sections, step)

    @staticmethod
    def _ignore(img, ops):
        """``-i /ACL_RULE `` while the switch (``img``) holds an ACL rule SONiC's YANG refuses, or when ``ops`` add one
        (only past preflight's opt-in check): see ACL_RULE_PATH; else nothing."""
        adds = any(YANG_REFUSED.match(v) for op in ops for v in _values(op.get("value")))
        held = False
        if img is not None and not adds:
            config = configdb.device_view(img.managed, img.outside)[0]
            held = any(YANG_REFUSED.match(v) for row in (config.get("ACL_RULE") or {}).values() for v in _values(row))
        return "-i %s " % ACL_RULE_PATH if adds or held else ""

    def _device_ops(self, ops, img):
        return configdb.device_patch(ops, *configdb.device_view(img.managed, img.outside), managed=self.driver.config_tables)

    def _checkpoints(self, step):
        """``config list-checkpoints``: a JSON list of names (config/main.py, json.dumps indent 4)."""
        out = self._ok(step, "%s list-checkpoints" % CONFIG, note="config list-checkpoints failed")
        start, end = out.find("["), out.rfind("]")
        if start < 0 or end < start:
            raise StepError(step, "config list-checkpoints", out, "not a JSON list of checkpoints")
        return [n for n in json.loads(out[start:end + 1]) if isinstance(n, str)]


# GCU's patch sorter takes a port admin down around any change to its rows of these tables and brings it back up
# (sonic-utilities generic_config_updater/patch_sorter.py RequiredValueIdentifier, "port-critical" settings;
# RequiredValueMoveExtender): a link flap on every such port, its BGP sessions and hosts included
PORT_CRITICAL = ("BUFFER_PG", "BUFFER_PORT_EGRESS_PROFILE_LIST", "BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_QUEUE",
                 "PORT_QOS_MAP", "QUEUE")


def flapping_ports(ops, config):
    """The ports GCU takes admin down and up again to apply the device patch ``ops`` (dicts, as device_patch gives
    them) on a switch holding ``config``: a port-critical row of the port changes and the port is admin up now."""
    ports = set()
    for op in ops:
        parts = configdb.parts(op["path"])
        if not parts or parts[0] not in PORT_CRITICAL:
            continue
        keys = [parts[1]] if len(parts) > 1 else list((op.get("value") or {}).keys())
        ports.update(k.split("|")[0] for k in keys)
    up = config.get("PORT", {})
    return sorted((p for p in ports if (up.get(p) or {}).get("admin_status") == "up"),
                  key=lambda p: (len(p), p))


# GCU's field-operation checks that hold on every switch, run before anything is sent (sonic-utilities
# generic_config_updater/gu_common.py ConfigWrapper.validate_field_operation, on jsonpatch.from_diff(old, target)):
# these removes are illegal, and `add /PFC_WD` names no field its PFC_WD validator allows (field_operation_validators.py
# rdma_config_update_validator). The HWSKU/ASIC-gated rules need the image's own validator conf and are left to GCU.
ILLEGAL_REMOVE = {
    "/PFC_WD/GLOBAL": "removing the PFC watchdog's GLOBAL row",
    "/PFC_WD/GLOBAL/POLL_INTERVAL": "removing the PFC watchdog's POLL_INTERVAL",
    "/LOOPBACK_INTERFACE/Loopback0": "removing Loopback0",
}


def field_refusal(config, ops):
    """Why GCU's field-operation validation refuses the device patch ``ops`` on ``config`` (None: it does not)."""
    import jsonpatch
    try:
        target = jsonpatch.apply_patch(config, ops)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException):
        return None   # GCU's own simulation fails on it: it says so itself
    for op in jsonpatch.JsonPatch.from_diff(config, target):
        if op["op"] == "remove" and op["path"] in ILLEGAL_REMOVE:
            return ("SONiC's GCU refuses %s (%s: \"Operation: remove is illegal on field\"); stop the watchdog or remove "
                    "the loopback on the switch itself, or keep them in the plan (qos.pfc_watchdog, the underlay section)"
                    % (ILLEGAL_REMOVE[op["path"]], op["path"]))
        if op["op"] == "add" and op["path"] == "/PFC_WD":
            return ("SONiC's GCU refuses to create the PFC_WD table (field_operation_validators: `add /PFC_WD` is illegal "
                    "on every ASIC); start the watchdog on the switch once (`sudo pfcwd start_default` or `sudo pfcwd "
                    "interval <ms>`) or set qos.pfc_watchdog: false")
    return None


def _critical_rows(config, port):
    return [dict((k, v) for k, v in (config.get(t) or {}).items() if k == port or k.startswith(port + "|"))
            for t in PORT_CRITICAL]


def guarded(ops, config):
    """``ops`` preceded by an RFC 6902 ``test`` of the value this run read at every path it replaces or removes (or
    adds over an existing member): GCU simulates the whole patch on the CONFIG_DB it reads when ``apply-patch`` starts
    (generic_updater.py PatchApplier.apply -> PatchWrapper.simulate_patch, ``jsonpatch``; main.py
    validate_patch_format accepts ``test``; the sorter simulates and diffs, so a test op moves nothing), so a value
    someone else changed since this run's read fails the test and GCU changes nothing. It does not cover an edit made
    while GCU applies its sorted changes (ChangeApplier writes whole keys from the config it read at the start)."""
    tests, seen = [], set()
    for op in ops:
        path = op.get("path", "")
        if op.get("op") not in ("replace", "remove", "add") or path in seen:
            continue
        node, found = config, True
        for part in configdb.parts(path):
            if isinstance(node, dict) and part in node:
                node = node[part]
            else:
                found = False
                break
        if found:
            seen.add(path)
            tests.append({"op": "test", "path": path, "value": node})
    return tests + list(ops)


def _compact(ops):
    return json.dumps(ops, sort_keys=True, separators=(",", ":")) + "\n"


def _values(value):
    """Every string inside a JSON Patch value."""
    if isinstance(value, dict):
        return [v for inner in value.values() for v in _values(inner)]
    if isinstance(value, list):
        return [v for inner in value for v in _values(inner)]
    return [value] if isinstance(value, str) else []
