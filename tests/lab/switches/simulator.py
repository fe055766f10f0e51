"""Stateful SSH switch simulator (test code). One process per device:

    simulator.py --name leaf1 --nos eos --port 2202 --state-dir /tmp/aifabric-lab/leaf1 --host-key KEY

The running config is a tree that changes only through commands listed in grammar.py (taken from
the vendor references cited in docs/switch-commands-sources.md); anything else is answered with the
NOS's error text. Each NOS's transaction mechanism is modelled (EOS configure session + commit
timer, NX-OS checkpoint/rollback, NVUE pending revision + apply/detach, klish immediate apply).

Fault injection, read at each new SSH session from <state-dir>/faults.json:
    {"drop_after": k}      close the session right after the k-th config command (one shot)
    {"reject": "regex"}    answer matching config commands with the NOS's error text
    {"delay": 0.05}        sleep before every answer
    {"reject_skip": n}     with "reject": let the first n matching commands through (reject mid-batch)
    {"drop_on": {"re": "^commit", "when": "before"|"after"}}
                           close the session when a matching line arrives, before or after executing it
    {"down_for": 5}        after any drop, refuse new SSH sessions for that many seconds (no reconnect)
    {"slow": {"re": "^show running", "secs": 12, "skip": 1}}
                           sleep before answering the (skip+1)-th matching line (once); a list of such
                           specs sleeps at each; the state dir gets `slowed-<index>` when a sleep starts
    {"prompt_on": "regex"} answer a matching line with an unexpected `Proceed? [y/N]` and take the next
                           line as the answer (the command is not executed)
    {"timer_secs": 1}      EOS: a commit timer fires after this many seconds whatever was asked
    {"no_records": true}   AsterNOS: this session's switch keeps no klish command log and no sudo record
Every key but "reject", "reject_skip", "delay" and "timer_secs" is consumed by the session that reads it.
Counters (PFC pause, ECN marks, queue drops, PFC watchdog events) are injected with <state-dir>/counters.json,
read at each counter show command (counters_show.py).
"""

import argparse
import copy
import difflib
import json
import os
import re
import socket
import sys
import threading
import time

import markers

import paramiko

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grammar  # noqa: E402
import counters_show  # noqa: E402  (counter show commands and their injection file, counters.json)
import configdb_sim  # noqa: E402  (community SONiC: CONFIG_DB, GCU apply-patch/checkpoint/rollback)
import ppd_show  # noqa: E402  (PBR state show commands: switch_validate's ppd_paths on EOS, NX-OS, NVUE, SONiC)
import bgp_show  # noqa: E402  (BGP summary show commands: switch_validate's bgp_sessions on EOS, NX-OS, NVUE, SONiC)
from nvue_ranges import compress_commands  # noqa: E402

USER, PASSWORD = "admin", "admin"


class Dropped(Exception):
    pass


# ----------------------------------------------------------------------------- config trees
def new_node(line):
    return [line, []]


def tree_lines(nodes, indent, depth=0):
    out = []
    for line, children in nodes:
        out.append(" " * (indent * depth) + line)
        out.extend(tree_lines(children, indent, depth + 1))
        if depth == 0 and indent != 2:
            out.append("!")
    return out


def load_tree(text):
    root = []
    stack = [(-1, root)]
    for raw in text.splitlines():
        s = raw.strip()
        if not s or s == "!":
            continue
        ind = len(raw) - len(raw.lstrip())
        while ind <= stack[-1][0]:
            stack.pop()
        node = new_node(s)
        stack[-1][1].append(node)
        stack.append((ind, node[1]))
    return root


def pfc_frames(intf):
    """Simulated PFC pause counters: non-zero (and port-specific) only where PFC is enabled."""
    on = any(c[0].startswith("priority-flow-control mode on") or c[0] == "priority-flow-control on" for c in intf[1])
    num = int(re.findall(r"\d+", intf[0])[-1])
    return (100 + num, 200 + num) if on else (0, 0)


def _stamp(path_or_file):
    """Identity of one written version of a file: (inode, size, mtime ns); None when it is missing."""
    try:
        st = os.fstat(path_or_file.fileno()) if hasattr(path_or_file, "fileno") else os.stat(path_or_file)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class Device(object):
    def __init__(self, name, nos, state_dir):
        self.name, self.nos, self.state_dir = name, nos, state_dir
        self.lock = threading.RLock()
        self.indent = {"eos": 3, "nxos": 2}.get(nos, 1)
        self.timer = None
        self.reload()

    def reload(self):
        """Re-read state.json when someone else wrote it (the lab tooling resets a device between sessions).

        Only then: a login must not replace the config nodes a session typing in config mode holds (its
        ``interface X`` context is a node of the running tree); re-reading the file this process wrote itself
        would orphan that node, and the session's next line (``mtu 9100``) would land in a node no longer in
        the running config (the NX-OS drain-kill flake: a verify read back the old MTU)."""
        path = os.path.join(self.state_dir, "state.json")
        if getattr(self, "written", None) is not None and _stamp(path) == self.written:
            return
        with open(path) as fh:
            st = json.load(fh)
            self.written = _stamp(fh)
        # tree (CLI) or list of nv paths (nvue); updated in place: a session typing config meanwhile keeps
        # editing the device's one running config, not a copy that a new login replaced
        if isinstance(getattr(self, "running", None), list):
            self.running[:] = st["running"]
        elif isinstance(getattr(self, "running", None), dict):   # CONFIG_DB (and AsterNOS REST): one object per device
            self.running.clear()
            self.running.update(st["running"])
        else:
            self.running = st["running"]
        self.startup = st.get("startup", copy.deepcopy(self.running))
        self.checkpoints = st.get("checkpoints", {})
        self.pending = st.get("pending")      # nvue pending revision (survives sessions, like NVUE)
        self.revision = st.get("revision", 1)
        self.config_entries = st.get("config_entries", 0)
        self.sessions = st.get("sessions", {})   # EOS configuration sessions: name -> state
        self.files = st.get("files", {})         # Linux shell: the few files the product's lock markers use
        # the NOS's record of who typed what (NX-OS `show accounting log`, EOS command accounting in `show logging`)
        self.acct = st.get("acct", [])   # [at, text, sequence number]
        self.acct_seq = st.get("acct_seq", 0)   # the last record's sequence number (never reused when trimmed)
        # EOS: the config of each pending session (kept across SSH sessions of this process, like EOS does)
        self.session_trees = {k: v for k, v in getattr(self, "session_trees", {}).items() if k in self.sessions}

    def entered(self):
        self.config_entries += 1
        self.persist()

    def save(self):
        """The NOS's save: running config becomes the startup config."""
        self.startup = copy.deepcopy(self.running)
        self.persist()

    def persist(self):
        st = {"running": self.running, "startup": self.startup, "checkpoints": self.checkpoints,
              "pending": self.pending, "revision": self.revision,
              "config_entries": self.config_entries, "sessions": self.sessions, "files": self.files,
              "acct": self.acct, "acct_seq": self.acct_seq}
        tmp = os.path.join(self.state_dir, "state.json.tmp")
        with open(tmp, "w") as fh:
            json.dump(st, fh, indent=1)
            fh.flush()
            self.written = _stamp(fh)
        os.replace(tmp, os.path.join(self.state_dir, "state.json"))

    def faults(self):
        path = os.path.join(self.state_dir, "faults.json")
        try:
            with open(path) as fh:
                f = json.load(fh)
        except (IOError, ValueError):
            return {}
        keep = ("reject", "reject_skip", "delay", "timer_secs", "clock_offset")
        if any(k not in keep for k in f):  # one shot: consumed by the session that reads it
            with open(path, "w") as fh:
                json.dump({k: v for k, v in f.items() if k in keep}, fh)
        return f

    def down(self):
        try:
            with open(os.path.join(self.state_dir, "down_until")) as fh:
                return time.time() < float(fh.read())
        except (IOError, ValueError):
            return False

    def clock_offset(self):
        """Seconds this device's clock is ahead of the machine's (fault ``clock_offset``)."""
        return float(self.faults().get("clock_offset", 0))

    def show_clock(self):
        """`show clock` as EOS and NX-OS print it (ntc-templates arista_eos/cisco_nxos show_clock raw fixtures)."""
        now = time.gmtime(time.time() + self.clock_offset())
        if self.nos == "eos":
            return time.strftime("%a %b %d %H:%M:%S %Y", now) + "\ntimezone is UTC\n"
        return time.strftime("%H:%M:%S", now) + ".000 UTC " + time.strftime("%a %b %d %Y", now) + "\n"

    def now(self):
        """The device's clock (epoch, with the fault ``clock_offset``)."""
        return time.time() + self.clock_offset()

    def record(self, text):
        """One record in the NOS's accounting log: kept in this process (every session of the device shares it) and
        written with the state at its next change; the last 1000 (a switch's log buffer is bounded too), each with
        its sequence number (NX-OS prints it with `start-seqnum`)."""
        self.acct_seq += 1
        self.acct.append([self.now(), text, self.acct_seq])
        del self.acct[:-1000]

    def go_down(self, secs):
        with open(os.path.join(self.state_dir, "down_until"), "w") as fh:
            fh.write(str(time.time() + float(secs)))


