"""A community SONiC switch's login shell, for the commands the community_sonic driver sends (test code, no SSH):
the SSH simulator (simulator.py, nos ``community_sonic``) and the unit tests' fake session both run it.

State (one dict, kept in state.json by the simulator): ``running`` (CONFIG_DB as {TABLE: {key: {field: value}}}),
``startup`` (/etc/sonic/config_db.json), ``checkpoints`` ({name: CONFIG_DB}), ``files`` (the few files the product
writes: lock markers, the patch file and its base64 parts).

What it answers, in the formats of sonic-net/sonic-utilities (commit 691b1bbc, 2026-07-23):
* ``show runningconfiguration all``: show/main.py ``all``: ``json.dumps(config, indent=4)`` plus ``bgpraw`` (FRR's
  running config, a string);
* ``sudo -n config apply-patch F``: config/main.py ``apply_patch`` + generic_config_updater/generic_updater.py
  ``PatchApplier.apply``: the RFC 6902 patch is simulated on the whole CONFIG_DB as GCU read it once at its start
  (the ``jsonpatch`` library, as GCU does), an empty table is refused (EmptyTableError's text), the result is validated
  against SONiC's YANG models (``Given patch will produce invalid config. Error: ...``, patch_sorter.py) before
  anything changes, then applied change by change to GCU's image of that first read, each differing key written whole
  (ChangeApplier, gcu_model.apply_change: a concurrent edit of another field of such a key is reverted), and a fresh
  read is compared with the target (a concurrent edit of any other key fails it); a failure prints ``Failed to apply
  patch due to: ...`` and click's usage + ``Error: ...``, exit status 2;
* ``sudo config interface mtu P N``: config/main.py ``interface mtu`` -> scripts/portconfig ``set_mtu``:
  ``mod_entry("PORT", P, {"mtu": N})`` (one field), silent;
* ``apply-patch`` / ``rollback`` ``-i/--ignore-path /TABLE`` (hidden option): that table left out of the YANG check;
  a rollback is validated like a patch (GCU's replace of the checkpoint);
* ``checkpoint`` / ``rollback`` / ``delete-checkpoint`` / ``list-checkpoints`` (``Checkpoint 'x' does not exist``),
  ``save -y``, ``hostname``; ``config`` without root: ``Root privileges are required for this operation`` (exit 1);
* the Linux commands of the device lock and of the patch file (bash's noclobber text, grep's exit status 2).

The YANG check: Debian's ``yanglint`` on SONiC's own models (configdb_yang.py) when ../shared/oracles is here, else a
subset written from the same models (``subset_errors``: the leafrefs, ranges, patterns and enumerations of the tables
this collection writes), so a fresh checkout's CI still refuses what SONiC refuses in the tables we write.
"""
import base64
import copy
import json
import re
import time

import configdb_yang
import gcu_model
import markers

SUFFIX = " 2>&1; echo AIF-RC=$?"
LOCK_DIR = '"${AIF_LOCK_DIR:-/tmp}"'


class Stop(Exception):
    """Raised by a hook to stop mid-command (the SSH session is dropped there)."""


def usage(command, metavar, message):
    """click's ``ctx.fail`` answer (exit status 2)."""
    return "Usage: config %s [OPTIONS] %s\nTry \"config %s -h\" for help.\n\nError: %s\n" % (command, metavar, command, message)


