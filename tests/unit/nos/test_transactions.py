"""Transaction helpers (pure): the reverse never removes an interface, the whole-config image sees changes
outside the managed view, an error page is never taken for a config, EOS session listing."""
import os

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import differences, image
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import DRIVERS, get_driver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.transactions import (
    CREATED,
    StepError, Transaction, _eos_sessions, check_safe)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# the text-line drivers; community_sonic (CONFIG_DB tables) has its own tests in test_sonic_db.py
TEXT_DRIVERS = [p for p in sorted(DRIVERS) if p != "community_sonic"]


@pytest.fixture(scope="module")
def plan():
    with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "fabric.yml")) as fh:
        return build_plan(yaml.safe_load(fh)["fabric"])


def test_every_driver_has_a_transaction_class():
    for name, cls in DRIVERS.items():
        assert issubclass(cls.transaction, Transaction), name
        for step in ("preflight", "begin", "stage", "commit", "save", "abort", "cleanup", "leftovers"):
            assert callable(getattr(cls.transaction, step)), (name, step)


@pytest.mark.parametrize("platform", TEXT_DRIVERS)
def test_reverse_takes_back_managed_lines_never_the_interface(plan, platform):
    """The audited bug: hier_config's reverse of an MTU-only change on a port with no managed line before
    is `no interface EthernetN` (wipes descriptions, addresses). Ours is `no <line>` under the interface."""
    drv = get_driver(platform)
    intent = dict(plan["leafs"]["leaf1"], platform=platform)
    # FRR carries no QoS or MTU (the Linux/ASIC layer's): its sections are the underlay and the PBR
    cases = {"frr": (("underlay",), ("underlay", "pbr")), "asternos": (("qos",),)}   # AsterNOS: Easy RoCE REST only
    for sections in cases.get(platform, (("mtu",), ("qos", "mtu", "pbr"))):
        applied = drv.render(intent, plan["qos"], sections)
        raw = drv.commands(drv.diff(applied, ""))
        back = drv.safe_reverse(applied, "")
        assert back, platform
        # a port is never removed; an SVI the PBR/underlay created may be (transactions.CREATED)
        assert not [c for c in back if (c.startswith("no interface") and not CREATED.match(c))
                    or c.strip() == "nv unset interface"], back
        if platform == "frr":
            # the FRR diff itself negates the lines inside `interface X` ... `exit`, never the interface
            assert back == raw
            i = back.index("interface vlan%d" % intent["host_interfaces"][0]["vlan"])
            block = back[i + 1:back.index("exit", i)]
            assert block and all(c.startswith("no ") for c in block), block
        elif platform == "asternos":
            # the reverse of a profile this run created is its DELETE (the REST manual's roce-profiles/{name} DELETE)
            assert back == raw and len(back) == 1 and " -X DELETE " in back[0] and back[0].endswith("/aif_roce"), back
        elif platform != "nvue":
            assert any(c.startswith("no interface") for c in raw), "the raw remediation would remove ports"
            port = drv.port(intent["downlinks"][0]["port"])
            i = back.index("interface %s" % port)
            block = []
            for c in back[i + 1:]:
                if not c.startswith(" "):
                    break
                block.append(c.strip())
            assert any(c.startswith("no mtu ") for c in block) and all(c.startswith("no ") for c in block), block
        else:
            assert all(c.startswith("nv unset ") and len(c.split()) > 4 for c in back if "interface" in c), back


def test_check_safe_refuses_whole_interface_removal():
    with pytest.raises(StepError, match="removes a whole interface"):
        check_safe(["interface Ethernet1", " no mtu 9216", "no interface Ethernet2"])
    with pytest.raises(StepError):
        check_safe(["nv unset interface swp3"])
    check_safe(["nv unset interface swp3 link mtu", "no interface-profile X"])
    # the SVI / loopback the underlay created may be taken back (EOS keeps an emptied SVI); a port never
    check_safe(["no interface Vlan100", "no interface loopback0", "no interface Loopback0"])
    with pytest.raises(StepError):
        check_safe(["no interface Eth1/1"])
    with pytest.raises(StepError):
        check_safe(["no interface Vlan100.5"])