def shell_command(dev, line):
    """The Linux shell under NVUE / SONiC / AsterNOS, for the only commands the product sends there
    (device lock markers, `nv` aside): `( set -C; printf .. > F )`, the `for f in GLOB; ... printf 'AIF-LOCK ..'`
    listing, `rm -f F`, each with ` 2>&1; echo AIF-RC=$?`. Answers as bash does (noclobber's refusal text; the
    listing was run in real bash on names with '.', quotes and spaces, and on empty files:
    tests/unit/nos/test_devicelock.py runs it).
    Returns None for any other command."""
    m = re.match(r"^(.*) 2>&1; echo AIF-RC=\$\?$", line)
    if not m:
        return None
    cmd, now = m.group(1), ""
    if cmd.startswith("echo AIF-NOW=$(date +%s); "):   # the device's clock: this simulator's
        cmd, now = cmd[len("echo AIF-NOW=$(date +%s); "):], "AIF-NOW=%d\n" % int(time.time() + dev.clock_offset())
    if cmd == "echo AIF-CLOCK=$(date +%Y-%m-%dT%H:%M:%S)":   # the device's wall clock (UTC here)
        return "AIF-CLOCK=%s\nAIF-RC=0" % time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + dev.clock_offset()))
    lock = re.match(r"^\( set -C; printf '%s\\n' '([^']*)' > (\S+) \)$", cmd)
    if lock:
        path = lock.group(2).replace('"${AIF_LOCK_DIR:-/tmp}"', "/tmp")
        if path in dev.files:
            return "bash: %s: cannot overwrite existing file\nAIF-RC=1" % path
        dev.files[path] = lock.group(1) + "\n"
        dev.persist()
        return "AIF-RC=0"
    listed = markers.listing(cmd, dev.files, '"${AIF_LOCK_DIR:-/tmp}"')
    if listed is not None:
        return now + listed + "AIF-RC=0"
    rm = re.match(r"^rm -f (\S+)$", cmd)
    if rm:
        path = rm.group(1).replace('"${AIF_LOCK_DIR:-/tmp}"', "/tmp")
        if path in dev.files and "owner=" in dev.files[path] and "owner=admin" not in dev.files[path]:
            # another login user's file in the sticky /tmp (coreutils' text)
            return "rm: cannot remove '%s': Operation not permitted\nAIF-RC=1" % path
        dev.files.pop(path, None)
        dev.persist()
        return "AIF-RC=0"
    return None


# ----------------------------------------------------------------------------- CLI sessions
TTYS = []   # terminals handed out by this simulator process


class Session(object):
    """One interactive shell on one device."""

    def __init__(self, dev, chan):
        self.dev, self.chan = dev, chan
        self.f = dev.faults()
        self.config_count = 0
        self.closed = False
        self.rejects_seen = 0
        self.slow_seen = 0
        self.eat_next = False
        self.quiet = False
        self.confirm = False   # a save asked "[y/N]": the next line answers it
        TTYS.append(1)
        self.tty = len(TTYS)   # the session's terminal (pts/N, vtyN) in the NOS's accounting record

    def ask_save(self, question):
        """A save that asks first (AsterNOS klish `write`): the question waits on its line without a prompt, and
        the next line answers it (answer_save)."""
        self.confirm = self.quiet = True
        return question

    def answer_save(self, line):
        """The answer to ask_save's question: y/yes saves, anything else leaves the startup config as it was."""
        self.confirm = False
        if line.lower().startswith("y"):
            self.dev.save()
        return ""

    def write(self, text):
        if self.f.get("delay"):
            time.sleep(float(self.f["delay"]))
        self.chan.sendall(text.replace("\n", "\r\n").encode())

    def drop(self):
        if self.f.get("down_for"):
            self.dev.go_down(self.f["down_for"])
        raise Dropped()

    def count_config(self):
        self.config_count += 1
        if self.f.get("drop_after") and self.config_count >= int(self.f["drop_after"]):
            self.drop()

    def rejected(self, line):
        if not (self.f.get("reject") and re.search(self.f["reject"], line)):
            return False
        self.rejects_seen += 1
        return self.rejects_seen > int(self.f.get("reject_skip", 0))

    def slow_down(self, line):
        """Fault ``slow``: one spec or a list; each sleeps once, before its (skip+1)-th matching line, and first
        writes ``slowed-<index>`` in the state dir so a test acts at that moment instead of guessing a sleep."""
        slow = self.f.get("slow")
        specs = slow if isinstance(slow, list) else [slow] if slow else []
        if not isinstance(self.slow_seen, dict):
            self.slow_seen = {}
        for i, spec in enumerate(specs):
            if spec.get("re") and re.search(spec["re"], line):
                self.slow_seen[i] = self.slow_seen.get(i, 0) + 1
                if self.slow_seen[i] == int(spec.get("skip", 0)) + 1:
                    with open(os.path.join(self.dev.state_dir, "slowed-%d" % i), "w") as fh:
                        fh.write(line)
                    time.sleep(float(spec["secs"]))

    def dispatch(self, line):
        """Faults that act on whole lines, then the NOS's own handler."""
        if self.eat_next:   # the unexpected confirmation takes this line as its answer
            self.eat_next = False
            return ""
        drop = self.f.get("drop_on")
        if drop and re.search(drop["re"], line) and drop.get("when", "before") == "before":
            self.drop()
        if self.f.get("prompt_on") and re.search(self.f["prompt_on"], line):
            self.f = dict(self.f, prompt_on=None)
            self.eat_next, self.quiet = True, True
            return "Proceed? [y/N] "
        out = self.answer_save(line) if self.confirm else self.handle(line)
        if drop and re.search(drop["re"], line):
            self.drop()
        return out

    def run(self):
        self.write(self.banner())
        self.write(self.prompt())
        buf = ""
        while True:
            data = self.chan.recv(4096)
            if not data:
                return
            echo = ""  # echo a received chunk in one packet, not one SSH packet per character
            for ch in data.decode("utf-8", "replace"):
                if ch in "\r\n":
                    if ch == "\n" and buf == "" and getattr(self, "_last_cr", False):
                        self._last_cr = False
                        continue
                    self._last_cr = ch == "\r"
                    if echo:
                        self.chan.sendall(echo.encode())
                        echo = ""
                    self.write("\n")
                    line, buf = buf, ""
                    self.slow_down(line.strip())   # outside the device lock: other sessions go on
                    with self.dev.lock:
                        out = self.dispatch(line.strip())
                    if out is None:
                        return
                    if self.quiet:   # a question waits on the same line, without a prompt
                        self.quiet = False
                        self.write(out)
                        continue
                    if out:
                        self.write(out if out.endswith("\n") else out + "\n")
                    self.write(self.prompt())
                elif ch in "\x7f\x08":
                    buf = buf[:-1]
                else:
                    buf += ch
                    echo += ch
            if echo:
                self.chan.sendall(echo.encode())

    def banner(self):
        return ""


