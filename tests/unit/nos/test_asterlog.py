"""AsterNOS's concurrent-edit record (nos/asterlog.py): klish's command log and sudo's records, as the switch's Linux
shell reads them. Line formats: the klish hook's (sonic-mgmt-framework hook_log.c.diff, the SONiC Audit Log HLD's
examples in tests/fixtures/switches/accounting/sonic-audit-log-hld.txt) and SONiC's rsyslog sudo line (nos/sudolog.py)."""
import calendar

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos import asterlog, edits, sudolog
from ansible_collections.aifabric.roce.plugins.module_utils.nos.asternos import AsterNosDriver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import AsterNosRestTxn, _klish_records

HLD = "tests/fixtures/switches/accounting/sonic-audit-log-hld.txt"
T0 = calendar.timegm((2026, 11, 29, 5, 40, 0, 0, 0, 0))
LOG = """\
Nov 29 05:39:58.100000 leaf0 INFO mgmt-framework#clish: User "admin" command "qos roce profile aif_roce cable-length CABLE_7m" status - success
Nov 29 05:40:01.100000 leaf0 INFO mgmt-framework#clish: User "bob" command "configure terminal" status - success
Nov 29 05:40:02.100000 leaf0 INFO mgmt-framework#clish: User "bob" command "qos roce profile aif_roce cable-length CABLE_99m" status - success
Nov 29 05:40:02.300000 leaf0 INFO mgmt-framework#clish: User "bob" command "qos roce profile aif_roce bind-interfaces Ethernet1" status - success
Nov 29 05:40:02.400000 leaf0 INFO mgmt-framework#clish: User "bob" command "qos roce profile aif_roce mode lossy" status - failure
Nov 29 05:40:02.500000 leaf0 INFO mgmt-framework#clish: User "bob" command "show qos roce" status - success
Nov 29 05:40:02.600000 leaf0 INFO mgmt-framework#clish: User "bob" command "interface Ethernet1" status - success
Nov 29 05:40:03.534159 leaf0 NOTICE sudo:    carol : TTY=pts/2 ; PWD=/home/carol ; USER=root ; COMMAND=/usr/local/bin/config hostname x
Nov 29 05:40:03.634159 leaf0 NOTICE sudo:    carol : TTY=pts/2 ; PWD=/home/carol ; USER=root ; COMMAND=/usr/local/bin/config interface mtu Ethernet1 1500
Nov 29 05:40:03.734159 leaf0 NOTICE sudo:    carol : TTY=pts/2 ; PWD=/home/carol ; USER=root ; COMMAND=/usr/local/bin/config qos reload
Nov 29 05:40:03.834159 leaf0 NOTICE sudo:    admin : TTY=pts/4 ; PWD=/home/admin ; USER=root ; COMMAND=/usr/bin/grep -h x
"""


def parse(text, since=T0 - 1):
    klish = [(at, m.group("user"), m.group("cmd")) for at, m in _klish_records(text, T0) if m.group("res") == "success"]
    return asterlog.edits(klish, sudolog.records(text, T0), since)


def test_the_hook_format_of_the_hld_is_read():
    with open(HLD) as fh:
        text = fh.read()
    got = [(m.group("user"), m.group("cmd")) for _at, m in _klish_records(text, T0)]
    assert ("admin", "tacacs-server key mykey") in got and ("admin", "show tacacs-server global") in got


def test_easy_roce_lines_and_config_db_writers_in_the_window_are_edits():
    got = parse(LOG)
    assert [(e.user, e.where, e.path.split(" (")[0]) for e in got] == [
        ("bob", "klish", "roce-profiles aif_roce cable-length CABLE_99m"),
        ("bob", "klish", "`qos roce profile aif_roce bind-interfaces Ethernet1`"),
        ("carol", "pts/2", "`config qos reload`")]
    assert "possibly overwritten" in got[1].path and "possibly overwritten" in got[2].path
    assert got[0].at == T0 + 2


def test_before_the_window_nothing_counts():
    assert parse(LOG, since=T0 + 4) == []
    assert [e.path for e in parse(LOG, since=T0 + 3)] == [parse(LOG)[-1].path]


