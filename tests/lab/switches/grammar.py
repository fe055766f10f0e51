"""Command grammars of the simulated NOSes (test code; sources: docs/switch-commands-sources.md).

Each grammar maps a CLI context to the lines it accepts: (regex, child_context or None, key_tokens).
key_tokens: a new line replaces an existing sibling with the same first N tokens (0 = exact line).
Only commands from the vendor references are listed; anything else gets the NOS's error text.
"""

EOS = {
    "config": [
        (r"interface Ethernet\d+(/\d+)*$", "if", 0),
        (r"qos map dscp \d+( \d+)* to traffic-class [0-7]( drop-precedence [0-2])?$", None, 4),
        (r"ip access-list [\w-]+$", "acl", 0),
        (r"class-map type pbr match-any [\w-]+$", "cmap-pbr", 0),
        (r"policy-map type pbr [\w-]+$", "pmap-pbr", 0),
        (r"hostname \S+$", None, 1),
        (r"priority-flow-control pause watchdog default timeout [\d.]+$", None, 5),
        (r"priority-flow-control pause watchdog default (recovery-time|polling-interval) [\d.]+$", None, 5),
        (r"priority-flow-control pause watchdog action (drop|notify-only)$", None, 4),
    ],
    "if": [
        (r"description .+$", None, 1),
        (r"mtu \d+$", None, 1),
        (r"no switchport$", None, 0),
        (r"ip address \S+$", None, 2),
        (r"qos trust (dscp|cos)$", None, 2),
        (r"priority-flow-control on$", None, 0),
        (r"priority-flow-control priority [0-7] (no-drop|drop)$", None, 3),
        (r"priority-flow-control pause watchdog$", None, 0),
        (r"service-policy type pbr input [\w-]+$", None, 4),
        (r"(uc-)?tx-queue [0-7]$", "txq", 0),
    ],
    "txq": [
        (r"random-detect ecn minimum-threshold \d+ (segments|bytes|kbytes|mbytes) maximum-threshold \d+ "
         r"(segments|bytes|kbytes|mbytes)( max-mark-probability \d+)?( weight \d+)?$", None, 2),
        (r"priority strict$", None, 1),
        (r"no priority$", None, 1),
        (r"bandwidth percent \d+$", None, 2),
    ],
    "acl": [(r"\d+ (permit|deny) ip (any|host \S+|\S+/\d+) (any|host \S+|\S+/\d+)$", None, 1)],
    "cmap-pbr": [(r"match ip access-group [\w-]+$", None, 0)],
    "pmap-pbr": [(r"class [\w-]+$", "pmap-c", 0)],
    "pmap-c": [(r"set nexthop( recursive)? \S+$", None, 1)],
}

NXOS = {
    "config": [
        (r"interface Ethernet\d+/\d+(/\d+)?$", "if", 0),
        (r"hostname \S+$", None, 1),
        (r"feature (pbr|lldp|bgp|interface-vlan)$", None, 0),
        (r"priority-flow-control watch-dog-interval (on|off)$", None, 2),
        (r"class-map type qos match-(all|any) [\w-]+$", "cmap-qos", 0),
        (r"policy-map type qos [\w-]+$", "pmap-qos", 0),
        (r"policy-map type network-qos [\w-]+$", "pmap-nq", 0),
        (r"policy-map type queuing [\w-]+$", "pmap-que", 0),
        (r"system qos$", "sys-qos", 0),
        (r"ip access-list [\w-]+$", "acl", 0),
        (r"route-map [\w-]+ (permit|deny) \d+$", "route-map", 0),
    ],
    "if": [
        (r"description .+$", None, 1),
        (r"mtu \d+$", None, 1),
        (r"no switchport$", None, 0),
        (r"ip address \S+$", None, 2),
        (r"priority-flow-control mode (on|off|auto)$", None, 2),
        (r"priority-flow-control watch-dog-interval (on|off)$", None, 2),
        (r"service-policy type qos input [\w-]+$", None, 3),
        (r"ip policy route-map [\w-]+$", None, 3),
    ],
    "cmap-qos": [(r"match dscp \d+(,\d+)*$", None, 0)],
    "pmap-qos": [(r"class [\w-]+$", "pmap-c-qos", 0)],
    "pmap-c-qos": [(r"set qos-group [0-7]$", None, 2)],
    "pmap-nq": [(r"class type network-qos [\w-]+$", "pmap-c-nq", 0)],
    "pmap-c-nq": [(r"pause pfc-cos [0-7](,[0-7])*$", None, 2), (r"mtu \d+$", None, 1)],
    "pmap-que": [(r"class type queuing [\w-]+$", "pmap-c-que", 0)],
    "pmap-c-que": [
        (r"random-detect minimum-threshold \d+ (bytes|kbytes|mbytes) maximum-threshold \d+ (bytes|kbytes|mbytes) "
         r"drop-probability \d+ weight \d+( ecn)?$", None, 1),
        (r"priority level [12]$", None, 1),
        (r"bandwidth remaining percent \d+$", None, 2),
    ],
    "sys-qos": [(r"service-policy type network-qos [\w-]+$", None, 2),
                (r"service-policy type queuing (input|output) [\w-]+$", None, 4)],
    "acl": [(r"\d+ (permit|deny) ip (any|\S+/\d+) (any|\S+/\d+)$", None, 1)],
    "route-map": [(r"match ip address [\w-]+$", None, 3), (r"set ip next-hop \S+$", None, 3)],
}

