"""Concurrent edits from the NOS's own record (nos/edits.py; the parsers on nos/transactions.py), held to public
captures (tests/fixtures/switches/accounting/SOURCE.md)."""
import calendar
import os

import pytest
from ansible_collections.aifabric.roce.plugins.module_utils.nos import edits, sudolog
from ansible_collections.aifabric.roce.plugins.module_utils.nos.edits import Edit, Window
from ansible_collections.aifabric.roce.plugins.module_utils.nos.errors import StepError
from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import (NxosCheckpointTxn, eos_accounting, klish_audit,
                                                                                     nxos_accounting, nxos_last_index)

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "..", "fixtures", "switches", "accounting")


def read(name):
    with open(os.path.join(FIX, name)) as fh:
        return fh.read()


def near(year, month, day, hms=(0, 0, 0)):
    """A window's start (epoch seconds, the device clock read as UTC): year-less records are dated nearest it."""
    return calendar.timegm((year, month, day) + hms)


NOV29 = near(2026, 11, 29)


def test_nxos_accounting_log_real_capture():
    got = nxos_accounting(read("nxos-show-accounting-log.txt"))
    assert [(e.user, e.where, e.path) for e in got] == [
        ("frank", "192.168.12.138@pts/3", "feature scp-server"),
        ("ethan", "192.168.12.138@pts/3", "interface Ethernet1/10"),
        ("ethan", "192.168.12.138@pts/3", 'interface Ethernet1/10 > description "this is a new interface"')]
    assert got[0].at == calendar.timegm((2020, 1, 30, 1, 41, 15, 0, 0, 0))
    # entering the mode sets nothing by itself: only the line typed in it is a setting
    assert [e.path for e in edits.settings(got)] == ["feature scp-server",
                                                     'interface Ethernet1/10 > description "this is a new interface"']


def test_nxos_accounting_log_keyless_form_of_ciscos_reference():
    """Cisco's NX-API CLI reference: the same record without keys, a sequence number first; its two configuration
    records FAILED and the others are not configuration lines: no edit."""
    text = read("nxos-nxapi-show-accounting-log-start-seqnum.txt")
    assert nxos_accounting(text) == []
    ok = text.splitlines()[0].replace("(FAILURE)", "(SUCCESS)")
    assert nxos_accounting(ok) == [Edit(calendar.timegm((2018, 7, 30, 13, 2, 18, 0, 0, 0)), "admin", "64.103.223.233@pts/2",
                                        "aaa bypass-user test", 17882650)]


def test_nxos_failed_and_exec_records_are_not_edits():
    text = ("Mon Feb 10 09:30:45 2020:type=update:id=console:user=admin:cmd=configure terminal ; interface Ethernet1/1 ; "
            "mtu 99999 (FAILURE)\nMon Feb 10 09:30:46 2020:type=update:id=console:user=admin:cmd=clear counters (SUCCESS)\n")
    assert nxos_accounting(text) == []


def test_eos_accounting_real_capture_holds_exec_commands_only():
    # the capture's commands are show commands and a gNMI Set outside any configure mode: no configuration line
    text = read("eos-show-logging-accounting.txt")
    assert eos_accounting(text, near(2018, 3, 24), set()) == []
    # the same record shape, with the configure/typed lines an engineer sends (the mode rebuilt per terminal)
    line = ("Mar 24 20:33:5%d eos Aaa: %%ACCOUNTING-6-CMD: bob vty6 192.168.2.1 stop task_id=1%d start_time=1521923632.5 "
            "timezone=UTC service=shell priv-lvl=15 cmd=%s ")
    typed = ["configure terminal", "interface Ethernet1", "mtu 1500", "exit", "hostname core1", "end"]
    got = eos_accounting("\n".join(line % (i, i, c) for i, c in enumerate(typed)), near(2018, 3, 24),
                         {"interface Ethernet1 > mtu 9216", "hostname leaf1"})
    assert [(e.user, e.path) for e in got] == [("bob", "interface Ethernet1"), ("bob", "interface Ethernet1 > mtu 1500"),
                                               ("bob", "hostname core1")]
    assert got[1].where == "vty6 192.168.2.1" and got[1].at == calendar.timegm((2018, 3, 24, 20, 33, 52, 0, 0, 0))


