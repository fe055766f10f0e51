# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The platform table: one entry per switch OS, the single place that says how each NOS names its
ports, which netmiko device types reach it, its MTU limits, its transaction mechanism and which
features the drivers render for it -- each with the source that backs it, or ``unverified``.

The schema's platform choices, the planner's port names, the NOS driver registry (a unit test
checks it offers a driver for every entry), the plan report and docs/platforms.md (tools/gen_docs.py)
all read this table. Pure Python, no Ansible imports.

Port naming is per NOS x switch model: the model says which physical ports a role uses, how many
serdes lanes a physical port has (``lanes``) and how it is broken out (``breakout``); the NOS says
what the device calls the result. ``sub`` below is the 1-based logical port within a physical port.
"""

from __future__ import annotations

import re

VERIFIED = "verified"
UNVERIFIED = "unverified"


def _eos_port(port, sub, breakout, lanes):
    # EOS exposes one interface per lane of a multi-lane cage (an 8-lane OSFP port 1 is Ethernet1/1 ..
    # Ethernet1/8); a logical port is named after its first lane, so 2x200G on 8 lanes is /1 and /5.
    # Single-lane ports (SFP, RJ45, cEOS-lab) are Ethernet<port>.
    if lanes <= 1:
        return "Ethernet%d" % port
    return "Ethernet%d/%d" % (port, 1 + (sub - 1) * (lanes // breakout))


def _nxos_port(port, sub, breakout, lanes):
    # Fixed Nexus 9000: module 1; a broken-out port gets a third, sequential sub-port number.
    return "Ethernet1/%d" % port if breakout == 1 else "Ethernet1/%d/%d" % (port, sub)


def _nvue_port(port, sub, breakout, lanes):
    # Cumulus Linux: swp<port>; breakout children swp<port>s0 .. s<n-1> (0-based).
    return "swp%d" % port if breakout == 1 else "swp%ds%d" % (port, sub - 1)


def _dell_port(port, sub, breakout, lanes):
    # Dell Enterprise SONiC standard interface naming: Eth1/<port>, breakout Eth1/<port>/<sub>.
    return "Eth1/%d" % port if breakout == 1 else "Eth1/%d/%d" % (port, sub)


def _sonic_native_port(port, sub, breakout, lanes):
    # SONiC native naming: Ethernet<index of the first lane>, 0-based over the whole front panel.
    return "Ethernet%d" % ((port - 1) * lanes + (sub - 1) * (lanes // breakout))


def _fact(status, source, rendered=True):
    """One feature of a platform: whether the driver renders it, and whether a source backs that."""
    return {"rendered": rendered, "status": status, "source": source}


_AVD = "aristanetworks/avd eos_cli_config_gen templates (pyavd oracle test, tests/unit/nos/test_eos_pyavd_oracle.py)"
_NVUE_QOS = ("CumulusNetworks/docs content/cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/_index.md; "
             "NVUE OpenAPI schema (nvueschema oracle test, tests/unit/nos/test_nvue_schema_oracle.py)")
_ROCE_ENABLE = "paregupt/nx-os utils/roce_enable.py (Cisco engineer's RoCE script)"
_SONIC_YANG = ("%s: sonic-buildimage src/sonic-yang-models (yanglint oracle test, tests/unit/nos/test_sonic_yang_oracle.py); "
               "files/build_templates/qos_config.j2")
_DELL = "ansible-collections/dellemc.enterprise_sonic module examples; sonic-net/SONiC doc/qos/SONiC_ROCEv2_support.md"

PLATFORMS = {
    "eos": {
        "vendor": "Arista", "os": "EOS",
        "device_type": "arista_eos",
        "port_naming": {
            "function": _eos_port,
            "rule": "`Ethernet<port>` on single-lane ports; `Ethernet<port>/<first lane>` on multi-lane ports "
                    "(8-lane 2x200G: `/1`, `/5`; 4x100G: `/1`, `/3`, `/5`, `/7`)",
            "example": "Ethernet1/5",
            "status": VERIFIED,
            "source": "Arista EOS manual, Layer 1 Profiles (arista.com/en/um-eos/eos-layer-1-profiles): \"An OSFP "
                      "transceiver cage ... numbered port 1 exposes 8 interfaces, Ethernet1/1 to Ethernet1/8 ... an RJ45 "
                      "port only exposes a single interface with a number that matches the port number\"",
        },
        # Arista's IP MTU ceiling is 9214 (frame 9236): AVD p2p_uplinks_mtu default 9214; Arista forum.
        "mtu": {"l3_max": 9214, "l2_max": 9236, "status": VERIFIED,
                "source": "aristanetworks/avd pyavd/_eos_designs/schema/schema_fragments/p2p_uplinks_mtu.schema.yml "
                          "(default 9214); eos.arista.com/forum/jumbo-frame-mtu-sizes/ (\"Max MTU in Arista -> 9214\", "
                          "L2 frame 9236). The driver renders the L3 value on every port"},
        "transaction": {"mechanism": "configure session (commit / commit timer / abort)", "status": VERIFIED,
                        "source": "Arista EOS manual, Configuration sessions; AVD eos_config_deploy_cvp/eapi"},
        "read_command": "show running-config",
        "features": {
            "dscp_map": _fact(VERIFIED, _AVD + " qos.j2"),
            "pfc": _fact(VERIFIED, _AVD + " ethernet-interfaces.j2"),
            "pfc_watchdog": _fact(VERIFIED, _AVD + " ethernet-interfaces.j2 / priority-flow-control.j2; global timers "
                                  "and action as printed by EOS 4.35.1F (tests/fixtures/switches/eos/)"),
            "ecn": _fact(VERIFIED, _AVD + " ethernet-interface-tx-queues.j2"),
            "strict_priority": _fact(VERIFIED, _AVD + " tx_queues priority"),
            "ets": _fact(VERIFIED, _AVD + " qos_profiles tx_queues (`no priority`, `bandwidth percent`) on the RoCE "
                         "queue and tx-queue 1 (best effort: DSCP 0 is traffic class 1 on EOS's default map); "
                         "printed so by EOS 4.34 (tests/fixtures/switches/eos/)"),
            "lossless_buffers": _fact(VERIFIED, "platform-managed on EOS: no buffer command in AVD's RoCE/QoS templates "
                                                "(review ../shared/reviews/switch-correctness.md §7)"),
            "pbr": _fact(VERIFIED, _AVD + " class-maps-pbr.j2 / policy-maps-pbr.j2"),
        },
    },
    "nxos": {
        "vendor": "Cisco", "os": "NX-OS (Nexus 9000)",
        "device_type": "cisco_nxos",
        "port_naming": {
            "function": _nxos_port,
            "rule": "`Ethernet1/<port>`; breakout `Ethernet1/<port>/<sub>` (sub-ports 1..n)",
            "example": "Ethernet1/1/2",
            "status": VERIFIED,
            "source": "Cisco NX-API REST reference 7.x \"Configuring Breakout on High-Bandwidth Interfaces\" "
                      "(developer.cisco.com/docs/nx-os-n3k-n9k-api-ref-7-x/, `interface breakout module 1 port ... map`, "
                      "`show system internal im info interface ethernet 1/1/1`)",
        },
        "mtu": {"l3_max": 9216, "l2_max": 9216, "status": VERIFIED,
                "source": "Cisco TechNote 118994 \"Configure and Verify Maximum Transmission Unit on Nexus Platforms\"; "
                          + _ROCE_ENABLE + " (`mtu 9216`)"},
        "transaction": {"mechanism": "checkpoint / rollback running-config checkpoint", "status": VERIFIED,
                        "source": "Cisco Nexus 3000/9000 NX-API REST SDK guide 9.3x, Configuring Checkpoints and Rollback"},
        "read_command": "show running-config",
        "features": {
            "dscp_map": _fact(VERIFIED, _ROCE_ENABLE),
            "pfc": _fact(VERIFIED, _ROCE_ENABLE + "; Cisco N9K QoS guide 7.x (manualslib 2396766 p.172)"),
            "pfc_watchdog": _fact(VERIFIED, _ROCE_ENABLE),
            "ecn": _fact(VERIFIED, _ROCE_ENABLE),
            "strict_priority": _fact(VERIFIED, _ROCE_ENABLE),
            "ets": _fact(VERIFIED, _ROCE_ENABLE + " (`bandwidth remaining percent` on q3 and q-default)"),
            "lossless_buffers": _fact(VERIFIED, "network-qos class MTU and pause (" + _ROCE_ENABLE + "); buffers are "
                                                "platform-managed on Nexus 9000"),
            "pbr": _fact(UNVERIFIED, "route-map deny/permit semantics: Cisco N9K Unicast Routing guide 10.5x, Configuring "
                                     "Policy-Based Routing; the `feature pbr`, `match ip address` and `ip policy "
                                     "route-map` lines themselves: community sources only"),
        },
    },
    "nvue": {
        "vendor": "NVIDIA", "os": "Cumulus Linux 5.x (NVUE)",
        "device_type": "cumulus_linux",
        "port_naming": {
            "function": _nvue_port,
            "rule": "`swp<port>`; breakout `swp<port>s<sub-1>` (children from s0)",
            "example": "swp1s1",
            "status": VERIFIED,
            "source": "NVUE reference, Profile-Based Configuration (docs.nvidia.com/networking-ethernet-software/"
                      "nvue-reference/Set-and-Unset-Commands/Profile-Based-Configuration/): \"With breakout 4x, parent "
                      "ports swp1 through swp32 split into sub-interfaces swp1s0 through swp32s3\"",
        },
        "mtu": {"l3_max": 9216, "l2_max": 9216, "status": VERIFIED,
                "source": "Cumulus Linux 5.9 user guide, Switch Port Attributes (\"ifupdown2 assigns 9216 as the default "
                          "MTU\"); NVUE schema (nvueschema) link mtu range"},
        "transaction": {"mechanism": "NVUE revision (nv set, nv config apply, nv config detach)", "status": VERIFIED,
                        "source": "Cumulus Linux user guide, NVUE CLI (config apply / detach)"},
        "read_command": "nv config show -o commands",
        "features": {
            "dscp_map": _fact(VERIFIED, _NVUE_QOS),
            "pfc": _fact(VERIFIED, _NVUE_QOS),
            "pfc_watchdog": _fact(VERIFIED, _NVUE_QOS),
            "ecn": _fact(VERIFIED, _NVUE_QOS),
            "strict_priority": _fact(VERIFIED, _NVUE_QOS),
            "ets": _fact(VERIFIED, _NVUE_QOS + " (RoCE default ETS: TC3 50 / TC0 50 DWRR, TC6 strict); `mode dwrr` + "
                         "`bw-percent` on the RoCE and default classes; the complete DSCP map leaves no traffic in "
                         "the other classes, so their default-global weights share nothing (not measured on a switch)"),
            "lossless_buffers": _fact(VERIFIED, _NVUE_QOS + " (Flow Control Buffers: `nv set qos traffic-pool "
                                      "default-lossless memory-percent 50` before PFC); headroom and cable "
                                      "length stay at the platform defaults"),
            "pbr": _fact(VERIFIED, "NVUE reference, Set and Unset Commands / PBR and Router Nexthop"),
        },
    },
    "dell_sonic": {
        "vendor": "Dell / Broadcom", "os": "Enterprise SONiC (klish)",
        "device_type": "dell_sonic",
        "port_naming": {
            "function": _dell_port,
            "rule": "standard naming `Eth1/<port>`; breakout `Eth1/<port>/<sub>`",
            "example": "Eth1/5",
            "status": VERIFIED,
            "source": "dellemc.enterprise_sonic plugins/modules/sonic_qos_interfaces.py EXAMPLES (`interface Eth1/5`) for "
                      "the unbroken form; sonic_port_breakout.py EXAMPLES (`show interface breakout`: 4x10G -> "
                      "`Eth1/1/1`..`Eth1/1/4`, Default -> `Eth1/11`) for the breakout form (tests/fixtures/switches/sonic/)",
        },
        "mtu": {"l3_max": 9216, "l2_max": 9216, "status": UNVERIFIED,
                "source": "no Dell page read for the MTU ceiling; SONiC's port MTU range tops at 9216 (community)"},
        "transaction": {"mechanism": "computed reverse (no klish session)", "status": VERIFIED,
                        "source": "sonic-mgmt-framework klish tree has no configure session (review §3.4)"},
        "read_command": "show running-configuration",
        "features": {
            "dscp_map": _fact(VERIFIED, _DELL + " (sonic_qos_maps)"),
            "pfc": _fact(VERIFIED, _DELL + " (sonic_qos_interfaces)"),
            "pfc_watchdog": _fact(VERIFIED, _DELL + " (sonic_qos_interfaces `priority-flow-control watchdog action` / "
                                  "`on detect-time` / `restore-time`)"),
            "ecn": _fact(VERIFIED, _DELL + " (sonic_qos_wred); noolex/sonic-mgmt-framework CLI/actioner/sonic_cli_wred.py"),
            "strict_priority": _fact(VERIFIED, "sonic-net/SONiC doc/qos/SONiC_ROCEv2_support.md (`type strict`)"),
            "ets": _fact(VERIFIED, "sonic-net/SONiC doc/qos/SONiC_ROCEv2_support.md ETS example (`queue N` / `type dwrr` / "
                                   "`weight W`); dellemc sonic_qos_scheduler (scheduler_type dwrr, weight)"),
            "lossless_buffers": _fact(VERIFIED, "dellemc.enterprise_sonic plugins/modules/sonic_qos_buffer.py "
                                                "(`buffer init lossless`)"),
            "pbr": _fact(VERIFIED, "dellemc.enterprise_sonic sonic_fbs_*; Broadcom FBS HLD"),
        },
    },
    "asternos": {
        "vendor": "Asterfusion", "os": "AsterNOS (data center, v3.1: Easy RoCE REST)",
        "device_type": "asterfusion_asternos",
        # the fabric key the plan copies onto every switch of this platform, with its default; fabric/schema.py takes
        # it into the intent's schema with this doc
        "opt_in": {"key": "asternos_config", "default": "easy_roce", "choices": ["easy_roce", "config_db"],
                   "example": "config_db", "drives": "Sections the AsterNOS driver renders.",
                   "doc": "How switches on platform `asternos` are configured. `easy_roce` (default): only "
                          "lossless QoS, through Asterfusion's documented Easy RoCE REST model (the switch computes "
                          "thresholds, weights and buffers); MTU, the PPD policy routes and the underlay are not "
                          "configured on them. `config_db`: also those, through community SONiC's CONFIG_DB, which is "
                          "SONiC-native, not an Asterfusion-documented interface: plan.yml renders them, applying "
                          "them is refused until the SONiC GCU transaction exists (docs/platforms.md#asternos)."},
        "port_naming": {
            "function": _sonic_native_port,
            "rule": "SONiC native naming `Ethernet<first lane index>` (0-based; 8-lane port 2 is `Ethernet8`): a guess. "
                    "Asterfusion's samples show `Ethernet1`, `Ethernet52`, `Ethernet4:4` (front-panel numbers with a "
                    "breakout suffix, it seems). Take the names from the switch (`show interface status`, recorded by "
                    "playbooks/capture.yml) and set them with the switch model's `port_name`",
            "example": "Ethernet8",
            "status": UNVERIFIED,
            "source": "Easy RoCE REST manual samples `Ethernet4:4`, `Ethernet11:3`, `Ethernet1`, `Ethernet52` "
                      "(docs.asternos.com/zh/aidc/restapi-manual/easy-roce/); the lane formula is SONiC's, not Asterfusion's. "
                      "Asterfusion's own community-SONiC port table for the CX532P-M-H names ports a third way, `Ethernet1`, "
                      "`Ethernet5`, ... `Ethernet125` (first lane + 1, aliases `C1`..`C32`; wanglin1228/asternos_patches"
                      "@5682eb87 device/asterfusion/x86_64-asterfusion_cx532p_n-r0/CX532P-M-H_FL00E03/CX532P-M-H/"
                      "port_config.ini): that is community SONiC on that box, not AsterNOS, so no formula is assumed. The REST "
                      "manual's Preface names an interfaces resource (`https://{switch ip}/rest/v1/interfaces`, "
                      "docs.asternos.com/aidc/fTnI-preface), which playbooks/capture.yml records",
        },
        # MTU is not configured on AsterNOS (no Asterfusion-documented interface); the opt-in's CONFIG_DB path
        # carries its own sources (community SONiC)
        "mtu": {"l3_max": 9216, "l2_max": 9216, "status": VERIFIED, "rendered": False,
                "source": "not configured by this collection on AsterNOS (fabric.asternos_config: easy_roce)"},
        "transaction": {"mechanism": "Easy RoCE REST calls with curl on the switch, computed reverse of the managed "
                                     "REST leaves, read-back check", "status": UNVERIFIED,
                        "source": "REST request details no readable Asterfusion page shows: the endpoint reached from the "
                                  "switch's shell (`https://127.0.0.1`, the manual shows `HTTPS://{switch IP}`), "
                                  "authentication (curl --netrc-optional), PATCH bodies (the tree's leaf names with values "
                                  "in the GET sample's form, e.g. `CABLE_40m`; only `CABLE_5m` is shown), the status codes. "
                                  "Paths, methods, POST body and the GET read-back: Easy RoCE REST manual "
                                  "(docs.asternos.com/zh/aidc/restapi-manual/easy-roce/, AsterNOS v3.1 R0500)"},
        "read_command": "curl -sS -f -k --netrc-optional https://127.0.0.1/rest/v1/running/roce",
        "features": dict(
            [(name, _fact(VERIFIED, "computed by the switch, not by this collection: Easy RoCE \"applies the default DSCP "
                                    "mapping, with PFC and ECN enabled for queue 3 and 4, and strict priority scheduling "
                                    "set for queue 6 and 7\", buffers and thresholds from the cable length (Easy RoCE "
                                    "Configuration Guide, docs.asternos.com/zh/aidc/configuration-guide/easy-roce-"
                                    "configuration-guide/); read back as the profile's generated wred-profiles, "
                                    "buffer-profiles, policy-maps, diffserv-maps"))
             for name in ("dscp_map", "pfc", "ecn", "strict_priority", "lossless_buffers")]
            + [(name, _fact(VERIFIED, "not rendered: Easy RoCE documents no %s setting; without the "
                                      "`asternos_config: config_db` opt-in nothing else is configured" % what, rendered=False))
               for name, what in (("pfc_watchdog", "PFC watchdog"), ("ets", "DWRR/ETS weight"),
                                  ("pbr", "policy-routing (PPD)"))]),
    },
    "community_sonic": {
        "vendor": "SONiC community (sonic-net)", "os": "SONiC over CONFIG_DB",
        # netmiko 4.8 has no `sonic_ssh`: a community SONiC login lands in bash, which netmiko's LinuxSSH drives
        # (its `edgecore_sonic` device type, Edgecore's community SONiC, is the same class, EdgecoreSonicSSH(LinuxSSH))
        "device_type": "linux",
        "opt_in": {"key": "community_sonic_pbr", "default": "refuse", "choices": ["refuse", "gcu_ignore_acl_rule"],
                   "example": "gcu_ignore_acl_rule",
                   "drives": "Whether switch_config applies the pbr section on community SONiC.",
                   "doc": "How the PPD policy routes reach switches on platform `community_sonic`. "
                          "`refuse` (default): the pbr section is refused before anything is sent, because SONiC's "
                          "own sonic-acl.yang has no `REDIRECT:<next hop>` packet action and GCU (`config "
                          "apply-patch`) validates every change against the models. `gcu_ignore_acl_rule`: the "
                          "ACL_RULE table is left out of GCU's YANG check (its hidden `-i /ACL_RULE` option) so the "
                          "redirect rules can be applied; every later GCU change on that switch, yours and other "
                          "people's, then needs the same option (docs/switches.md). **unverified** on a real switch."},
        "port_naming": {
            "function": _sonic_native_port,
            "rule": "SONiC native naming `Ethernet<first lane index>` (0-based over the front panel; 8-lane port 2 "
                    "is `Ethernet8`)",
            "example": "Ethernet8",
            "status": VERIFIED,
            "source": "sonic-buildimage device/*/port_config.ini (`name lanes`: Ethernet0 0,1,2,3 / Ethernet4 4,5,6,7 on "
                      "4-lane platforms); sonic-yang-models doc/Configuration.md, Port (PORT|Ethernet0 lanes 65,66,67,68 "
                      "shows names are per platform: read the switch's PORT table before a first apply)",
        },
        "mtu": {"l3_max": 9216, "l2_max": 9216, "status": VERIFIED,
                "source": "sonic-yang-models sonic-port.yang (`mtu` range 1..9216)"},
        "transaction": {"mechanism": "GCU: config checkpoint, one config apply-patch (JSON Patch), read-back verify, "
                                     "config save -y; config rollback to the checkpoint while the switch holds only this "
                                     "run's change (nos/gcu.py)", "status": UNVERIFIED,
                        "source": "sonic-net/sonic-utilities config/main.py (apply-patch, checkpoint, rollback, "
                                  "delete-checkpoint, list-checkpoints, save), generic_config_updater/generic_updater.py "
                                  "(PatchApplier, FileSystemConfigRollbacker); run against the lab's model of them only "
                                  "(tests/lab/switches/configdb_sim.py), never against a real switch"},
        "read_command": "show runningconfiguration all",
        "features": {
            "dscp_map": _fact(VERIFIED, _SONIC_YANG % "DSCP_TO_TC_MAP (sonic-dscp-tc-map)"),
            "pfc": _fact(VERIFIED, _SONIC_YANG % "PORT_QOS_MAP pfc_enable, TC_TO_PRIORITY_GROUP_MAP, "
                                                 "MAP_PFC_PRIORITY_TO_QUEUE"),
            "pfc_watchdog": _fact(VERIFIED, _SONIC_YANG % "PFC_WD (sonic-pfcwd), PORT_QOS_MAP pfcwd_sw_enable"),
            "ecn": _fact(VERIFIED, _SONIC_YANG % "WRED_PROFILE ecn_all, QUEUE wred_profile"),
            "strict_priority": _fact(VERIFIED, _SONIC_YANG % "SCHEDULER type STRICT"),
            "ets": _fact(VERIFIED, _SONIC_YANG % "SCHEDULER type DWRR + weight on the RoCE and default queues"),
            "lossless_buffers": _fact(VERIFIED, _SONIC_YANG % "CABLE_LENGTH + PORT_QOS_MAP pfc_enable, by the switch's "
                                      "buffer model (DEVICE_METADATA buffer_model): dynamic - BUFFER_PG <port>|<prio> "
                                      "profile NULL, the headroom computed (Configuration.md BUFFER_PG), none beside a "
                                      "template's NULL range; traditional - no BUFFER_PG row, buffermgrd writes the lossless "
                                      "PG and its pg_lossless profile from pfc_enable (sonic-swss cfgmgr/buffermgr.cpp); "
                                      "the switch's own rows (PG 0) never removed"),
            "pbr": _fact(UNVERIFIED, "ACL_TABLE (L3, bound to the host ports) + ACL_RULE PACKET_ACTION "
                                     "`REDIRECT:<next hop>` (sonic-swss aclorch, PR #235; sonic-buildimage issue "
                                     "#4457); SONiC's own sonic-acl.yang refuses `REDIRECT:<ip>` (enumeration), so "
                                     "GCU's YANG check refuses the rule (oracle test): refused before anything is sent "
                                     "unless `fabric.community_sonic_pbr: gcu_ignore_acl_rule` leaves ACL_RULE out of "
                                     "GCU's check (`config apply-patch -i /ACL_RULE`); read back by switch_validate "
                                     "(`show acl rule`: redirect and status per host source)"),
        },
    },
    "frr": {
        "vendor": "FRRouting", "os": "FRR 8.4 on Linux (whitebox, community SONiC bgpd, the routed twin)",
        "device_type": "linux",
        "port_naming": {
            "function": _nvue_port,
            "rule": "Linux netdev names as the box's kernel shows them; the table assumes the Cumulus/SONiC-VS "
                    "`swp<port>` / `swp<port>s<sub-1>` style (names must fit IFNAMSIZ, 15 characters)",
            "example": "swp1s1",
            "status": UNVERIFIED,
            "source": "a whitebox's netdev names depend on its platform driver; the routed twin (tests/lab/twin) "
                      "creates exactly these names",
        },
        "mtu": {"l3_max": 9216, "l2_max": 9216, "status": UNVERIFIED,
                "source": "Linux: the NIC driver's max_mtu; 9216 assumed (the twin's veths accept it)"},
        "transaction": {"mechanism": "vtysh -C -f dry run, vtysh -f, read-back check, computed reverse", "status": VERIFIED,
                        "source": "FRR 8.4 user guide, VTY shell (vtysh `-C`/`--dryrun`, `-f`); behaviour checked on "
                                  "FRR 8.4.4 from Debian in the twin"},
        "read_command": "vtysh -c 'show running-config'",
        "features": dict(
            [(name, _fact(VERIFIED, "not rendered: FRR is the control plane; QoS belongs to the switch ASIC/NOS",
                          rendered=False))
             for name in ("dscp_map", "pfc", "pfc_watchdog", "ecn", "strict_priority", "ets", "lossless_buffers")]
            + [("pbr", _fact(VERIFIED, "FRR 8.4 user guide, PBR (pbr-map, match src-ip/dst-ip, set nexthop-group, "
                                       "set vrf unchanged); nexthop groups; checked on the routed twin"))]),
    },
}

# names that are no longer platforms: what the error says instead of "unknown" (breaking change, issue 25)
RETIRED = {
    "sonic": ("`sonic` no longer names a platform: two different SONiC families are supported",
              "use dell_sonic (Dell Enterprise SONiC, klish CLI: the former `sonic`) or community_sonic "
              "(community SONiC, CONFIG_DB tables)"),
}

FEATURES = ("dscp_map", "pfc", "pfc_watchdog", "ecn", "strict_priority", "ets", "lossless_buffers", "pbr")

# platform name -> netmiko device_type (netmiko 4.8 SSH_MAPPER_BASE keys)
PLATFORM_DEVICE_TYPES = dict((name, entry["device_type"]) for name, entry in PLATFORMS.items())


def device_type_for(platform):
    return PLATFORM_DEVICE_TYPES.get(platform)


def opt_in(platform):
    """(fabric key, default) of the platform's opt-in the plan copies onto each of its switches, or None."""
    entry = PLATFORMS[platform].get("opt_in")
    return (entry["key"], entry["default"]) if entry else None


