"""Public brownfield running configs against the lab plan (issue 26 item 6, brownfield-turn4.md): each first apply
is either refused by the takeover guard, naming what it would replace, or adds only. Sources:
tests/fixtures/switches/brownfield/SOURCE.md."""
import os

import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.nos import takeover
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import image
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

from .helpers import ROOT
from .test_takeover import sections_of, slice_of

FIX = os.path.join(ROOT, "tests", "fixtures", "switches")
CONFIGS = [
    ("eos", "eos/veos-4.21-leaf-running-config.txt"),
    ("eos", "eos/veos-4.29.2f-leaf-bgp-65001-ospf-running-config.txt"),
    ("nxos", "nxos/nxos-9.3.2-leaf-bgp-ospf-running-config.txt"),
    ("nxos", "nxos/cisco-nxos-bgp-global-running-config-section-router-bgp.txt"),
    ("nvue", "nvue/cl-dci-borderleaf01-nv-config-show-commands.txt"),
    ("nvue", "brownfield/nvue/cl-dci-route-leaking-border01-nv-config-show-commands.txt"),
    ("dell_sonic", "sonic/dell-bgp-af-running-configuration-bgp.txt"),
    ("dell_sonic", "sonic/dell-qos-interfaces-running-configuration-eth1-5.txt"),
    ("dell_sonic", "sonic/dell-fbs-policies-running-configuration.txt"),
    ("dell_sonic", "sonic/dell-ecmp-load-share-running-configuration.txt"),
]
# the EOS/Dell configs name ports the plan's lab leaf uses too. AsterNOS no longer reads klish (issue 25: Easy RoCE's
# REST model only); its brownfield case, a foreign Easy RoCE profile on a planned port, is in test_asternos/test_takeover
EXTRA = []


def verdict(platform, path, name):
    """(items, removed paths) of a first apply of the lab plan's ``name`` onto the config."""
    with open(os.path.join(FIX, path)) as fh:
        running = fh.read()
    driver, intent = get_driver(platform), slice_of(platform, name)
    sections = sections_of(driver, intent)
    before = image(driver, running, intent, sections)
    after = driver.render(intent, intent["qos"], sections)
    removed = sorted(set(driver.paths(before.managed)) - set(driver.paths(after)))
    return takeover.find(driver, before, after, intent, sections), removed


@pytest.mark.parametrize("platform,path", CONFIGS + EXTRA)
@pytest.mark.parametrize("name", ["leaf0", "spine1"])
def test_no_unsafe_first_apply(platform, path, name):
    items, removed = verdict(platform, path, name)
    # unsafe = the plan replaces or removes a line of the switch and the guard names nothing
    assert items or not removed, (platform, path, name, removed[:10])


def test_the_verdicts_name_what_the_reviews_found():
    # Cumulus border leaf with unnumbered uplinks in peer groups: the ASN and the loopback in `ip address` form
    items, _removed = verdict("nvue", CONFIGS[5][1], "leaf0")
    kinds = takeover.messages(items)
    assert any(m.startswith("router bgp autonomous-system 65110 (plan: 4200001000) would be replaced") for m in kinds)
    assert "interface lo ip address 10.10.10.10/32 (plan: 10.255.0.1/32) would be replaced" in kinds
    # the vEOS 4.21 leaf as the lab's spine1: its host port Ethernet7 (access VLAN 20) would become a routed downlink
    items, _removed = verdict("eos", CONFIGS[0][1], "spine1")
    assert "interface Ethernet7 switchport access vlan 20 (plan: none) would be removed: the port leaves its VLAN" \
        in takeover.messages(items)