KLISH = {
    "config": [
        (r"interface (Ethernet\d+|Eth\d+/\d+(/\d+)?)$", "if", 0),
        (r"hostname \S+$", None, 1),
        (r"qos map dscp-tc [\w-]+$", "map-dscp-tc", 0),
        (r"buffer init lossless$", None, 0),
        (r"qos wred-policy [\w-]+$", "wred", 0),
        (r"qos scheduler-policy [\w-]+$", "sched", 0),
        (r"ip access-list [\w-]+$", "acl", 0),
        (r"class-map [\w-]+ match-type acl$", "cmap", 0),
        (r"policy-map [\w-]+ type forwarding$", "pmap", 0),
    ],
    "if": [
        (r"description .+$", None, 1),
        (r"mtu \d+$", None, 1),
        (r"ip address \S+$", None, 2),
        (r"qos-map dscp-tc [\w-]+$", None, 2),
        (r"priority-flow-control priority [0-7]$", None, 0),
        (r"priority-flow-control watchdog (on|off)( detect-time \d+)?$", None, 3),
        (r"priority-flow-control watchdog (restore-time \d+|action (drop|forward|alert))$", None, 3),
        (r"cable-length \d+m$", None, 1),
        (r"queue [0-7] wred-policy [\w-]+$", None, 3),
        (r"scheduler-policy [\w-]+$", None, 1),
        (r"service-policy type forwarding in [\w-]+$", None, 4),
    ],
    "map-dscp-tc": [(r"dscp \d+ traffic-class [0-7]$", None, 2)],
    "wred": [(r"green minimum-threshold \d+ maximum-threshold \d+ drop-probability \d+$", None, 1),
             (r"ecn (none|green|yellow|red|all)$", None, 1)],
    "sched": [(r"queue [0-7]$", "sched-q", 0)],
    "sched-q": [(r"type (strict|dwrr|wrr)$", None, 1), (r"weight \d+$", None, 1)],
    "acl": [(r"seq \d+ (permit|deny) ip (any|host \S+|\S+/\d+) (any|host \S+|\S+/\d+)$", None, 2)],
    "cmap": [(r"match access-group ip [\w-]+$", None, 0)],
    "pmap": [(r"class [\w-]+ priority \d+$", "pmap-c", 0)],
    "pmap-c": [(r"set ip next-hop \S+$", None, 3)],
}

# NVUE: accepted `nv set` paths (Cumulus Linux 5.x NVUE command reference).
NVUE_PATHS = [
    (r"system hostname \S+$", 1),
    (r"interface swp\d+(s\d+)? link (state) (up|down)$", 1),
    (r"interface swp\d+(s\d+)? link mtu \d+$", 1),
    (r"interface swp\d+(s\d+)? ip address \S+$", 0),
    (r"interface swp\d+(s\d+)? qos pfc-watchdog$", 0),
    (r"interface swp\d+(s\d+)? router pbr map [\w-]+$", 1),
    (r"qos mapping default-global trust (l2|l3|port|both)$", 1),
    (r"qos mapping default-global dscp \d+ switch-priority [0-7]$", 1),
    (r"qos pfc default-global switch-priority [0-7]$", 0),
    (r"qos congestion-control default-global traffic-class [0-7] (min-threshold|max-threshold) \d+$", 1),
    (r"qos congestion-control default-global traffic-class [0-7] probability \d+$", 1),
    (r"qos congestion-control default-global traffic-class [0-7] ecn (enable|disable)$", 1),
    (r"qos egress-scheduler default-global traffic-class [0-7] mode (strict|dwrr)$", 1),
    (r"qos traffic-pool default-(lossless|lossy) memory-percent \d+$", 1),
    (r"qos pfc-watchdog (polling-interval|robustness) \d+$", 1),
    (r"router pbr state (enabled|disabled)$", 1),
    (r"router nexthop group [\w-]+ via \S+$", 0),
    (r"router pbr map [\w-]+ rule \d+ match (source-ip|destination-ip) \S+$", 1),
    (r"router pbr map [\w-]+ rule \d+ action (nexthop-group|vrf) \S+$", 2),
]