class CliSession(Session):
    GRAMMAR = {}
    error_text = "% Invalid input"
    ctx_names = {}

    def __init__(self, dev, chan):
        Session.__init__(self, dev, chan)
        self.mode = "exec"
        self.stack = []           # [(node, ctx)] path from root in config mode
        self.target = None        # tree being edited (running, or a session copy)

    # prompt
    def prompt(self):
        if self.mode == "exec":
            return "%s#" % self.dev.name
        ctx = self.stack[-1][1] if self.stack else "config"
        return "%s(%s)#" % (self.dev.name, self.ctx_label(ctx))

    def ctx_label(self, ctx):
        return "config" if ctx == "config" else "config-%s" % self.ctx_names.get(ctx, ctx)

    def invalid(self, line):
        return self.error_text

    def running_text(self):
        return "\n".join(tree_lines(self.dev.running, self.dev.indent)) + "\n"

    def handle(self, line):
        if not line:
            return ""
        if self.mode == "exec":
            out = self.exec_cmd(line)
            self.account(line, out, False)
            return out
        out = self.config_cmd(line)
        self.account(line, out, True)
        return out

    def account(self, line, out, in_config):
        """The NOS's accounting record of a line typed (NX-OS, EOS); nothing on a NOS whose record is not modelled."""
        return None

    def exec_cmd(self, line):
        if re.match(r"terminal (length|width) \d+$", line):
            return ""
        if line in ("exit", "logout", "quit"):
            return None
        if line in ("show running-config", "show running-config | no-more", "show run"):
            return self.show_running()
        if line in ("configure terminal", "configure", "conf t"):
            self.dev.entered()
            self.mode, self.stack, self.target = "config", [], self.dev.running
            return ""
        return self.exec_extra(line)

    def show_running(self):
        return self.running_text()

    def exec_extra(self, line):
        return self.invalid(line)

    def commit_target(self):
        self.dev.persist()

    def leave_config(self):
        self.mode, self.stack = "exec", []

    def config_cmd(self, line):
        if line == "end":
            self.leave_config()
            return ""
        if line == "exit":
            if self.stack:
                self.stack.pop()
            else:
                self.leave_config()
            return ""
        extra = self.config_extra(line)
        if extra is not None:
            return extra
        if self.rejected(line):
            return self.invalid(line)
        # lines the device stores with their `no` (`no shutdown`, `no switchport`): a positive line that
        # replaces its opposite, like NX-OS/EOS print them
        ctx = self.stack[-1][1] if self.stack else "config"
        if line.startswith("no ") and self.accepts(ctx, line):
            parent = self.stack[-1][0][1] if self.stack else self.target
            parent[:] = [n for n in parent if n[0] != line[3:]]
            if not any(n[0] == line for n in parent):
                parent.append(new_node(line))
            self.changed()
            return ""
        negate = line.startswith("no ")
        body = line[3:] if negate else line
        for depth in range(len(self.stack), -1, -1):
            ctx = self.stack[depth - 1][1] if depth else "config"
            parent = self.stack[depth - 1][0][1] if depth else self.target
            if negate:
                victims = [n for n in parent if n[0] == body or n[0].startswith(body + " ")]
                if victims or self.accepts(ctx, body):
                    for v in victims:
                        parent.remove(v)
                    del self.stack[depth:]
                    self.changed()
                    return ""
                continue
            rule = self.accepts(ctx, body)
            if rule:
                regex, child_ctx, key = rule
                del self.stack[depth:]
                parent[:] = [n for n in parent if n[0] != "no " + body]   # `switchport` replaces `no switchport`
                node = next((n for n in parent if n[0] == body), None)
                if node is None:
                    if key:
                        pre = body.split()[:key]
                        for n in list(parent):
                            if n[0].split()[:key] == pre:
                                parent.remove(n)
                    node = new_node(body)
                    parent.append(node)
                if child_ctx:
                    self.stack.append((node, child_ctx))
                self.changed()
                return ""
        return self.invalid(line)

    def changed(self):
        if self.target is self.dev.running:
            self.dev.persist()
        self.count_config()

    def accepts(self, ctx, body):
        for rule in self.GRAMMAR.get(ctx, ()):
            if re.match(rule[0], body):
                return rule
        return None

    def config_extra(self, line):
        return None