def test_eos_session_lines_count_when_the_session_commits():
    line = ("Mar 24 20:34:%02d eos Aaa: %%ACCOUNTING-6-CMD: ann vty7 10.0.0.9 stop task_id=%d start_time=1.0 timezone=UTC "
            "service=shell priv-lvl=15 cmd=%s")
    typed = ["configure session s1", "interface Ethernet2", "mtu 1400", "end", "configure session s1", "commit",
             "configure session s2", "hostname never", "abort"]
    got = eos_accounting("\n".join(line % (i, i, c) for i, c in enumerate(typed)), near(2018, 3, 24), set())
    assert [(e.path, e.at % 60) for e in got] == [("interface Ethernet2", 5), ("interface Ethernet2 > mtu 1400", 5)]


def edit(at, path, user="bob"):
    return Edit(at, user, "pts/1", path)


def test_overwritten_names_only_their_lost_values():
    final = {"interface E1 > mtu 9216", "interface E2 > mtu 1500", "hostname leaf1"}
    rec = [edit(99, "interface E1 > mtu 1400"),        # before the window
           edit(100, "interface E1 > mtu 1500"),       # theirs, then ours over it: lost
           edit(101, "interface E1 > mtu 9216", "us"),  # the line this run sent
           edit(102, "interface E2 > mtu 1500"),       # theirs, kept
           edit(103, "hostname x"), edit(104, "hostname leaf1", "ann")]   # replaced by a later edit that stands
    lost = edits.overwritten(rec, 100, {"interface E1 > mtu 9216"}, final)
    assert lost == [rec[1]]
    assert edits.describe(lost[0]) == ("overwrote a concurrent edit by bob at 1970-01-01 00:01:40 (pts/1): "
                                       "interface E1 > mtu 1500")


def test_overwritten_unset_is_lost_when_the_setting_is_back():
    rec = [edit(100, "interface E1 > no mtu")]
    assert edits.overwritten(rec, 100, set(), {"interface E1 > mtu 9216"}) == rec
    assert edits.overwritten(rec, 100, set(), {"interface E1 > description x"}) == []


def test_an_edit_the_locked_read_held_in_the_boundary_second_is_not_lost():
    # a previous run set mtu 9216 at 01:37:33, this run read it under its lock, took the clock at 01:37:34
    # (the window opens a second early: the record counts whole seconds) and changed it on purpose
    final = {"interface E1 > mtu 1500"}
    before = {"interface E1 > mtu 9216", "interface E2 > no switchport"}
    rec = [edit(99, "interface E1 > mtu 9216", "admin"),
           edit(99, "interface E2 > no switchport", "admin")]
    assert edits.overwritten(rec, 99, set(), final | {"interface E2 > switchport"}) == rec
    assert edits.overwritten(rec, 99, set(), final | {"interface E2 > switchport"}, read=(100, before)) == []


def test_an_edit_after_the_clock_or_not_in_the_read_is_still_lost():
    final = {"interface E1 > mtu 1500"}
    before = {"interface E1 > mtu 9216"}
    late = [edit(101, "interface E1 > mtu 9216")]          # restated after the clock read: raced with our line
    unseen = [edit(100, "interface E1 > mtu 4000")]        # same second, but the read never held it
    assert edits.overwritten(late, 99, set(), final, read=(100, before)) == late
    assert edits.overwritten(unseen, 99, set(), final, read=(100, before)) == unseen


def test_an_unset_the_switch_shows_as_a_line_is_held():
    # NX-OS lists "no switchport" in its running config: the edit that typed it is on the switch
    rec = [edit(100, "interface E1 > no switchport")]
    assert edits.overwritten(rec, 100, set(), {"interface E1 > no switchport", "interface E1 > mtu 9216"}) == []
    assert edits.overwritten(rec, 100, set(), {"interface E1 > switchport"}) == rec


def test_nxos_keyless_records_keep_their_sequence_number():
    text = read("nxos-nxapi-show-accounting-log-start-seqnum.txt").replace("(FAILURE)", "(SUCCESS)")
    got = nxos_accounting(text)
    assert [(e.seq, e.path) for e in got] == [(17882650, "aaa bypass-user test"),
                                              (17882651, "aaa bypass-user test accounting authorization")]
    # the keyed form of a real capture prints no number
    assert {e.seq for e in nxos_accounting(read("nxos-show-accounting-log.txt"))} == {None}


def test_nxos_last_index_as_read_from_a_nexus():
    # the shape zongzw/ruby-monit-ng requires of a Nexus's answer, ^accounting-log last-index : -?(\d+)$ (no captured
    # answer found: tests/fixtures/switches/accounting/SOURCE.md)
    assert nxos_last_index("accounting-log last-index : 17882653") == 17882653
    assert nxos_last_index("\naccounting-log last-index : -1\n") == -1
    with pytest.raises(StepError):
        nxos_last_index("% Invalid command at '^' marker.")