def opt_in_keys():
    """The platforms' opt-in keys, by platform name: {key, default, choices, example, drives, doc} each (the fabric
    schema's keys for them, fabric/schema.py)."""
    return [PLATFORMS[p]["opt_in"] for p in sorted(PLATFORMS) if PLATFORMS[p].get("opt_in")]


# platform -> the netmiko device types (netmiko 4.8 CLASS_MAPPER keys) whose session handling fits
# the platform's driver: the default and its explicit `_ssh` alias. Telnet variants are left out on
# purpose (clear-text credentials); any other string would reach ConnectHandler unchecked.
PLATFORM_DEVICE_TYPE_CHOICES = dict(
    (platform, (device_type, device_type + "_ssh")) for platform, device_type in PLATFORM_DEVICE_TYPES.items())


def device_type_choices(platform):
    return PLATFORM_DEVICE_TYPE_CHOICES.get(platform, ())


def port_name(platform, port, sub, breakout, lanes):
    """What ``platform`` calls logical port ``sub`` (1-based) of physical ``port`` split ``breakout`` ways
    on a cage of ``lanes`` serdes lanes."""
    return PLATFORMS[platform]["port_naming"]["function"](port, sub, breakout, max(lanes, breakout))


def max_mtu(platform, routed=True):
    entry = PLATFORMS[platform]["mtu"]
    return entry["l3_max"] if routed else entry["l2_max"]