def test_image_sees_damage_outside_the_managed_view(plan):
    drv = get_driver("eos")
    intent = dict(plan["leafs"]["leaf1"], platform="eos")
    port = intent["downlinks"][0]["port"]
    base = "hostname leaf1\n!\ninterface %s\n   description uplink to gpu01\n!\n" % port
    before = image(drv, base, intent, ("mtu",))
    changed = image(drv, base.replace("description uplink to gpu01", "description uplink to gpu01\n   mtu 9214"), intent, ("mtu",))
    assert changed.outside == before.outside and changed.managed != before.managed
    wiped = image(drv, "hostname leaf1\n!\n", intent, ("mtu",))
    assert wiped.managed == before.managed and wiped != before, "a removed interface must show"
    assert "interface %s > description uplink to gpu01" % port in differences(wiped, before)
    assert before.digest() == image(drv, base, intent, ("mtu",)).digest() != wiped.digest()


@pytest.mark.parametrize("platform,page", [("eos", "% Invalid input (privileged mode required)"), ("nxos", "ERROR: permission denied"),
                                           ("dell_sonic", "%Error: Invalid input detected"), ("nvue", "Error: Invalid command"),
                                           ("eos", "")])
def test_error_page_is_never_an_empty_config(plan, platform, page):
    drv = get_driver(platform)
    with pytest.raises(ValueError, match="did not return a config"):
        image(drv, page, dict(plan["leafs"]["leaf1"], platform=platform), ("mtu",))


def test_nvue_real_capture_image_is_stable(plan):
    path = os.path.join(ROOT, "tests", "fixtures", "switches", "nvue", "cl-dci-borderleaf01-nv-config-show-commands.txt")
    with open(path) as fh:
        text = fh.read()
    drv = get_driver("nvue")
    intent = dict(plan["leafs"]["leaf2"], platform="nvue")
    a, b = image(drv, text, intent, ("qos", "mtu", "pbr")), image(drv, text, intent, ("qos", "mtu", "pbr"))
    assert a == b and a.outside and a.digest() == b.digest()
    assert not any(p.startswith("interface swp1 link mtu") for p in a.outside)


def test_eos_session_listing():
    text = ("Maximum number of completed sessions: 1\nMaximum number of pending sessions: 5\n\n"
            "  Name          State                  User     Terminal\n  ------------- ---------------------- -------- --------\n"
            "  operator1     pending                admin    vty5\n* aif-1-2       pendingCommitTimer     admin    vty6\n"
            "  old           completed              admin    vty7\n")
    assert _eos_sessions(text) == [("operator1", "pending"), ("aif-1-2", "pending"), ("old", "completed")]


def test_a_device_that_cannot_be_reached_is_a_connect_error_the_report_calls_unreachable():
    # netmiko's own exception and wording (base_connection.establish_connection) for a refused TCP port
    from netmiko.exceptions import NetmikoTimeoutException
    from ansible_collections.aifabric.roce.plugins.module_utils.audit.report import entry_from_result
    from ansible_collections.aifabric.roce.plugins.module_utils.nos.session import ConnectError, DeviceIO

    def connect():
        raise NetmikoTimeoutException("TCP connection to device failed.\n\nCommon causes of this problem are:\n"
                                      "1. Incorrect hostname or IP address.\n2. Wrong TCP port.")
    io = DeviceIO(get_driver("eos"), connect, read_timeout=5, reconnect_timeout=0)
    with pytest.raises(ConnectError) as caught:
        io.run("read", "show running-config")
    assert caught.value.reason == "NetmikoTimeoutException: TCP connection to device failed."
    assert io.conn is None and "no answer within" not in str(caught.value)
    # the message switch_config fails with for it
    result = {"failed": True, "msg": "cannot connect to 10.0.0.1:22: %s; nothing was sent" % caught.value.reason}
    assert entry_from_result("leaf1", "switch", "switch", result)["status"] == "unreachable"
    # a device that answers but rejects the read is a failed check, not an unreachable one
    rejected = {"failed": True, "msg": "cannot read running config from 10.0.0.1:22: step read, command "
                                       "'show running-config': the device rejected it; device said: % Invalid input"}
    assert entry_from_result("leaf1", "switch", "switch", rejected)["status"] == "fail"