def sq(seq, at, path, user="bob"):
    return Edit(at, user, "pts/1", path, seq)


def test_by_sequence_the_window_is_exact_whatever_the_clock():
    final = {"interface E1 > mtu 1500", "interface E2 > mtu 9216"}
    before = {"interface E1 > mtu 9216", "interface E2 > mtu 9216"}
    rec = [sq(10, 100, "interface E1 > mtu 4000"),            # before the locked read: outside, same second or not
           sq(11, 100, "interface E2 > mtu 9216", "admin"),   # between the two marks, the read held it: seen
           sq(12, 100, "interface E1 > mtu 9216"),            # restated after the second mark, in flight: lost
           sq(13, 99, "interface E2 > mtu 1400")]             # in flight, its clock a second behind: lost
    window = Window("seq", 11, 11)
    lost = edits.overwritten(rec, window.start, set(), final, read=(window.seen, before), by=window.by)
    assert lost == [rec[2], rec[3]]
    # the same records placed by the clock: all in the read's second, so E1's restatement counts as seen (missed)
    assert edits.overwritten(rec, 99, set(), final, read=(100, before)) == [rec[3]]
    # a record with no number is never in a window placed by numbers
    assert not window.opens(Edit(100, "bob", "pts/1", "interface E1 > mtu 4000"))


class _Io(object):
    """The two answers an NX-OS transaction reads for its window, ``last`` a list of last-index answers."""

    def __init__(self, last, clock="10:00:00.000 UTC Sun Nov 29 2026"):
        self.last, self.clock, self.sent = list(last), clock, []

    def run(self, step, cmd, **kw):
        self.sent.append(cmd)
        if cmd == "show accounting log last-index":
            answer = self.last.pop(0)
            if answer.startswith("%"):
                raise StepError(step, cmd, answer, "the device rejected it")
            return answer
        if cmd == "show clock":
            return self.clock
        return ""


def _nxos_txn(io):
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
    txn = NxosCheckpointTxn(get_driver("nxos"), io, "aif-x")
    return txn


def test_nxos_window_by_sequence_numbers_and_its_clock_fallback():
    io = _Io(["accounting-log last-index : 41", "accounting-log last-index : 44"])
    txn = _nxos_txn(io)
    txn.record_open()
    assert txn.record_clock() == Window("seq", 42, 44)
    txn.recorded_edits(Window("seq", 42, 44), set())
    assert io.sent[-1] == "show accounting log start-seqnum 42"
    # refused (an NX-OS without last-index): the clock window, said in the notes
    io = _Io(["% Invalid command at '^' marker."])
    txn = _nxos_txn(io)
    txn.record_open()
    got = txn.record_clock()
    assert got.by == "at" and got.seen == calendar.timegm((2026, 11, 29, 10, 0, 0, 0, 0, 0)) and got.start == got.seen - 1
    assert any("placed by the device's clock" in n for n in txn.notes), txn.notes
    txn.recorded_edits(got, set())
    assert io.sent[-1] == "show accounting log"
    # the log cleared in between (its index went back): the clock, never a window over numbers that mean nothing
    io = _Io(["accounting-log last-index : 41", "accounting-log last-index : 3"])
    txn = _nxos_txn(io)
    txn.record_open()
    assert txn.record_clock().by == "at" and any("went back" in n for n in txn.notes)


def test_klish_audit_log_of_the_sonic_hld():
    """The SONiC Audit Log HLD's own lines: klish commands as typed (exec ones are no edit), REST and sshd lines are
    not klish records; with no `configure terminal` seen, a successful non-exec line is a configuration line."""
    got = klish_audit(read("sonic-audit-log-hld.txt"), near(2020, 6, 1), set())
    assert [(e.user, e.path) for e in got] == [("admin", "tacacs-server key mykey"), ("admin", "no tacacs-server timeout")]
    assert got[0].at == calendar.timegm((2020, 6, 2, 22, 57, 9, 0, 0, 0))
    # the year-first form of a community SONiC build's syslog, ident klish
    line = '2026 Apr  9 06:36:16 sonic INFO mgmt-framework#klish: User "unknown" command "ntp server 192.0.2.1 iburst" status - success'
    assert [(e.user, e.path) for e in klish_audit(line, near(2030, 1, 1), set())] == [("unknown", "ntp server 192.0.2.1 iburst")]