class EosSession(CliSession):
    GRAMMAR = grammar.EOS
    error_text = "% Invalid input"
    ctx_names = {"if": "if", "txq": "if-txq", "acl": "acl", "cmap-pbr": "cmap-pbr", "pmap-pbr": "pmap-pbr", "pmap-c": "pmap-c-pbr"}

    def __init__(self, dev, chan):
        CliSession.__init__(self, dev, chan)
        self.session = None

    def prompt(self):
        if self.mode == "exec":
            return "%s#" % self.dev.name
        ctx = self.stack[-1][1] if self.stack else "config"
        label = self.ctx_names.get(ctx, "")
        if self.session:
            return "%s(config-s-%s%s)#" % (self.dev.name, self.session[0][:6], "-" + label if label else "")
        return "%s(config%s)#" % (self.dev.name, "-" + label if label else "")

    def exec_cmd(self, line):
        if re.match(r"terminal width \d+$", line):
            return "Width set to %s columns." % line.split()[-1]
        if line == "terminal length 0":
            return "Pagination disabled."
        m = re.match(r"configure session (\S+)( commit| abort)?$", line)
        if m and m.group(2) == " commit":
            return self.confirm_timer(m.group(1))
        if m and m.group(2) == " abort":
            return self.abort_session(m.group(1))
        if m:
            self.dev.entered()
            self.mode, self.stack = "config", []
            # an existing pending session is resumed with its own config (taken when it was created)
            tree = self.dev.session_trees.get(m.group(1)) if self.dev.sessions.get(m.group(1)) == "pending" else None
            self.session = (m.group(1), tree if tree is not None else copy.deepcopy(self.dev.running))
            self.dev.session_trees[m.group(1)] = self.session[1]
            self.dev.sessions[m.group(1)] = "pending"
            self.dev.persist()
            self.target = self.session[1]
            return ""
        m = re.match(r"no configure session (\S+)$", line)
        if m:
            if m.group(1) not in self.dev.sessions:
                return "%% Session %s not found" % m.group(1)
            self.dev.sessions.pop(m.group(1))
            self.dev.persist()
            return ""
        if line == "show clock":
            return self.dev.show_clock()
        m = re.match(r"show logging last (\d+) minutes$", line)
        if m:
            return self.show_logging(int(m.group(1)))
        if line == "show configuration sessions":
            return self.show_sessions()
        if line in ("copy running-config startup-config", "write memory", "write"):
            self.dev.save()
            return "Copy completed successfully."
        if line == "show priority-flow-control counters | json":
            return self.pfc_counters()
        if line == "show qos interfaces ecn counters queue | json":
            ports = [n[0].split()[1] for n in self.dev.running if n[0].startswith("interface Ethernet")]
            return counters_show.eos_ecn_json(ports, counters_show.load(self.dev.state_dir))
        if line == "show priority-flow-control counters watchdog | json":
            return counters_show.eos_pfc_watchdog_json(counters_show.load(self.dev.state_dir))
        if line == "show policy-map type pbr | json":
            return ppd_show.eos_pbr_json(self.dev.running)
        if line == "show ip bgp summary vrf all | json":
            return bgp_show.eos_summary_json(self.dev)
        return CliSession.exec_cmd(self, line)

    def account(self, line, out, in_config):
        """`aaa accounting commands all default start-stop logging`: one %ACCOUNTING-6-CMD syslog line per command
        (format: tests/fixtures/switches/accounting/SOURCE.md)."""
        if out is None or (out and self.error_text in out):
            return
        now = self.dev.now()
        tm = time.gmtime(now)
        self.dev.record("%s %2d %s %s Aaa: %%ACCOUNTING-6-CMD: admin vty%d 127.0.0.1 stop task_id=%d start_time=%.2f "
                        "timezone=UTC service=shell priv-lvl=15 cmd=%s" % (
                            time.strftime("%b", tm), tm.tm_mday, time.strftime("%H:%M:%S", tm), self.dev.name,
                            self.tty, len(self.dev.acct) + 1, now, line))

    def show_logging(self, minutes):
        since = self.dev.now() - 60 * minutes
        return "\n".join(rec[1] for rec in self.dev.acct if rec[0] >= since)

    def pfc_counters(self):
        """EOS's JSON form (the text table's layout has no real capture; the JSON keys do, see counters_show)."""
        rows = []
        extra = counters_show.load(self.dev.state_dir)
        for n in self.dev.running:
            if n[0].startswith("interface "):
                rx, tx = pfc_frames(n)
                rows.append((n[0].split()[1], rx + counters_show.port_total(extra, n[0].split()[1], "pfc_rx"),
                             tx + counters_show.port_total(extra, n[0].split()[1], "pfc_tx")))
        return counters_show.eos_pfc_json(rows)

    def confirm_timer(self, name):
        if self.dev.timer and self.dev.timer[0] == name:
            self.dev.timer[1].cancel()
            self.dev.timer = None
            self.dev.sessions.pop(name, None)
            self.dev.persist()
            return ""
        return "%% Session %s not found or timer not pending" % name

    def abort_session(self, name):
        """`configure session NAME abort` in exec: a commit timer still running is rolled back now."""
        if self.dev.timer and self.dev.timer[0] == name:
            self.dev.timer[1].cancel()
            self.dev.running[:] = self.dev.timer[2]
            self.dev.timer = None
            self.dev.sessions.pop(name, None)
            self.dev.persist()
            return ""
        if name in self.dev.sessions:
            self.dev.sessions.pop(name)
            self.dev.persist()
            return ""
        return "%% Session %s not found or timer not pending" % name

    def show_sessions(self):
        # layout after Arista's `show configuration sessions` examples (Name / State / User / Terminal);
        # column widths are not taken from a capture
        out = ["Maximum number of completed sessions: 1", "Maximum number of pending sessions: 5", "",
               "  Name          State                  User     Terminal", "  ------------- ---------------------- -------- --------"]
        for name, state in sorted(self.dev.sessions.items()):
            mark = "*" if self.session and self.session[0] == name else " "
            out.append("%s %-13s %-22s %-8s %s" % (mark, name, state, "admin", "vty5"))
        return "\n".join(out)

    def config_extra(self, line):
        if not self.session:
            return self.eos_config(line)
        if line == "show session-config diffs":
            a = tree_lines(self.dev.running, 3)
            b = tree_lines(self.session[1], 3)
            return "\n".join(difflib.unified_diff(a, b, "system:/running-config", "session:/%s-session-config" % self.session[0], lineterm=""))
        if line == "abort":
            self.dev.sessions.pop(self.session[0], None)
            self.dev.persist()
            self.session = None
            self.leave_config()
            return ""
        m = re.match(r"commit( timer (\d\d):(\d\d):(\d\d))?$", line)
        if m:
            prev = copy.deepcopy(self.dev.running)
            self.dev.running[:] = self.session[1]
            if m.group(1):
                self.arm_timer(self.session[0], prev, int(m.group(2)) * 3600 + int(m.group(3)) * 60 + int(m.group(4)))
                self.dev.sessions[self.session[0]] = "pendingCommitTimer"
            else:
                self.dev.sessions.pop(self.session[0], None)
            self.dev.persist()
            self.session = None
            self.leave_config()
            self.count_config()
            return ""
        return self.eos_config(line)

    def arm_timer(self, name, prev, secs):
        """commit timer: roll back unless `configure session NAME commit` confirms in time."""
        def rollback():
            with self.dev.lock:
                if not self.dev.timer or self.dev.timer[1] is not t:
                    return
                self.dev.running[:] = prev
                self.dev.timer = None
                self.dev.sessions.pop(name, None)
                self.dev.persist()
        t = threading.Timer(float(self.f.get("timer_secs", secs)), rollback)
        t.daemon = True
        self.dev.timer = (name, t, prev)
        t.start()

    def leave_config(self):
        CliSession.leave_config(self)
        self.target = self.dev.running
        self.session = None   # `end` leaves a session pending (its config stays in dev.session_trees)

    # --- EOS's view of its own config (docs/switch-commands-sources.md, tests/fixtures/switches/eos/):
    # the DSCP map is kept per DSCP, and `show running-config` leaves out what equals the default (default
    # DSCP map, tx-queue `priority strict`) and groups DSCPs sharing a class on one line (EOS 4.35 capture).
    def eos_config(self, line):
        """DSCP map lines and a tx-queue's priority, as EOS stores them; None: not one of these."""
        m = re.match(r"^(no )?qos map dscp ((?:\d+ )+)to traffic-class ([0-7])( drop-precedence [0-2])?$", line)
        if (m or line in ("no priority", "priority strict")) and self.rejected(line):
            return self.invalid(line)
        if m:
            del self.stack[:]   # a global command typed in a sub-mode goes to the global level, as on EOS
            dscps = m.group(2).split()
            for n in [n for n in self.target if re.match(r"qos map dscp (%s) to " % "|".join(dscps), n[0])]:
                if not m.group(1) or n[0].split()[6] == m.group(3):
                    self.target.remove(n)
            if not m.group(1):
                self.target.extend(new_node("qos map dscp %s to traffic-class %s%s" % (d, m.group(3), m.group(4) or ""))
                                   for d in dscps)
            self.changed()
            return ""
        if line in ("no switchport", "switchport") and self.stack and self.stack[-1][1] == "if":
            # `no switchport` is a stored line on EOS (a routed port), `switchport` undoes it
            kids = self.stack[-1][0][1]
            kids[:] = [k for k in kids if k[0] != "no switchport" and not (line == "no switchport" and k[0].startswith("switchport "))]
            if line == "no switchport":
                kids.insert(0, new_node("no switchport"))
            self.changed()
            return ""
        if line in ("no priority", "priority strict") and self.stack and self.stack[-1][1] == "txq":
            kids = self.stack[-1][0][1]
            kids[:] = [k for k in kids if k[0] not in ("no priority", "priority strict")]
            if line == "no priority":
                kids.insert(0, new_node("no priority"))
            self.changed()
            return ""
        return None

    def show_running(self):
        shown, grouped = [], False
        for node in self.dev.running:
            m = re.match(r"qos map dscp \d+ to ", node[0])
            if m:
                if not grouped:
                    shown.extend(eos_dscp_lines(self.dev.running))
                    grouped = True
                continue
            if re.match(r"vlan \d+$", node[0]) and not node[1]:
                # EOS prints child-less VLANs on one comma-separated line (`vlan 10,20`, vEOS 4.21 capture)
                if not any(n[0].startswith("vlan ") and "," in n[0] for n in shown):
                    ids = sorted(int(n[0].split()[1]) for n in self.dev.running if re.match(r"vlan \d+$", n[0]) and not n[1])
                    shown.append(new_node("vlan " + ",".join(str(i) for i in ids)) if len(ids) > 1 else node)
                continue
            if node[0].startswith("router bgp "):
                # older EOS prints each neighbor's default `maximum-routes 12000` (vEOS 4.21 capture)
                kids = []
                for kid in node[1]:
                    kids.append(kid)
                    m = re.match(r"neighbor (\S+) remote-as ", kid[0])
                    if m and not any(k[0].startswith("neighbor %s maximum-routes" % m.group(1)) for k in node[1]):
                        kids.append(new_node("neighbor %s maximum-routes 12000" % m.group(1)))
                node = [node[0], kids]
            if node[0].startswith("interface "):
                kids = []
                for kid in node[1]:
                    if kid[0] in ("switchport", "switchport mode access"):
                        continue   # EOS defaults, not printed
                    if re.match(r"(uc-)?tx-queue \d+$", kid[0]):
                        sub = [k for k in kid[1] if k[0] != "priority strict"]
                        if not sub:
                            continue
                        kid = [kid[0], sub]
                    kids.append(kid)
                node = [node[0], kids]
            shown.append(node)
        return "\n".join(tree_lines(shown, 3)) + "\n"


