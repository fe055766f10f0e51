"""Who moved a line (nos/fullconfig.Changes): a line this run sent is never 'foreign', even where the device holds
it beyond the intended config (a batch refused midway on FRR applies the lines before the refused one)."""
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import Changes, Image

BASE = Image("", ["router bgp 65000 > bgp router-id 10.0.0.1", "hostname spine2"])


def test_a_line_this_run_sent_is_not_foreign():
    got = Image("", BASE.outside + ["router bgp 65000 > neighbor 10.254.0.250 remote-as 65099"])
    sent = ["router bgp 65000", " neighbor 10.254.0.250 remote-as 65099", "exit", "router bgp 65001"]
    assert Changes(BASE, BASE, got).foreign_added == ["router bgp 65000 > neighbor 10.254.0.250 remote-as 65099"]
    assert not Changes(BASE, BASE, got, sent=sent).foreign


def test_an_engineers_line_stays_foreign_and_a_removal_we_sent_is_ours():
    got = Image("", ["router bgp 65000 > bgp router-id 10.0.0.1", "hostname operator-was-here"])
    ch = Changes(BASE, BASE, got, sent=["no hostname spine2"])
    assert ch.foreign_added == ["hostname operator-was-here"] and ch.foreign_removed == []
    ch = Changes(BASE, BASE, got, sent=[])
    assert ch.foreign_removed == ["hostname spine2"]


def test_nvue_set_and_unset_forms():
    base = Image("", ["interface swp1 link mtu 9216"])
    got = Image("", ["router bgp graceful-shutdown on"])
    ch = Changes(base, base, got, sent=["nv set router bgp graceful-shutdown on", "nv unset interface swp1 link"])
    assert not ch.foreign