def unverified(platform):
    """What ``platform`` renders or relies on that no source backs: ``[(item, source note)]`` (plan report,
    docs). A platform with none is a verified platform."""
    entry = PLATFORMS[platform]
    out = []
    for item in ("port_naming", "mtu", "transaction"):
        if entry[item]["status"] != VERIFIED and entry[item].get("rendered", True):
            out.append((item, entry[item]["source"]))
    for name in FEATURES:
        feature = entry["features"][name]
        if feature["rendered"] and feature["status"] != VERIFIED:
            out.append((name, feature["source"]))
    return out


def not_rendered(platform):
    """Features of the RoCE profile the driver does not render for ``platform`` (gaps, shown in the report)."""
    return [name for name in FEATURES if not PLATFORMS[platform]["features"][name]["rendered"]]


def is_verified(platform):
    return not unverified(platform)


README_BEGIN = "<!-- platforms: generated by tools/gen_docs.py from fabric/platforms.py; do not edit -->"
README_END = "<!-- platforms: end -->"


def readme_table():
    """The README's switch table: one row per NOS, how it applies, and what no source backs yet (gen_docs)."""
    lines = [README_BEGIN,
             "| platform | switch OS | applied through | RoCE features not rendered | unverified (docs/platforms.md) |",
             "|---|---|---|---|---|"]
    for name in sorted(PLATFORMS):
        e = PLATFORMS[name]
        how = re.split(r",|:", e["transaction"]["mechanism"])[0]
        if how.count("(") > how.count(")"):    # the first clause cut a parenthesis: keep what precedes it
            how = how[:how.rindex("(")].strip()
        gaps = not_rendered(name)
        doubts = [entry[0] for entry in unverified(name)]
        lines.append("| `%s` | %s %s | %s | %s | %s |" % (
            name, e["vendor"], e["os"], how, ", ".join(gaps) or "-",
            ", ".join(doubts) if doubts else "none: every rendered line has a source"))
    lines.append(README_END)
    return "\n".join(lines)


