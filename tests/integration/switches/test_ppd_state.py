"""PPD forwarding state read over SSH from the EOS, NVUE and NX-OS simulators (issue 27 item 2): after the product
pushed its PBR policy (Applier, the switch_config path), switch_validate's reading (nos/ppd_state.py, netmiko, the
NOS's own show command in the format of its real capture) passes every host port; a pin moved by another engineer
is failed naming that host port, the others still pass."""
from helpers import applier, params, reset

from ansible_collections.aifabric.roce.plugins.module_utils.nos import ppd_state
from ansible_collections.aifabric.roce.plugins.module_utils.nos.connection import netmiko_factory
from ansible_collections.aifabric.roce.plugins.module_utils.nos.nvue import FIRST_BINDING_RULE
from ansible_collections.aifabric.roce.plugins.module_utils.nos.registry import get_driver

LEAFS = ("leaf1", "leaf2", "leaf3")   # eos, nvue, nxos in the lab fabric


def read(switch_lab, name):
    dev = switch_lab["devices"][name]
    drv = get_driver(dev["platform"])
    pins = drv.ppd_pins(dev["intent"])
    conn = netmiko_factory(params(switch_lab, name), drv)()
    try:
        outputs = [conn.send_command(c, read_timeout=30) for c in get_driver(dev["platform"]).ppd_read.commands(pins)]
    finally:
        conn.disconnect()
    return ppd_state.judge(get_driver(dev["platform"]), dev["intent"], pins, outputs)


def move(switch_lab, name, binding, other):
    """Another engineer re-points one host's pin at the other spine, in the NOS's own CLI."""
    dev = switch_lab["devices"][name]
    drv = get_driver(dev["platform"])
    pin = next(p for p in drv.ppd_pins(dev["intent"]) if p["binding"] == binding)
    conn = netmiko_factory(params(switch_lab, name), drv)()
    try:
        if dev["platform"] == "nvue":
            group = "AIF-NH-%s" % other.replace(".", "-")
            same_map = [p for p in drv.ppd_pins(dev["intent"]) if p["policy"] == pin["policy"]]
            rule = FIRST_BINDING_RULE + 10 * same_map.index(pin)   # the driver's rule numbers: one per pin, in order
            for cmd in ("nv set router pbr map %s rule %d action nexthop-group %s" % (pin["policy"], rule, group),
                        "nv config apply -y"):
                conn.send_command(cmd)
        elif dev["platform"] == "eos":
            conn.send_config_set(["policy-map type pbr %s" % pin["policy"], "class %s" % pin["match"], "set nexthop %s" % other])
        else:
            seq = [ln for ln in conn.send_command("show running-config").splitlines()
                   if ln.startswith("route-map %s permit " % pin["policy"])]
            # the sequences in order: local deny first, then one per binding
            index = dev["intent"]["bindings"].index(binding)
            conn.send_config_set([seq[index], "set ip next-hop %s" % other])
    finally:
        conn.disconnect()


def test_pushed_pins_pass_and_a_moved_pin_is_named(switch_lab):
    for name in LEAFS:
        reset(switch_lab, name)
        a = applier(switch_lab, name)
        before, after, cmds = a.plan()
        a.apply(before, after, cmds)
        a.close()
    for name in LEAFS:
        findings = read(switch_lab, name)
        assert len(findings) == 4 and [f["status"] for f in findings] == ["ok"] * 4, (name, findings)
        assert all(f["actual"].startswith("via 10.254.") for f in findings), findings
    for name in LEAFS:
        intent = switch_lab["devices"][name]["intent"]
        binding = intent["bindings"][2]
        other = next(b["next_hop"] for b in intent["bindings"] if b["next_hop"] != binding["next_hop"])
        move(switch_lab, name, binding, other)
        findings = read(switch_lab, name)
        failed = [f for f in findings if f["status"] != "ok"]
        assert len(failed) == 1 and "host port %s" % binding["ingress"] in failed[0]["message"], (name, findings)
        assert failed[0]["actual"].startswith("via %s " % other), failed