def eos_default_tc(dscp):
    tc = dscp // 8
    return {0: 1, 1: 0}.get(tc, tc)


def eos_dscp_lines(nodes):
    """Per-DSCP map nodes -> EOS's grouped, non-default `qos map dscp D D .. to traffic-class T` nodes."""
    groups = {}
    for node in nodes:
        m = re.match(r"qos map dscp (\d+) to traffic-class (\d)( drop-precedence \d)?$", node[0])
        if m and (int(m.group(2)) != eos_default_tc(int(m.group(1))) or m.group(3)):
            groups.setdefault((int(m.group(2)), m.group(3) or ""), []).append(int(m.group(1)))
    return [new_node("qos map dscp %s to traffic-class %d%s" % (" ".join(str(d) for d in sorted(ds)), tc, dp))
            for (tc, dp), ds in sorted(groups.items(), key=lambda kv: min(kv[1]))]


class NxosSession(CliSession):
    GRAMMAR = grammar.NXOS
    error_text = "                      ^\n% Invalid command at '^' marker."
    ctx_names = {"if": "if", "acl": "acl", "route-map": "route-map", "cmap-qos": "cmap-qos", "pmap-qos": "pmap-qos",
                 "pmap-c-qos": "pmap-c-qos", "pmap-nq": "pmap-nq", "pmap-c-nq": "pmap-c-nq", "pmap-que": "pmap-que",
                 "pmap-c-que": "pmap-c-que", "sys-qos": "sys-qos"}

    def banner(self):
        return "Cisco Nexus Operating System (NX-OS) Software (simulated)\n"

    def show_running(self):
        return "\n!Command: show running-config\n!Running configuration last done at: now\n\nversion 10.3(4a) Bios:version\n" + self.running_text()

    def account(self, line, out, in_config):
        """`show accounting log`: one record per configuration line, with the modes it was typed in (format:
        tests/fixtures/switches/accounting/SOURCE.md)."""
        if not in_config or out is None or line in ("end", "exit"):
            return
        modes = [node[0] for node, _ctx in self.stack]
        if not (modes and modes[-1] == line):
            modes.append(line)
        res = "FAILURE" if out and "% Invalid" in out else "SUCCESS"
        self.dev.record("%s:type=update:id=127.0.0.1@pts/%d:user=admin:cmd=configure terminal ; %s (%s)" % (
            time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(self.dev.now())), self.tty, " ; ".join(modes), res))

    def exec_extra(self, line):
        m = re.match(r"checkpoint (\S+)$", line)
        if m:
            self.dev.checkpoints[m.group(1)] = copy.deepcopy(self.dev.running)
            self.dev.persist()
            return "Done"
        if line == "show clock":
            return self.dev.show_clock()
        if line == "show accounting log":
            return "\n".join(rec[1] for rec in self.dev.acct)
        if line == "show accounting log last-index":
            # zongzw/ruby-monit-ng reads a Nexus's answer so (tests/fixtures/switches/accounting/SOURCE.md)
            return "accounting-log last-index : %d" % self.dev.acct_seq
        m = re.match(r"show accounting log start-seqnum (\d+)$", line)
        if m:
            # Cisco's NX-API CLI reference: the records from that number on, each "<seq>:" first and the
            # fields without their keys ("17882650:Mon Jul 30 13:02:18 2018:update:<addr>@pts/2:admin:configure ...")
            return "\n".join("%d:%s" % (rec[2], re.sub(r":type=(\w+):id=(.*?):user=(.*?):cmd=", r":\1:\2:\3:", rec[1], 1))
                             for rec in self.dev.acct if rec[2] >= int(m.group(1)))
        if line == "show checkpoint summary":
            out = ["User Checkpoint Summary", "-" * 80]
            for i, name in enumerate(sorted(self.dev.checkpoints), 1):
                out += ["%d) %s:" % (i, name), "Created by admin", "Created at Mon, 00:00:00 01 Jan 2026", "Size is 1,000 bytes",
                        "Description: None", ""]
            return "\n".join(out)
        m = re.match(r"no checkpoint (\S+)$", line)
        if m:
            self.dev.checkpoints.pop(m.group(1), None)
            self.dev.persist()
            return ""
        m = re.match(r"rollback running-config checkpoint (\S+)$", line)
        if m:
            if m.group(1) not in self.dev.checkpoints:
                return "ERROR: Checkpoint name %s does not exist" % m.group(1)
            self.dev.running[:] = copy.deepcopy(self.dev.checkpoints[m.group(1)])
            self.dev.persist()
            return ("Note: Applying config parallelly may fail Rollback verification\nCollecting Running-Config\n"
                    "#Generating Rollback Patch\nExecuting Rollback Patch\nGenerating Running-config for verification\n"
                    "Generating Patch for verification\nVerification is Successful.\n\nRollback completed successfully.")
        if line == "show route-map":
            return ppd_show.nxos_show_route_map(self.dev.running)
        if line == "show bgp all summary vrf all | json":
            summary = bgp_show.nxos_summary_json(self.dev)
            return summary if summary is not None else self.invalid(line)
        if line == "show interface priority-flow-control":
            out = ["", "slot  1", "=======", "", "=" * 60, "Port               Mode Oper(VL bmap)  RxPPP      TxPPP", "=" * 60, ""]
            extra = counters_show.load(self.dev.state_dir)
            for n in self.dev.running:
                if n[0].startswith("interface "):
                    rx, tx = pfc_frames(n)
                    rx, tx = (rx + counters_show.port_total(extra, n[0].split()[1], "pfc_rx"),
                              tx + counters_show.port_total(extra, n[0].split()[1], "pfc_tx"))
                    mode, oper = ("On", "On  (8)") if rx else ("Auto", "Off")
                    out.append("%-18s %-4s %-14s %-10d %d" % (n[0].split()[1], mode, oper, rx, tx))
            return "\n".join(out)
        if line == "copy running-config startup-config":
            self.dev.save()
            return "[########################################] 100%\nCopy complete, now saving to disk (please wait)...\nCopy complete."
        return self.invalid(line)


