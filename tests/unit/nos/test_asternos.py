"""AsterNOS on Easy RoCE's documented REST model (nos/asternos.py), checked against the REST manual's own read-back
sample (tests/fixtures/switches/asternos/manual-get-running-roce.txt) and the lab / rail512 plans."""
import json
import os

import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric import platforms
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.nos.base import DriverError, ports_of
from ansible_collections.aifabric.roce.plugins.module_utils.nos.fullconfig import image
from ansible_collections.aifabric.roce.plugins.module_utils.nos.offline import switch_files
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver
from ansible_collections.aifabric.roce.plugins.module_utils.nos.sources import audit, source_of

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SAMPLE = os.path.join(ROOT, "tests", "fixtures", "switches", "asternos", "manual-get-running-roce.txt")


def plan_of(inventory, **extra):
    with open(os.path.join(ROOT, "inventories", inventory, "group_vars", "all", "fabric.yml")) as fh:
        fabric = yaml.safe_load(fh)["fabric"]
    fabric["leafs"].pop("platform_overrides", None)
    fabric["leafs"]["platform"] = fabric["spines"]["platform"] = "asternos"
    fabric.update(extra)
    return build_plan(fabric)


@pytest.fixture(scope="module")
def lab():
    return plan_of("lab")


def test_the_manuals_read_back_sample_is_read(lab):
    """The manual's GET sample: a profile that is not ours stays outside, whole, generated objects included."""
    drv, leaf = get_driver("asternos"), lab["leafs"]["leaf0"]
    with open(SAMPLE) as fh:
        text = fh.read()
    img = image(drv, text, leaf, ("qos",))
    assert img.managed == ""
    assert "roce-profiles roce_lossless_5m_medium bind-interfaces Ethernet4:4" in img.outside
    assert "roce-profiles roce_lossless_5m_medium cable-length CABLE_5m" in img.outside
    assert "roce-profiles roce_lossless_5m_medium wred-profiles roce_lossless_5m_medium_200g_ecn" in img.outside
    # the same body with our name: our managed leaves in, what the switch generated reported, not compared
    mine = text.replace('"roce_lossless_5m_medium"', '"aif_roce"')
    assert drv.parse(mine, leaf).splitlines() == [
        "roce-profiles aif_roce bind-interfaces Ethernet11:3", "roce-profiles aif_roce bind-interfaces Ethernet24:3",
        "roce-profiles aif_roce bind-interfaces Ethernet4:4", "roce-profiles aif_roce cable-length CABLE_5m",
        "roce-profiles aif_roce mode lossless"]
    assert image(drv, mine, leaf, ("qos",)).outside == []
    assert drv.generated(mine)["buffer-profiles"] == ["roce_lossless_5m_medium_200g_profile"]


def test_an_error_answer_is_not_an_empty_config(lab):
    drv = get_driver("asternos")
    with pytest.raises(ValueError):
        image(drv, "curl: (7) Failed to connect to 127.0.0.1 port 443: Connection refused\n", lab["leafs"]["leaf0"], ("qos",))
    with pytest.raises(ValueError):
        image(drv, "<html>401</html>", lab["leafs"]["leaf0"], ("qos",))


def test_first_apply_is_the_manuals_post_then_patches_and_its_reverse_a_delete(lab):
    drv, leaf = get_driver("asternos"), lab["leafs"]["leaf0"]
    want = drv.render(leaf, lab["qos"])
    cmds = drv.commands(drv.diff("", want))
    assert cmds[0] == ("curl -sS -f -k --netrc-optional -X POST -H 'Content-Type: application/json' "
                       "-d '{\"mode\": \"lossless\", \"name\": \"aif_roce\"}' "
                       "https://127.0.0.1/rest/v1/running/roce/roce-profiles")
    assert [c.split(" -d ")[1].split("' ")[0] for c in cmds[1:]] == [
        "'{\"cable-length\": \"CABLE_40m\"}",
        "'" + json.dumps({"bind-interfaces": sorted(p["port"] for p in leaf["downlinks"] + leaf["uplinks"])})]
    assert drv.commands(drv.diff(want, "")) == [
        "curl -sS -f -k --netrc-optional -X DELETE https://127.0.0.1/rest/v1/running/roce/roce-profiles/aif_roce"]
    assert drv.commands(drv.diff(want, want)) == []


def test_sonic_native_sections_are_refused_naming_the_opt_in(lab):
    drv, leaf = get_driver("asternos"), lab["leafs"]["leaf0"]
    assert leaf["asternos_config"] == "easy_roce"
    msg = drv.refuse(leaf, lab["qos"], ["qos", "mtu", "pbr"])
    assert "mtu, pbr" in msg and "`asternos_config: config_db`" in msg and "not an Asterfusion-documented" in msg
    assert drv.refuse(leaf, lab["qos"], ["qos"]) is None
    assert drv.config_db_tables(leaf, lab["qos"]) is None
    assert sorted(switch_files("leaf0", leaf, lab["qos"], "leaf0")) == ["switches/leaf0.cfg"]