def with_readme_table(readme):
    """``readme`` with its generated block replaced by ``readme_table()`` (the block must be there once)."""
    start, end = readme.index(README_BEGIN), readme.index(README_END) + len(README_END)
    return readme[:start] + readme_table() + readme[end:]


def platforms_doc():
    """docs/platforms.md, generated from the table (tools/gen_docs.py)."""
    lines = ["# Switch platforms", "",
             "Generated from `plugins/module_utils/fabric/platforms.py` by `tools/gen_docs.py`; do not edit.",
             "Every row names its source; **unverified** rows have none yet and show in the plan report "
             "(`<build>/report.md`). Line-by-line command sources: docs/switch-commands-sources.md.", "",
             "| platform | vendor / OS | netmiko device_type | read-back | transaction | MTU max (L3 / L2) |",
             "|---|---|---|---|---|---|"]
    for name in sorted(PLATFORMS):
        e = PLATFORMS[name]
        lines.append("| `%s` | %s %s | `%s` (also `%s_ssh`) | `%s` | %s%s | %d / %d%s |" % (
            name, e["vendor"], e["os"], e["device_type"], e["device_type"], e["read_command"],
            e["transaction"]["mechanism"], "" if e["transaction"]["status"] == VERIFIED else " **unverified**",
            e["mtu"]["l3_max"], e["mtu"]["l2_max"], "" if e["mtu"]["status"] == VERIFIED else " **unverified**"))
    lines += ["", "## Port names", "",
              "A switch model (`fabric.switch_models`) gives physical `ports`, `lanes` per port and `breakout`; the "
              "platform names the logical ports. A model's `port_name` overrides this for every platform (only for "
              "hardware the table does not describe).", "",
              "| platform | rule | 2x breakout of 8-lane port 1 | status | source |", "|---|---|---|---|---|"]
    for name in sorted(PLATFORMS):
        n = PLATFORMS[name]["port_naming"]
        lines.append("| `%s` | %s | `%s`, `%s` | %s | %s |" % (
            name, n["rule"], port_name(name, 1, 1, 2, 8), port_name(name, 1, 2, 2, 8), n["status"], n["source"]))
    lines += ["", "## Features", "",
              "`rendered`: the driver emits the feature's lines; `status`: whether a vendor source backs them.", "",
              "| platform | feature | rendered | status | source |", "|---|---|---|---|---|"]
    for name in sorted(PLATFORMS):
        for feature in FEATURES:
            f = PLATFORMS[name]["features"][feature]
            lines.append("| `%s` | %s | %s | %s | %s |" % (name, feature, "yes" if f["rendered"] else "**no**",
                                                           f["status"] if f["status"] == VERIFIED else "**unverified**",
                                                           f["source"]))
    lines += ["", "## Sources for MTU and transactions", ""]
    for name in sorted(PLATFORMS):
        e = PLATFORMS[name]
        lines.append("- `%s`: MTU: %s. Transaction: %s." % (name, e["mtu"]["source"], e["transaction"]["source"]))
    lines += ["", "## AsterNOS", ""] + ASTERNOS_DOC
    return "\n".join(lines) + "\n"