def test_a_mapped_edit_is_lost_only_where_the_switch_no_longer_holds_it():
    got = parse(LOG)
    final = {"roce-profiles aif_roce cable-length CABLE_5m", "roce-profiles aif_roce mode lossless"}
    lost = edits.overwritten(got, T0 - 1, set(), final)
    assert "overwrote a concurrent edit by bob at 2026-11-29 05:40:02 (klish): roce-profiles aif_roce cable-length " \
           "CABLE_99m" in [edits.describe(e) for e in lost]
    kept = edits.overwritten(got[:1], T0 - 1, set(), final | {"roce-profiles aif_roce cable-length CABLE_99m"})
    assert kept == []


def test_the_files_read_are_those_that_exist_and_none_means_not_checked():
    assert asterlog.present("ls: cannot access '/var/log/auth.log': No such file or directory\n/var/log/audit.log\n"
                            "/var/log/syslog\n") == ["/var/log/audit.log", "/var/log/syslog"]
    with pytest.raises(ValueError, match="none of /var/log/audit.log"):
        asterlog.present("ls: cannot access '/var/log/audit.log': No such file or directory\n")
    assert asterlog.read_command(["/var/log/syslog"]).endswith(" /var/log/syslog")


class FakeTxn(AsterNosRestTxn):
    """The record methods over canned shell answers (no SSH)."""

    def __init__(self, answers):
        self.answers, self.sent, self.notes = answers, [], []

    def _shell(self, step, command, verify_echo=True):
        self.sent.append(command)
        answer = self.answers[len(self.sent) - 1]
        return answer if isinstance(answer, tuple) else (0, answer)


def test_the_transaction_reads_the_existing_files_and_notes_a_missing_klish_log():
    assert AsterNosDriver.transaction is AsterNosRestTxn and AsterNosRestTxn.edit_record == asterlog.RECORD
    txn = FakeTxn(["/var/log/syslog\n", LOG])
    got = txn.recorded_edits(edits.Window("at", T0 - 1, T0), set())
    assert txn.sent == [asterlog.LIST, asterlog.read_command(["/var/log/syslog"])]
    assert len(got) == 3 and any("/var/log/audit.log is absent" in n for n in txn.notes)
    with pytest.raises(ValueError):
        FakeTxn([""]).recorded_edits(edits.Window("at", T0 - 1, T0), set())


WINDOW = edits.Window("at", T0 - 1, T0)
KLISH_ONLY = "".join(line + "\n" for line in LOG.splitlines() if " sudo: " not in line)


@pytest.mark.parametrize("answer,why", [
    ((1, "sudo: a password is required\n"), "exit status 1"),
    ((2, "grep: /var/log/syslog: Permission denied\n"), "exit status 2"),
    ((1, ""), "no klish line and not even this read's own sudo record"),
    ((0, LOG.replace("COMMAND=/usr/bin/grep", "COMMAND=/usr/bin/cat")), None),
])
def test_a_read_that_proves_nothing_is_not_a_check(answer, why):
    """sudo refusing (-n), grep failing, or records without this read's own sudo line (sudo logs a command before it
    runs it) and without any klish line: ValueError, so editcheck says the check did NOT run."""
    txn = FakeTxn(["/var/log/audit.log\n/var/log/syslog\n", answer])
    if why is None:   # klish lines but not the read's own sudo record: read, with a note that sudo's were not found
        assert len(txn.recorded_edits(WINDOW, set())) == 3
        assert any("only klish's command log was read" in n for n in txn.notes), txn.notes
        return
    with pytest.raises(ValueError, match=why):
        txn.recorded_edits(WINDOW, set())


def test_klish_lines_without_sudo_records_are_still_read():
    txn = FakeTxn(["/var/log/audit.log\n", (0, KLISH_ONLY)])
    assert [e.user for e in txn.recorded_edits(WINDOW, set())] == ["bob", "bob"]
    assert any("only klish's command log was read" in n for n in txn.notes), txn.notes