def subset_errors(config):
    """SONiC YANG checks on the tables this collection writes (sonic-port, sonic-port-qos-map, sonic-queue,
    sonic-scheduler, sonic-wred-profile, sonic-buffer-pg, sonic-pfcwd, sonic-acl + sonic-types packet_action):
    a list of messages, empty when none fails."""
    errors = []
    ports = set(config.get("PORT", {}))

    def ref(table, name, where):
        if name not in config.get(table, {}):
            errors.append("%s: leafref %s %r: no target instance" % (where, table, name))
    for port, fields in config.get("PORT", {}).items():
        mtu = fields.get("mtu")
        if mtu is not None and not (mtu.isdigit() and 1 <= int(mtu) <= 9216):
            errors.append("PORT|%s mtu %r: value is out of range 1..9216" % (port, mtu))
    maps = {"dscp_to_tc_map": "DSCP_TO_TC_MAP", "tc_to_queue_map": "TC_TO_QUEUE_MAP", "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
            "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE", "dot1p_to_tc_map": "DOT1P_TO_TC_MAP"}
    for key, fields in config.get("PORT_QOS_MAP", {}).items():
        if key != "global" and key not in ports:
            errors.append("PORT_QOS_MAP|%s: leafref PORT: no target instance" % key)
        for field, table in maps.items():
            if field in fields:
                ref(table, fields[field], "PORT_QOS_MAP|%s %s" % (key, field))
        for field in ("pfc_enable", "pfcwd_sw_enable"):
            if field in fields and not re.match(r"^([0-7](,[0-7])*)?$", fields[field]):
                errors.append("PORT_QOS_MAP|%s %s %r: does not match the pattern [0-7](,[0-7])*" % (key, field, fields[field]))
    for key, fields in config.get("QUEUE", {}).items():
        if key.split("|")[0] not in ports:
            errors.append("QUEUE|%s: leafref PORT: no target instance" % key)
        if "scheduler" in fields:
            ref("SCHEDULER", fields["scheduler"], "QUEUE|%s scheduler" % key)
        if "wred_profile" in fields:
            ref("WRED_PROFILE", fields["wred_profile"], "QUEUE|%s wred_profile" % key)
    for name, fields in config.get("SCHEDULER", {}).items():
        if fields.get("type") not in (None, "DWRR", "WRR", "STRICT"):
            errors.append("SCHEDULER|%s type %r: not in the enumeration DWRR/WRR/STRICT" % (name, fields.get("type")))
    for name, fields in config.get("WRED_PROFILE", {}).items():
        ecn = fields.get("ecn")
        if ecn is not None and ecn not in ("ecn_none", "ecn_green", "ecn_yellow", "ecn_red", "ecn_green_yellow",
                                           "ecn_green_red", "ecn_yellow_red", "ecn_all"):
            errors.append("WRED_PROFILE|%s ecn %r: not in the enumeration" % (name, ecn))
    for key, fields in config.get("BUFFER_PG", {}).items():
        if key.split("|")[0] not in ports:
            errors.append("BUFFER_PG|%s: leafref PORT: no target instance" % key)
        if fields.get("profile") not in (None, "NULL"):
            ref("BUFFER_PROFILE", fields["profile"], "BUFFER_PG|%s profile" % key)
    for key, fields in config.get("PFC_WD", {}).items():
        if key != "GLOBAL" and key not in ports:
            errors.append("PFC_WD|%s: leafref PORT: no target instance" % key)
        if fields.get("action") not in (None, "drop", "forward", "alert"):
            errors.append("PFC_WD|%s action %r: not in the enumeration drop/forward/alert" % (key, fields.get("action")))
    for key, fields in config.get("ACL_RULE", {}).items():
        ref("ACL_TABLE", key.split("|")[0], "ACL_RULE|%s" % key)
        action = fields.get("PACKET_ACTION")
        if action is not None and action not in ("DROP", "ACCEPT", "FORWARD", "REDIRECT", "DO_NOT_NAT", "DISABLE_TRIM"):
            errors.append("ACL_RULE|%s PACKET_ACTION %r: Invalid value %r in \"PACKET_ACTION\" element "
                          "(enumeration sonic-types packet_action)" % (key, action, action))
    return errors


def yang_errors(config):
    """(checker, errors) for a whole CONFIG_DB: yanglint on SONiC's models when they are here, else the subset.
    Tables the converter does not map (none of the product's) are left to the subset."""
    if configdb_yang.available() is None:
        known = dict((t, rows) for t, rows in config.items() if t in configdb_yang.SPEC)
        ok, message = configdb_yang.validate(known)
        return "yanglint", ([] if ok else [message])
    return "subset", subset_errors(config)