def _klish(lines, user="admin"):
    """Audit-log lines of ``lines`` typed in that order, one a second (a leading "!": the command failed)."""
    return "\n".join('Nov 29 10:00:%02d.000001 leaf INFO mgmt-framework#clish: User "%s" command "%s" status - %s'
                     % (i, user, c.lstrip("!"), "failure" if c.startswith("!") else "success")
                     for i, c in enumerate(lines))


def test_klish_audit_tells_this_runs_lines_from_an_engineers_on_the_same_account():
    # the engineer, on the run's own account, types into the port whose line this run holds; the record has no
    # session: this run's lines are matched in order, the rest rebuild their own modes
    final = {"interface Eth1/1 > mtu 9100", "interface Eth1/2 > mtu 9100"}
    ours = ["configure terminal", "interface Eth1/1", "mtu 9100", "interface Eth1/2", "mtu 9100", "write memory"]
    text = _klish(["show running-configuration", "configure terminal", "interface Eth1/1",
                   "configure terminal", "interface Eth1/1", "mtu 1500", "end",          # the engineer
                   "mtu 9100", "interface Eth1/2", "mtu 9100", "end", "write memory"])
    got = klish_audit(text, NOV29, final, ours)
    theirs = [e.path for e in got if e.where != "klish (this run)"]
    mine = [e.path for e in got if e.where == "klish (this run)"]
    assert theirs == ["interface Eth1/1", "interface Eth1/1 > mtu 1500"]
    assert mine == ["interface Eth1/1", "interface Eth1/1 > mtu 9100", "interface Eth1/2", "interface Eth1/2 > mtu 9100"]
    lost = edits.overwritten(got, 0, {"interface Eth1/1 > mtu 9100", "interface Eth1/2 > mtu 9100"}, final)
    assert [e.path for e in lost] == ["interface Eth1/1 > mtu 1500"] and lost[0].user == "admin"
    # read as one stream (no alignment), the engineer's `end` closes this run's block too and its next port's line
    # lands at the top: the alignment is what keeps the two apart
    flat = klish_audit(text, NOV29, final)
    assert "mtu 9100" in [e.path for e in flat]


def test_klish_audit_failed_lines_set_nothing():
    assert klish_audit(_klish(["configure terminal", "interface Eth1/1", "!mtu 99999"]), NOV29, set()) == [
        Edit(calendar.timegm((2026, 11, 29, 10, 0, 1, 0, 0, 0)), "admin", "klish", "interface Eth1/1")]


def test_a_year_less_record_across_new_year_is_dated_in_the_window_not_a_year_off():
    """EOS's accounting, klish's audit log and sudo's records print no year. A run whose window opened at 23:59:50 on
    31 December and an engineer's edit stamped 00:00:05 on 1 January: dated in the window's year, the edit would lie a
    year before the window and be missed (SUCCESS over a lost edit); it is the next year's. And the other way round,
    a line of 31 December read in a window of 1 January is last year's."""
    start = near(2026, 12, 31, (23, 59, 50))
    new_year = calendar.timegm((2027, 1, 1, 0, 0, 5))
    eos = ("Jan  1 00:00:05 eos Aaa: %%ACCOUNTING-6-CMD: bob vty6 192.168.2.1 stop task_id=1 start_time=1.0 timezone=UTC "
           "service=shell priv-lvl=15 cmd=%s")
    got = eos_accounting("\n".join(eos % c for c in ("configure terminal", "hostname core1", "end")), start, set())
    assert [(e.path, e.at) for e in got] == [("hostname core1", new_year)]
    klish = 'Jan  1 00:00:05.000001 leaf INFO mgmt-framework#clish: User "bob" command "hostname core1" status - success'
    assert [e.at for e in klish_audit(klish, start, set())] == [new_year]
    sudo = ("Jan  1 00:00:05.000001 sw NOTICE sudo:    bob : TTY=pts/3 ; PWD=/home/bob ; USER=root ; "
            "COMMAND=/usr/local/bin/config hostname x")
    assert [at for at, _u, _t, _a in sudolog.records(sudo, start)] == [new_year]
    assert [at for at, _u, _t, _a in sudolog.records(sudo.replace("Jan  1", "Dec 31"), start + 20)] == [
        calendar.timegm((2026, 12, 31, 0, 0, 5))]
    assert edits.stamped("Feb", "29", "12:00:00", near(2028, 2, 28)) == calendar.timegm((2028, 2, 29, 12, 0, 0))
    assert edits.stamped("Foo", "1", "00:00:00", start) is None