ASTERNOS_DOC = [
    "What is verified on AsterNOS, exactly (nos/asternos.py; sources in tests/fixtures/switches/asternos/):",
    "",
    "- **Lossless QoS through Easy RoCE's REST model** (Easy RoCE REST manual, docs.asternos.com/zh/aidc/restapi-manual/"
    "easy-roce/, AsterNOS v3.1 R0500): one profile `aif_roce` created with the manual's `POST /rest/v1/running/roce/"
    "roce-profiles {\"name\", \"mode\": \"lossless\"}`, its `cable-length` and `bind-interfaces` set with `PATCH "
    "/rest/v1/running/roce/roce-profiles/aif_roce`, removed with `DELETE` on the same path, read back with `GET "
    "/rest/v1/running/roce` and compared leaf by leaf (a second run changes nothing). What the switch generated "
    "(`wred-profiles`, `buffer-profiles`, `policy-maps`, `class-maps`, `diffserv-maps`) is read back and reported.",
    "- **Thresholds, weights and buffers are computed by the switch, not by this collection**: Easy RoCE \"applies "
    "the default DSCP mapping, with PFC and ECN enabled for queue 3 and 4, and strict priority scheduling set for "
    "queue 6 and 7\" and derives PFC/ECN parameters from the cable length (Easy RoCE Configuration Guide). The QoS "
    "profile's ECN thresholds, ETS weights and PFC watchdog timers are not applied on AsterNOS; a profile Easy RoCE "
    "cannot express (a lossless priority or ECN queue other than 3/4, a strict CNP priority other than 6/7) is "
    "refused. That DSCP 26 lands in queue 3 and DSCP 48 in queue 6 under Easy RoCE's default map is an inference from "
    "Asterfusion's community-SONiC CX532P-N `qos.json.j2` (DSCP/8), not read from an AsterNOS page.",
    "- **Session** as Asterfusion's own netmiko driver `asterfusion_asternos` does it: login in a Linux shell, "
    "`sonic-cli` (klish), `terminal raw-output`, `system bash` back to a shell where `curl` reaches the REST endpoint, "
    "lock markers and sonic-utilities shows run; saved with `write` + `y` in klish.",
    "- **Unverified (2 items)**: `port_naming` (the plan's `Ethernet<lane>` names; Asterfusion's samples show "
    "`Ethernet1`, `Ethernet4:4`: take the names from `show interface status` in a capture and set the switch model's "
    "`port_name`) and `transaction` (how the REST endpoint is reached and authenticated from the switch: "
    "`https://127.0.0.1` with `curl --netrc-optional`; the PATCH bodies' exact form, e.g. `CABLE_40m`; status codes).",
    "- **BGP on AsterNOS (searched again, session 4)**: Asterfusion documents BGP *show* commands only, in what can be "
    "read (`show ip bgp summary [established|failed]`, `show ip bgp neighbors`, `show bgp peer-group`, FRR-format "
    "outputs: https://docs.asternos.com/routing/command-line-reference/ip-unicast-routing/bgp-configuration/ , "
    "https://docs.asternos.com/enterprise/v5/command-line-reference/ip-unicast-routing/bgp-configuration/ , "
    "https://docs.asteraix.com/enterprise/bgp-configuration , "
    "https://docs.asternos.com/zh/aidc/command-line-reference/layer-3-configuration/bgp/ ; "
    "https://asternos.com/docs/bgp has an introduction and concepts only); no page read gives the configuration syntax "
    "(`router bgp`, `neighbor ... remote-as` never appear). So the collection configures no BGP on AsterNOS and does not "
    "read its BGP summary (`bgp_sessions` not run, **unverified**); a spine's session towards an AsterNOS leaf says so in "
    "its validation row (\"<leaf> runs asternos, where this collection configures no BGP (only by hand)\").",
    "- **Not configured without the opt-in**: MTU, the PPD policy routes and the underlay have no Asterfusion-documented "
    "interface. `fabric.asternos_config: config_db` opts in to community SONiC's CONFIG_DB for them, which is "
    "**SONiC-native, not an Asterfusion-documented interface**; without it such sections are refused with one message "
    "naming the opt-in. With it, plan.yml writes those sections as CONFIG_DB (`<build>/switches/<switch>.config_db.json`), "
    "rendered as community SONiC renders them (nos/sonic_tables.py: the same tables, fields and sources); **applying them is "
    "refused** by switch_config, check mode included, before anything is sent (\"applying is not implemented yet (the "
    "SONiC GCU transaction ...) on AsterNOS\"): no GCU transaction is wired to AsterNOS.",
    "- **Capture kit**: `playbooks/capture.yml` (read-only) records what this driver needs from a real switch into "
    "`build/capture/<switch>/` so it can become a fixture (docs/runbooks.md, \"10. Capturing an AsterNOS switch\").",
]