class KlishSession(CliSession):
    GRAMMAR = grammar.KLISH
    error_text = "%Error: Invalid input detected at \"^\" marker."
    ctx_names = {"if": "if-Ethernet", "acl": "ipv4-acl", "map-dscp-tc": "dscp-tc-map", "wred": "wred", "sched": "sched-policy",
                 "sched-q": "sched-policy-queue", "cmap": "classifier", "pmap": "policy-map", "pmap-c": "policy-map-flow"}

    def __init__(self, dev, chan):
        CliSession.__init__(self, dev, chan)
        self.shell = True  # login lands in the Linux shell; `sonic-cli` enters klish

    def prompt(self):
        if self.shell:
            return "admin@%s:~$" % self.dev.name
        return CliSession.prompt(self)

    def handle(self, line):
        if self.shell:
            if line == "sonic-cli":
                self.shell = False
                return ""
            if line in ("exit", "logout"):
                return None
            shown = self.counter_show(line)
            if shown is not None:
                return shown
            shell = shell_command(self.dev, line)
            if shell is not None:
                return shell
            return "-bash: %s: command not found" % line.split()[0] if line else ""
        if self.mode == "exec" and line == "exit":
            self.shell = True
            return ""
        if self.mode == "exec" and line == "terminal raw-output":
            return ""
        return CliSession.handle(self, line)

    def counter_show(self, line):
        """sonic-utilities' counter commands in the Linux shell (counters_show.py); None: not one of them."""
        ports = [n[0].split(None, 1)[1] for n in self.dev.running if n[0].startswith("interface Eth")]
        table = counters_show.load(self.dev.state_dir)
        shows = {"show pfc counters": lambda: counters_show.sonic_pfc(ports, table),
                 "show queue counters": lambda: counters_show.sonic_queue(ports, table),
                 "show queue wredcounters": lambda: counters_show.sonic_queue(ports, table, wred=True),
                 "show pfcwd stats": lambda: counters_show.sonic_pfcwd(ports, table)}
        return shows[line]() if line in shows else None

    def show_running(self):
        if self.dev.nos != "dell_sonic":
            return self.running_text()

        def shown(nodes, depth=0):
            out = []
            for n in nodes:
                # Dell prints ` !` before each nested block (dellemc sonic_bgp_af: ` !` / ` address-family ...`)
                if depth and n[1]:
                    out.append(["!", []])
                out.append([klish_wred_shown(n[0]), shown(n[1], depth + 1)])
            return out
        return "\n".join(tree_lines(shown(self.dev.running), 1)) + "\n"

    def account(self, line, out, in_config):
        """Dell/Broadcom klish logs every command to syslog local4, which rsyslog writes to /var/log/audit.log, as
        `User "<u>" command "<line>" status - success|failure` with no mode (SONiC "Audit Log" HLD; format:
        tests/fixtures/switches/accounting/SOURCE.md)."""
        if self.dev.nos != "dell_sonic" or out is None:
            return
        now = self.dev.now()
        self.dev.record('%s.%06d %s INFO mgmt-framework#clish: User "admin" command "%s" status - %s' % (
            time.strftime("%b %e %H:%M:%S", time.gmtime(now)), int(now % 1 * 1e6), self.dev.name, line,
            "failure" if out and self.error_text in out else "success"))

    def exec_extra(self, line):
        # Dell/Broadcom klish: the command is `show running-configuration` (`show running-config` is taken as
        # its abbreviation, like klish's unique-prefix matching)
        if line in ("show running-configuration", "show running-configuration | no-more"):
            return self.show_running()
        if line in ("show audit-log", "show audit-log all") and self.dev.nos == "dell_sonic":
            # noolex/sonic-mgmt-common xfmr_auditlog.go: the whole file, or (the short form) its last 8192 bytes
            # from the first line start in them
            text = "".join(rec[1] + "\n" for rec in self.dev.acct)
            if line == "show audit-log" and len(text) > 8192:
                text = text[-8192:]
                text = text[text.index("\n") + 1:]
            return text
        if line == "write memory" and self.dev.nos == "dell_sonic":
            self.dev.save()
            return ""
        return self.invalid(line)


def klish_wred_shown(line):
    """Dell/Broadcom mgmt-framework renders a WRED threshold from the stored bytes divided by 1024
    (noolex/sonic-mgmt-framework CLI/actioner/show_config_qos.py @05d997e, Python 3 division): the KBytes
    typed (x1000 bytes) come back as e.g. 146.484375 for 150."""
    m = re.match(r"^(green|yellow|red) minimum-threshold (\d+) maximum-threshold (\d+) (drop-probability \d+)$", line)
    if not m:
        return line
    return "%s minimum-threshold %s maximum-threshold %s %s" % (
        m.group(1), int(m.group(2)) * 1000 / 1024, int(m.group(3)) * 1000 / 1024, m.group(4))


class NvueSession(Session):
    """Cumulus Linux shell with NVUE: applied config + one pending revision."""

    def prompt(self):
        return "cumulus@%s:mgmt:~$ " % self.dev.name

    def banner(self):
        return "Linux %s 6.1.0-cl-1-amd64 #1 SMP Debian x86_64\n" % self.dev.name

    @staticmethod
    def path_rule(path):
        for regex, key in grammar.NVUE_PATHS:
            if re.match(regex, path):
                return regex, key
        return None

    def handle(self, line):
        dev = self.dev
        if not line:
            return ""
        if line in ("exit", "logout"):
            return None
        if line == "nv config show -o commands":
            # NVUE prints interfaces that share a setting under one range key (swp1-4,9-12), lines end in a blank
            return "".join("nv set %s \n" % p for p in compress_commands(dev.running))
        if line == "nv config diff -o commands":
            pend = dev.pending if dev.pending is not None else dev.running
            out = ["nv unset %s" % p for p in dev.running if p not in pend]
            out += ["nv set %s" % p for p in pend if p not in dev.running]
            return "\n".join(out)
        if line == "nv config detach":
            dev.pending = None
            dev.persist()
            return ""
        if line in ("nv config apply -y", "nv config apply --assume-yes"):
            self.count_config()
            if dev.pending is None:
                return "Warning: The applied config is already up to date."
            dev.running[:] = dev.pending
            dev.pending = None
            dev.revision += 1
            dev.persist()
            return "applied [rev_id: %d]" % dev.revision
        if line == "nv config save":
            dev.save()
            return "saved [rev_id: %d]" % dev.revision
        m = re.match(r"nv (set|unset) (.+)$", line)
        if m:
            path = m.group(2).strip()
            if self.rejected(line):
                return "Error: Invalid config: %s" % path
            if dev.pending is None:
                dev.pending = list(dev.running)
            dev.entered()
            if m.group(1) == "set":
                rule = self.path_rule(path)
                if not rule:
                    return "Error: Invalid command: nv set %s" % path
                key = rule[1]
                toks = path.split()
                if key:
                    pre = toks[:-key]
                    dev.pending = [p for p in dev.pending if p.split()[:-key] != pre or not re.match(rule[0], p)]
                if path not in dev.pending:
                    dev.pending.append(path)
            else:
                dev.pending = [p for p in dev.pending if not (p == path or p.startswith(path + " "))]
            dev.pending.sort()
            dev.persist()
            self.count_config()
            return ""
        m = re.match(r"nv show interface (swp\d+) (counters qos|qos pfc-watchdog)$", line)
        if m:
            table = counters_show.load(dev.state_dir)
            return (counters_show.nvue_counters_qos(m.group(1), table) if m.group(2) == "counters qos"
                    else counters_show.nvue_pfc_watchdog(m.group(1), table))
        m = re.match(r"nv show router pbr map (\S+) rule -o json$", line)
        if m:
            return ppd_show.nvue_pbr_rules_json(dev.running, m.group(1))
        if line == "nv show vrf default router bgp neighbor":
            return bgp_show.nvue_neighbor_table(dev)
        if line.startswith("nv "):
            return "Error: Invalid command: %s" % line
        shell = shell_command(dev, line)
        if shell is not None:
            return shell
        return "-bash: %s: command not found" % line.split()[0]