class SonicShell(object):
    """One switch's shell. ``state``: the dict described above; ``persist()``: called after every change."""

    def __init__(self, state, persist=lambda: None, clock=time.time, validate=yang_errors, user="admin", tty=1, record=None):
        self.state, self.persist, self.clock, self.validate = state, persist, clock, validate
        for key, empty in (("running", {}), ("startup", {}), ("checkpoints", {}), ("files", {}), ("acct", [])):
            state.setdefault(key, copy.deepcopy(empty))
        self.user, self.tty = user, tty
        # the syslog: a record appended to state["acct"] as [device time, line, sequence] (the SSH simulator: the
        # device's one record, Device.record)
        self.record = record or (lambda text: state["acct"].append([self.clock(), text, len(state["acct"]) + 1]))
        self.checked = []   # which checker judged each apply-patch (yanglint / subset), for the tests' figures

    @property
    def running(self):
        return self.state["running"]

    def show_running(self):
        shown = dict(self.running, bgpraw="Building configuration...\n\nCurrent configuration:\n!\nend\n")
        return json.dumps(shown, indent=4) + "\n"

    # ---- one line -------------------------------------------------------------------------------------------
    def line(self, line, on_op=None, reject=False):
        """The answer to one shell line (None: not a command of this shell). ``on_op(i)`` is called after the i-th
        op of an apply-patch (it may raise Stop: the session drops there); ``reject``: apply-patch fails after
        applying half of its ops (a change step refused mid-way)."""
        if line == "show runningconfiguration all":
            return self.show_running()
        if not line.endswith(SUFFIX):   # an engineer's line, without the product's exit-status marker
            rc, out = self.command(line)
            return None if rc == 127 else out
        cmd = line[:-len(SUFFIX)]
        now = ""
        if cmd.startswith("echo AIF-NOW=$(date +%s); "):
            cmd, now = cmd[len("echo AIF-NOW=$(date +%s); "):], "AIF-NOW=%d\n" % int(self.clock())
        rc, out = self.command(cmd, on_op, reject)
        return "%s%s%sAIF-RC=%d" % (now, out, "" if not out or out.endswith("\n") else "\n", rc)

    def sudo_logged(self, cmd):
        """sudo's syslog record of a command it runs (before it runs), in SONiC's rsyslog file format (rsyslog.conf.j2
        template SONiCFileFormat: time with microseconds, host, severity, tag): ``Jan 22 17:34:44.534159 <host> NOTICE
        sudo:    admin : TTY=pts/2 ; PWD=/home/admin ; USER=root ; COMMAND=/usr/bin/docker ps`` (a line a SONiC user
        quoted, sonic-net/sonic-buildimage pull request 17874). The commands' directory (/usr/local/bin for
        sonic-utilities' console scripts) is unverified; the product reads the command's base name."""
        argv = cmd.split()[1:]
        if argv[:1] == ["-n"]:
            argv = argv[1:]
        if not argv:
            return
        where = {"config": "/usr/local/bin/", "grep": "/usr/bin/", "cat": "/usr/bin/"}.get(argv[0], "/usr/bin/")
        now = self.clock()
        host = self.running.get("DEVICE_METADATA", {}).get("localhost", {}).get("hostname", "sonic")
        self.record("%s.%06d %s NOTICE sudo:    %s : TTY=pts/%s ; PWD=/home/%s ; USER=root ; COMMAND=%s%s" % (
            time.strftime("%b %e %H:%M:%S", time.gmtime(now)), int(now % 1 * 1e6), host, self.user, self.tty, self.user,
            where, " ".join(argv)))

    def command(self, cmd, on_op=None, reject=False):
        files = self.state["files"]
        if cmd.startswith("sudo "):
            self.sudo_logged(cmd)
        if cmd == "echo AIF-CLOCK=$(date +%Y-%m-%dT%H:%M:%S)":   # coreutils date: the device's wall clock (UTC here)
            return 0, "AIF-CLOCK=" + time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.clock())) + "\n"
        m = re.match(r"^sudo -n grep -h -s -F ' sudo: ' ((?:/var/log/\S+ ?)+)$", cmd)
        if m:   # rsyslog writes sudo's (authpriv) records to one of these files: here one log holds them
            lines = [rec[1] for rec in self.state["acct"] if " sudo: " in rec[1]]
            return (0 if lines else 1), "".join(line + "\n" for line in lines)
        m = re.match(r"^\( set -C; printf '%s\\n' '([^']*)' > (\S+) \)$", cmd)
        if m:
            path = m.group(2).replace(LOCK_DIR, "/tmp")
            if path in files:
                return 1, "bash: %s: cannot overwrite existing file\n" % path
            files[path] = m.group(1) + "\n"
            self.persist()
            return 0, ""
        listed = markers.listing(cmd, files, LOCK_DIR)
        if listed is not None:
            return 0, listed
        m = re.match(r"^rm -f (.+)$", cmd)
        if m:
            for path in m.group(1).split():
                files.pop(path.replace(LOCK_DIR, "/tmp"), None)
            self.persist()
            return 0, ""
        m = re.match(r"^printf '%s' '([^']*)' (>>?) (\S+)$", cmd)
        if m:
            files[m.group(3)] = (files.get(m.group(3), "") if m.group(2) == ">>" else "") + m.group(1)
            self.persist()
            return 0, ""
        m = re.match(r"^base64 -d (\S+) > (\S+) && rm -f (\S+)$", cmd)
        if m:
            if m.group(1) not in files:
                return 1, "base64: %s: No such file or directory\n" % m.group(1)
            files[m.group(2)] = base64.b64decode(files.pop(m.group(1))).decode("utf-8")
            self.persist()
            return 0, ""
        m = re.match(r"^test -e (\S+) -o -e (\S+)$", cmd)
        if m:
            return (0 if m.group(1) in files or m.group(2) in files else 1), ""
        m = re.match(r"^cat (/tmp/\S+)$", cmd)
        if m:
            if m.group(1) not in files:
                return 1, "cat: %s: No such file or directory\n" % m.group(1)
            return 0, files[m.group(1)]
        m = re.match(r"^sudo -n cat /etc/sonic/checkpoints/(\S+)\.cp\.json$", cmd)
        if m:   # generic_updater.py FileSystemConfigRollbacker: the checkpoint as a JSON file (Util.save_json_file)
            if m.group(1) not in self.state["checkpoints"]:
                return 1, "cat: /etc/sonic/checkpoints/%s.cp.json: No such file or directory\n" % m.group(1)
            return 0, json.dumps(self.state["checkpoints"][m.group(1)], indent=4) + "\n"
        m = re.match(r"^(sudo (?:-n )?)?config (.*)$", cmd)
        if m:
            if not m.group(1):
                return 1, "Root privileges are required for this operation\n"
            return self.config(m.group(2).split(), on_op, reject)
        return 127, "-bash: %s: command not found\n" % cmd.split()[0]

    # ---- sonic-utilities `config` -----------------------------------------------------------------------------
    def config(self, argv, on_op, reject):
        cps = self.state["checkpoints"]
        sub, args = argv[0], argv[1:]
        ignored = []   # apply-patch / rollback ``-i/--ignore-path P``: P left out of the YANG check (hidden option)
        while sub in ("apply-patch", "rollback") and len(args) > 2 and args[0] in ("-i", "--ignore-path"):
            ignored.append(args[1])
            args = args[2:]
        if sub == "checkpoint" and len(args) == 1:
            cps[args[0]] = copy.deepcopy(self.running)   # an existing name is overwritten (no existence check)
            self.persist()
            return 0, "Checkpoint created successfully.\n"
        if sub in ("rollback", "delete-checkpoint") and len(args) == 1:
            if args[0] not in cps:
                fail = "Failed to rollback config" if sub == "rollback" else "Failed to delete config checkpoint"
                return 2, fail + "\n" + usage(sub, "CHECKPOINT_NAME", "Checkpoint '%s' does not exist" % args[0])
            if sub == "rollback":
                # GCU's rollback is a `config replace` by the checkpoint: the target must pass the YANG check
                _checker, errors = self.validate(_without(cps[args[0]], ignored))
                if errors:
                    return 2, "Failed to rollback config\n" + usage(
                        sub, "CHECKPOINT_NAME", "Given patch will produce invalid config. Error: %s" % "; ".join(errors))
                # a replace: the diff to the checkpoint, sorted as a patch (port-critical moves included)
                import jsonpatch
                patch = list(jsonpatch.JsonPatch.from_diff(self.running, cps[args[0]]))
                rc, out = self._apply_changes(gcu_model.sort(self.running, patch), copy.deepcopy(self.running), cps[args[0]],
                                              on_op, False, sub, "CHECKPOINT_NAME", "Config rolled back successfully.")
                return rc, out if rc == 0 else "Failed to rollback config\n" + out.split("\n", 1)[1]
            del cps[args[0]]
            self.persist()
            return 0, "Checkpoint deleted successfully.\n"
        if sub == "list-checkpoints" and not args:
            return 0, json.dumps(sorted(cps), indent=4) + "\n"
        if sub == "save" and args == ["-y"]:
            self.state["startup"] = copy.deepcopy(self.running)
            self.persist()
            return 0, "Running command: /usr/local/bin/sonic-cfggen -d --print-data > /etc/sonic/config_db.json\n"
        if sub == "hostname" and len(args) == 1:
            self.running.setdefault("DEVICE_METADATA", {}).setdefault("localhost", {})["hostname"] = args[0]
            self.persist()
            return 0, ""
        if sub == "interface" and len(args) == 3 and args[0] == "mtu":
            # scripts/portconfig: "Invalid port" for a name PORT lacks (raised: a traceback, exit status 1), else
            # mod_entry of the one field (the other fields of the key stay)
            port, mtu = args[1], args[2]
            if port not in self.running.get("PORT", {}) or not mtu.isdigit():
                return 1, "Exception: Invalid port %s\n" % port
            self.running["PORT"][port]["mtu"] = mtu
            self.persist()
            return 0, ""
        if sub == "apply-patch" and len(args) == 1:
            return self.apply_patch(args[0], on_op, reject, ignored)
        return 2, usage(sub, "", "No such command '%s'." % sub)

    def apply_patch(self, path, on_op, reject, ignored=()):
        """GCU's PatchApplier.apply (generic_updater.py:106-160) as gcu_model.py models it: CONFIG_DB read once
        (l.113), the patch simulated on that read (l.117: its RFC 6902 ``test`` ops are judged against it), the
        field-operation validators, empty tables, YANG (the sorter's reads, patch_sorter.py:2402, 2660, fall in the same
        instant here), then the sorted changes one by one, each applied to GCU's own image of that first read and written
        whole key by key (gcu_model.apply_change), buffermgrd after each change (traditional model), and the final
        comparison of a fresh read with the target without the backend tables (l.152-158)."""
        import jsonpatch
        try:
            if path not in self.state["files"]:
                raise ValueError("[Errno 2] No such file or directory: '%s'" % path)
            ops = json.loads(self.state["files"][path])
            old_config = copy.deepcopy(self.running)   # generic_updater.py:113 get_config_db_as_json: the one read
            target = jsonpatch.apply_patch(old_config, ops)   # l.117 PatchWrapper.simulate_patch
            refused = gcu_model.field_refusal(old_config, target)
            if refused:
                raise ValueError(refused)
            empty = sorted(t for t, rows in target.items() if not rows)
            if empty:
                raise ValueError("localhost: given patch is not valid because it will result in empty tables which is not "
                                 "allowed in ConfigDb. Table%s: %s" % ("s" if len(empty) != 1 else "", ", ".join(empty)))
            checker, errors = self.validate(_without(target, ignored))
            self.checked.append(checker)
            if errors:
                raise ValueError("Given patch will produce invalid config. Error: %s" % "; ".join(errors))
        except Exception as exc:  # noqa: BLE001 - GCU reports every failure the same way
            return 2, "Failed to apply patch due to: %s\n%s" % (exc, usage("apply-patch", "PATCH_FILE_PATH", exc))
        return self._apply_changes(gcu_model.sort(old_config, ops), old_config, target, on_op, reject, "apply-patch",
                                   "PATCH_FILE_PATH", "Patch applied successfully.")

    def _apply_changes(self, changes, old_config, target, on_op, reject, command, metavar, success):
        """generic_updater.py:144-158: ``current_config = old_config``, then ``current_config =
        changeapplier.apply(current_config, change)`` for each change: the image GCU read at the start, never CONFIG_DB
        re-read (gcu_model.apply_change). Each op is a change of its own, as upstream's sorter makes them (one
        ``JsonChange(move.get_jsonpatch())`` per move, patch_sorter.py:2674); ``on_op(i)`` runs after the i-th is
        written, where GCU sleeps 1 s (change_applier.py:173) and other writers of CONFIG_DB go on."""
        log = ["Patch Applier: localhost: Patch application starting.",
               "Patch Applier: localhost: applying %d change%s in order:" % (len(changes), "s" if len(changes) != 1 else "")]
        total = sum(len(c) for c in changes)
        stop = total // 2 if reject else None
        image = copy.deepcopy(old_config)
        i = 0
        for change in changes:
            for op in change:
                i += 1
                if stop is not None and i > stop:
                    return 2, "Failed to apply patch due to: change %d failed in orchagent\n%s" % (
                        i, usage(command, metavar, "change %d failed in orchagent" % i))
                if op["op"] == "remove" and op["path"].count("/") == 1 and op["path"][1:] not in image:
                    continue   # the model's whole-table remove after its keys: redis dropped the emptied table already
                image = gcu_model.apply_change(self.running, image, [op])
                self.persist()
                if op["path"].endswith("/admin_status") and op.get("value") == "down":
                    self.state.setdefault("flaps", []).append(op["path"].split("/")[2])
                if on_op is not None:
                    on_op(i)
            if self.state.get("pg_profile_lookup"):
                new = copy.deepcopy(self.running)
                if gcu_model.buffermgrd(new, self.state["pg_profile_lookup"]):
                    self._set(new)
            log.append("Patch Applier:   * %s" % json.dumps(change))
        if not gcu_model.same(self.running, target):   # generic_updater.py:154-158: a fresh read against the target
            message = "localhost: after applying patch to config, there are still some parts not updated"
            return 2, "Failed to apply patch due to: %s\n%s" % (message, usage(command, metavar, message))
        return 0, "\n".join(log + [success]) + "\n"

    def _set(self, config):
        self.running.clear()
        self.running.update(config)
        self.persist()