def test_the_opt_in_renders_community_sonic_config_db_and_refuses_to_apply_it():
    """`asternos_config: config_db`: the SONiC-native sections are community_sonic's CONFIG_DB tables (its own
    renderer, this switch's ports and MTU), written by plan.yml; applying them is refused like on community_sonic
    until the SONiC GCU transaction exists, before anything is sent."""
    plan = plan_of("lab", asternos_config="config_db")
    drv, qos = get_driver("asternos"), plan["qos"]
    for name, intent in (("leaf0", plan["leafs"]["leaf0"]), ("spine0", next(iter(plan["spines"].values())))):
        assert intent["asternos_config"] == "config_db"
        msg = drv.refuse(intent, qos, ["qos", "mtu", "pbr"])
        assert "section(s) mtu, pbr render as community SONiC CONFIG_DB" in msg
        assert "applying is not implemented yet (the SONiC GCU transaction: config checkpoint, config apply-patch, " \
               "config rollback)" in msg and "nothing was sent" in msg
        assert drv.refuse(intent, qos, ["qos"]) is None   # Easy RoCE QoS still applies
        tables = drv.config_db_tables(intent, qos)
        assert tables == get_driver("community_sonic").tables(intent, qos, ("mtu", "pbr", "underlay"))
        ports = ports_of(intent)
        assert ports and all(tables["PORT"][p] == {"mtu": "9216"} for p in ports)
        assert "BGP_NEIGHBOR" in tables and ("ACL_RULE" in tables) == (name == "leaf0")
        files = switch_files(name, intent, qos, name)
        assert sorted(files) == ["switches/%s.cfg" % name, "switches/%s.config_db.json" % name]
        assert json.loads(files["switches/%s.config_db.json" % name]) == tables
        assert "roce-profiles aif_roce mode lossless" in files["switches/%s.cfg" % name]


def test_a_profile_easy_roce_cannot_express_is_refused(lab):
    drv, leaf = get_driver("asternos"), lab["leafs"]["leaf0"]
    qos = dict(lab["qos"], lossless_priorities=[5], ecn_queue=5, cnp_priority=5)
    msg = drv.refuse(leaf, qos, ["qos"])
    assert "lossless_priorities [5]" in msg and "ecn_queue 5" in msg and "cnp_priority 5" in msg
    with pytest.raises(DriverError):
        drv.render(leaf, qos)


@pytest.mark.parametrize("inventory", ["lab", "rail512"])
def test_asternos_has_at_most_two_unverified_items(inventory):
    """Issue 25: a leaf and a spine on AsterNOS carry at most two unverified items, each rendered line being either
    the REST manual's own form or one of those items (named in its source note)."""
    plan = plan_of(inventory)
    drv = get_driver("asternos")
    items = set(item for item, _note in platforms.unverified("asternos"))
    for intent in (next(iter(plan["leafs"].values())), next(iter(plan["spines"].values()))):
        text = drv.render(intent, plan["qos"])
        missing, shaky = audit(get_driver("asternos"), text)
        assert not missing
        assert "roce-profiles aif_roce mode lossless" in text
        assert source_of(get_driver("asternos"), "roce-profiles aif_roce mode lossless")[0] == platforms.VERIFIED
        items |= set(source_of(get_driver("asternos"), line)[1].split(":")[0] for line in shaky)
    assert items == {"port_naming", "transaction"}, items


def test_the_capture_kit_is_read_only_and_records_what_the_driver_reads():
    """playbooks/capture.yml: every command a show, a REST GET (curl without -X/-d) or a --help; it records the driver's
    own read-back URL and the port names (klish and sonic-utilities tables, the REST interfaces resource)."""
    with open(os.path.join(ROOT, "playbooks", "capture.yml")) as fh:
        play = yaml.safe_load(fh)[0]
    rest = play["vars"]["capture_rest"]
    cmds = dict((c["name"], c["command"].replace("{{ capture_rest }}", rest)) for c in play["vars"]["capture_commands"])
    for name, cmd in cmds.items():
        if cmd.startswith("curl "):
            assert " -X " not in cmd and " -d " not in cmd, name
        elif cmd.startswith("config "):
            assert cmd.endswith(" --help"), name
        else:
            assert "show " in cmd or cmd == "curl --version", name
    assert cmds["rest-get-running-roce"].split()[-1] == get_driver("asternos").show_running.split()[-1]
    assert {"klish-show-interface-status", "show-interfaces-status", "rest-get-interfaces"} <= set(cmds)