class AsterNosSession(Session):
    """AsterNOS as Asterfusion's own netmiko driver (asterfusion_asternos) meets it: login in a Linux shell, `sonic-cli`
    enters klish (`terminal raw-output`, `write` + `y` saves, `system bash` opens a shell, `exit` leaves), and Easy
    RoCE's REST model (docs.asternos.com/zh/aidc/restapi-manual/easy-roce/) answered to `curl` in the shell. The
    running state is {"rest": GET /rest/v1/running/roce body, "ports": [...]}. Test code: what the REST manual does
    not show (status codes, PATCH merging, the generated names' exact form) is this simulator's guess."""

    RW = ("mode", "publish-via", "bind-interfaces", "cable-length", "incast-level", "traffic-model")
    BASE = "https://127.0.0.1/rest/v1"

    def __init__(self, dev, chan):
        Session.__init__(self, dev, chan)
        self.modes = ["shell"]

    def prompt(self):
        if self.modes[-1] == "shell":
            return "admin@%s:~$" % self.dev.name
        return "%s(config)#" % self.dev.name if self.modes[-1] == "config" else "%s#" % self.dev.name

    def handle(self, line):
        if not line:
            return ""
        if line in ("exit", "logout", "quit"):
            self.modes.pop()
            return "" if self.modes else None
        if self.modes[-1] in ("klish", "config"):
            out = self.klish(line)
            self.logged(line, out)
            return out
        if line == "sonic-cli":
            self.modes.append("klish")
            return ""
        recorded = self.records(line)
        if recorded is not None:
            return recorded
        m = re.match(r"^(curl .*?)( 2>&1; echo AIF-RC=\$\?)?$", line)
        if m:
            rc, out = self.curl(m.group(1))
            return (out + "\n" if out else "") + ("AIF-RC=%d" % rc if m.group(2) else "")
        ports = self.dev.running.get("ports", [])
        table = counters_show.load(self.dev.state_dir)
        shows = {"show pfc counters": lambda: counters_show.sonic_pfc(ports, table),
                 "show queue counters": lambda: counters_show.sonic_queue(ports, table),
                 "show queue wredcounters": lambda: counters_show.sonic_queue(ports, table, wred=True),
                 "show pfcwd stats": lambda: counters_show.sonic_pfcwd(ports, table)}
        if line in shows:
            return shows[line]()
        shell = shell_command(self.dev, line)
        if shell is not None:
            return shell
        return "-bash: %s: command not found" % line.split()[0]

    LOGS = ("/var/log/audit.log", "/var/log/auth.log", "/var/log/syslog")

    def logged(self, line, out):
        """klish's command log as sonic-mgmt-framework's hook writes it (hook_log.c.diff; rsyslog local4 ->
        /var/log/audit.log; tests/fixtures/switches/accounting/SOURCE.md): that AsterNOS's klish logs so is unverified
        (Asterfusion's 2020 fork predates the hook). Fault ``no_records``: no record at all."""
        if self.f.get("no_records") or not line:
            return
        now = self.dev.now()
        self.dev.record('%s.%06d %s INFO mgmt-framework#clish: User "admin" command "%s" status - %s' % (
            time.strftime("%b %e %H:%M:%S", time.gmtime(now)), int(now % 1 * 1e6), self.dev.name, line,
            "failure" if out and out.startswith("%Error") else "success"))

    def records(self, line):
        """The Linux shell's record commands (nos/asterlog.py): ``ls`` of the log files, sudo's own record of each
        sudo command (SONiC's rsyslog format, configdb_sim.sudo_logged's line), ``sudo -n grep`` of the logs, and the
        engineer's ``sudo config hostname``. None: not one of them."""
        m = re.match(r"^(.*?)( 2>&1; echo AIF-RC=\$\?)?$", line)
        cmd, rc = m.group(1), m.group(2)
        if cmd.startswith("sudo ") and not self.f.get("no_records"):
            argv = [a for a in cmd.split()[1:] if a != "-n"]
            now = self.dev.now()
            self.dev.record("%s.%06d %s NOTICE sudo:    admin : TTY=pts/%s ; PWD=/home/admin ; USER=root ; COMMAND=%s%s" % (
                time.strftime("%b %e %H:%M:%S", time.gmtime(now)), int(now % 1 * 1e6), self.dev.name, self.tty,
                "/usr/local/bin/" if argv[0] == "config" else "/usr/bin/", " ".join(argv)))
        if cmd == "ls -1 " + " ".join(self.LOGS):
            there = [] if self.f.get("no_records") else [self.LOGS[0], self.LOGS[2]]
            out = "".join("ls: cannot access '%s': No such file or directory\n" % f for f in self.LOGS if f not in there)
            out += "".join(f + "\n" for f in there)
            status = 2 if len(there) < len(self.LOGS) else 0
        elif cmd.startswith("sudo -n grep -h -s -F -e ' sudo: ' -e ' command \"' "):
            lines = [rec[1] for rec in self.dev.acct]
            out, status = "".join(x + "\n" for x in lines), 0 if lines else 1
        elif re.match(r"^sudo config hostname \S+$", cmd):
            self.dev.running["hostname"] = cmd.split()[-1]
            self.dev.persist()
            out, status = "", 0
        else:
            return None
        return out + ("AIF-RC=%d" % status if rc else "")

    def klish(self, line):
        if line == "terminal raw-output":
            return ""
        if line == "configure terminal" and self.modes[-1] == "klish":
            self.modes.append("config")
            return ""
        if line == "end" and self.modes[-1] == "config":
            self.modes.pop()
            return ""
        m = re.match(r"^qos roce profile (\S+) (mode|cable-length|bind-interfaces) (\S+(?: \S+)*)$", line)
        if m and self.modes[-1] == "config":   # the simulator's Easy RoCE klish lines (unverified: nos/asterlog.py)
            value = m.group(3).split() if m.group(2) == "bind-interfaces" else m.group(3)
            status, _out = self.rest("PATCH", "/running/roce/roce-profiles/" + m.group(1), json.dumps({m.group(2): value}))
            return "" if status < 400 else "%Error: Easy RoCE refused the value"
        if line == "system bash":
            self.modes.append("shell")
            return ""
        if line == "write":
            return self.ask_save("Existing file will be overwritten, continue? [y/N]:")
        return "%Error: Invalid input detected at \"^\" marker."

    # ---- Easy RoCE REST
    def curl(self, cmd):
        import shlex
        try:
            args = shlex.split(cmd)
        except ValueError:
            return 2, "curl: option error"
        method, body, url, i = "GET", None, None, 1
        while i < len(args):
            a = args[i]
            if a == "-X":
                method, i = args[i + 1], i + 2
            elif a == "-H":
                i += 2
            elif a == "-d":
                body, i = args[i + 1], i + 2
            elif a.startswith("-"):
                i += 1
            else:
                url, i = a, i + 1
        if method != "GET":
            if self.rejected(cmd):
                return 22, "curl: (22) The requested URL returned error: 400"
            self.count_config()
        if not url or not url.startswith(self.BASE):
            return 7, "curl: (7) Failed to connect to %s port 443: Connection refused" % (url or "")
        status, out = self.rest(method, url[len(self.BASE):], body)
        if method != "GET" and status < 400:
            self.dev.entered()   # a change, like a config-mode entry on a CLI (the lab counts them)
        if status >= 400:
            return 22, "curl: (22) The requested URL returned error: %d" % status
        return 0, out

    def rest(self, method, path, body):
        dev = self.dev
        rest = dev.running.setdefault("rest", {"roce-accept": {}, "roce-profiles": []})
        profiles = rest.setdefault("roce-profiles", [])
        try:
            data = json.loads(body) if body else None
        except ValueError:
            return 400, ""
        if path == "/running/roce" and method == "GET":
            return 200, json.dumps(rest, indent=4)
        if path == "/running/roce/roce-profiles" and method == "POST":
            if not isinstance(data, dict) or not data.get("name") or data.get("mode") not in ("lossless", "lossy"):
                return 400, ""
            if any(p["name"] == data["name"] for p in profiles):
                return 409, ""
            profiles.append({"name": data["name"], "mode": data["mode"], "incast-level": "medium"})
            dev.persist()
            return 201, ""
        m = re.match(r"^/running/roce/roce-profiles/([A-Za-z0-9_-]+)$", path)
        if not m:
            return 404, ""
        prof = next((p for p in profiles if p["name"] == m.group(1)), None)
        if prof is None:
            return 404, ""
        if method == "GET":
            return 200, json.dumps(prof, indent=4)
        if method == "DELETE":
            profiles.remove(prof)
            dev.persist()
            return 204, ""
        if method != "PATCH" or not isinstance(data, dict) or any(k not in self.RW for k in data):
            return 400, ""
        if "cable-length" in data and not re.match(r"^CABLE_\d+m$", str(data["cable-length"])):
            return 400, ""
        if any(p not in dev.running.get("ports", []) for p in data.get("bind-interfaces", [])):
            return 400, ""
        prof.update(data)
        self.generate(prof)
        dev.persist()
        return 204, ""

    @staticmethod
    def generate(prof):
        """The objects Easy RoCE generates, named after the manual's sample (roce_lossless_5m_medium_200g_ecn ...)."""
        for leaf in ("class-maps", "policy-maps", "wred-profiles", "buffer-profiles", "diffserv-maps"):
            prof.pop(leaf, None)
        if not prof.get("bind-interfaces") or not prof.get("cable-length"):
            return
        base = "%s_100g" % prof["name"]
        prof.update({"class-maps": [base + "_class_map"],
                     "policy-maps": [base + "@queue-scheduler priority queue 6@queue-scheduler priority queue 7"],
                     "wred-profiles": [base + "_ecn"], "buffer-profiles": [base + "_profile"],
                     "diffserv-maps": ["roce_lossless_diffserv_map"]})