def _without(config, ignored):
    """``config`` without the tables named by ``-i /TABLE`` (IgnorePathsFromYangConfigSplitter: those are split off
    the YANG-validated part; only whole tables are modelled here)."""
    out = dict(config)
    for pointer in ignored:
        out.pop(pointer.strip("/").split("/")[0], None)
    return out


def seed(name, intent):
    """A community SONiC switch before this collection manages it: DEVICE_METADATA (sonic-device_metadata), its
    ports with lanes/speed/alias (port_config.ini's columns), MTU 9100 (the default in sonic-port.yang's
    description), the default QoS objects of qos_config.j2 (the AZURE DSCP map, scheduler.0 on queue 1) and
    BGP_DEVICE_GLOBAL|STATE as SONiC's config_db.json carries it (tsa_enabled false: not traffic-shifted), and the
    PFC watchdog's global row."""
    ports = [d["port"] for d in intent.get("downlinks") or []] + [u["port"] for u in intent.get("uplinks") or []]
    config = {
        "DEVICE_METADATA": {"localhost": {"hostname": name, "hwsku": "Force10-S6000", "platform": "x86_64-dell_s6000_s1220-r0",
                                          "mac": "52:54:00:12:34:56", "type": "LeafRouter",
                                          # init_cfg.json.j2 on an image built without SONIC_BUFFER_MODEL=dynamic
                                          "buffer_model": "traditional"}},
        "PORT": {},
        # the traffic-shift state SONiC images carry (sonic-bgp-device-global.yang, default false)
        "BGP_DEVICE_GLOBAL": {"STATE": {"tsa_enabled": "false", "wcmp_enabled": "false", "idf_isolation_state": "unisolated"}},
        "DSCP_TO_TC_MAP": {"AZURE": dict((str(d), "1") for d in range(64))},
        "SCHEDULER": {"scheduler.0": {"type": "DWRR", "weight": "14"}},
        "QUEUE": {},
        # the watchdog's global row as `pfcwd interval 100` writes it (sonic-utilities pfcwd/main.py interval():
        # mod_entry PFC_WD|GLOBAL POLL_INTERVAL): GCU refuses to create the PFC_WD table on any ASIC (gcu_model.py),
        # so a switch whose watchdog this collection manages holds this table already; the operator started it with
        # the plan's poll interval (another value is a takeover of the switch's setting: test_gcu_public.py)
        "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "100"}},
    }
    for p in ports:
        lane = int(re.sub(r"\D", "", p) or 0)
        config["PORT"][p] = {"lanes": ",".join(str(lane + i) for i in range(4)), "speed": "100000", "alias": "fortyGigE0/%d" % lane,
                             "admin_status": "up", "mtu": "9100", "description": "aifabric %s" % p}
        config["QUEUE"]["%s|1" % p] = {"scheduler": "scheduler.0"}
    return config