class CommunitySonicSession(Session):
    """A community SONiC login: bash with sonic-utilities (configdb_sim.SonicShell: CONFIG_DB, GCU, checkpoints).
    Faults: ``reject`` on an apply-patch line fails it after half of its ops; ``drop_after`` counts the ops GCU
    applies (the SSH session, and with it the running `config apply-patch`, is cut there)."""

    def prompt(self):
        return "admin@%s:~$ " % self.dev.name

    def banner(self):
        return "Linux %s 6.1.0-29-2-amd64 #1 SMP Debian x86_64\n" % self.dev.name

    def handle(self, line):
        dev = self.dev
        if not line:
            return ""
        if line in ("exit", "logout"):
            return None
        shown = self.counter_show(line)
        if shown is not None:
            return shown
        if line == "show ip bgp summary":
            return bgp_show.sonic_summary(dev)
        acl = re.match(r"^show acl (table|rule)(?: (\S+))?$", line)
        if acl:
            show = ppd_show.sonic_acl_table if acl.group(1) == "table" else ppd_show.sonic_acl_rule
            return show(dev.running, acl.group(2))
        state = {"running": dev.running, "startup": dev.startup, "checkpoints": dev.checkpoints, "files": dev.files,
                 "acct": dev.acct}

        def persist():
            dev.startup, dev.checkpoints, dev.files = state["startup"], state["checkpoints"], state["files"]
            dev.persist()

        def on_op(i):
            self.count_config()
            self.gcu_pause(i)
        shell = configdb_sim.SonicShell(state, persist, clock=dev.now, tty=self.tty, record=dev.record)
        out = shell.line(line, on_op=on_op, reject="config apply-patch" in line and self.rejected(line))
        if out is None:
            return "-bash: %s: command not found" % line.split()[0]
        return out

    def gcu_pause(self, i):
        """Fault ``slow`` with ``gcu_change: n`` (no ``re``): after the n-th change of this session's apply-patch, where
        GCU sleeps 1 s (change_applier.py:173), sleep ``secs`` with the device unlocked, so another session's write
        lands between GCU's changes as on a switch (GCU takes no lock: generic_updater.py ConfigLock is a TODO). Writes
        ``slowed-<index>`` like ``slow_down``; once per session."""
        slow = self.f.get("slow")
        for index, spec in enumerate(slow if isinstance(slow, list) else [slow] if slow else []):
            if spec.get("gcu_change") != i or getattr(self, "gcu_paused", False):
                continue
            self.gcu_paused = True
            with open(os.path.join(self.dev.state_dir, "slowed-%d" % index), "w") as fh:
                fh.write("config apply-patch, after change %d" % i)
            held = 0
            while True:   # the session's dispatch holds the device's RLock (maybe nested): release it all
                try:
                    self.dev.lock.release()
                except RuntimeError:
                    break
                held += 1
            try:
                time.sleep(float(spec["secs"]))
            finally:
                while held:
                    self.dev.lock.acquire()
                    held -= 1

    def counter_show(self, line):
        ports = sorted(self.dev.running.get("PORT", {}))
        table = counters_show.load(self.dev.state_dir)
        shows = {"show pfc counters": lambda: counters_show.sonic_pfc(ports, table),
                 "show queue counters": lambda: counters_show.sonic_queue(ports, table),
                 "show queue wredcounters": lambda: counters_show.sonic_queue(ports, table, wred=True),
                 "show pfcwd stats": lambda: counters_show.sonic_pfcwd(ports, table)}
        return shows[line]() if line in shows else None


SESSIONS = {"eos": EosSession, "nxos": NxosSession, "dell_sonic": KlishSession, "asternos": AsterNosSession, "nvue": NvueSession,
            "community_sonic": CommunitySonicSession}


# ----------------------------------------------------------------------------- SSH server
class Server(paramiko.ServerInterface):
    def __init__(self):
        self.shell = threading.Event()

    def check_auth_password(self, username, password):
        return paramiko.AUTH_SUCCESSFUL if (username, password) == (USER, PASSWORD) else paramiko.AUTH_FAILED

    def get_allowed_auths(self, username):
        return "password"

    def check_channel_request(self, kind, chanid):
        return paramiko.OPEN_SUCCEEDED if kind == "session" else paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_pty_request(self, *args):
        return True

    def check_channel_shell_request(self, channel):
        self.shell.set()
        return True


def serve_client(dev, sock, host_key):
    if dev.down():   # "no reconnect": the switch is unreachable, the connection is refused at once
        sock.close()
        return
    t = paramiko.Transport(sock)
    t.add_server_key(host_key)
    srv = Server()
    try:
        t.start_server(server=srv)
        chan = t.accept(20)
        if chan is None or not srv.shell.wait(10):
            return
        with dev.lock:
            dev.reload()
        sess = SESSIONS[dev.nos](dev, chan)
        try:
            sess.run()
        except Dropped:
            pass
    except Exception:  # noqa: BLE001 - a client that goes away is normal
        pass
    finally:
        t.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--nos", required=True, choices=sorted(SESSIONS))
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--state-dir", required=True)
    ap.add_argument("--host-key", required=True)
    args = ap.parse_args()
    dev = Device(args.name, args.nos, args.state_dir)
    key = paramiko.RSAKey(filename=args.host_key)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", args.port))
    ls.listen(64)
    while True:
        sock = ls.accept()[0]
        # answers go out as several small writes (echo, output, prompt): without NODELAY, Nagle +
        # delayed ACK hold each one back ~40 ms
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=serve_client, args=(dev, sock, key), daemon=True).start()


if __name__ == "__main__":
    main()
