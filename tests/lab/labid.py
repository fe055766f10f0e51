"""Per-checkout names of the virtual lab (test plumbing): two checkouts on one machine get two labs.

`make demo` in one checkout must not tear down or reconfigure the lab of a `make test` running in
another, so the lab's podman containers, network namespaces, simulator ports and state directory
carry an id derived from the checkout: the first 6 hex digits of the SHA-1 of the checkout's real
path (AIFABRIC_LAB_ID, 6 hex digits, overrides it: one id per run). inventories/lab/group_vars/all/lab.yml
computes the same id from the inventory's own path, so `ansible-playbook -i inventories/lab` by
hand reaches this checkout's lab without any environment.

The integration tests' private simulators and twins take their ports and namespace names from a port offset
(AIFABRIC_TEST_PORT_OFFSET; port_offset below): unset, it is derived from the lab id too, and `make test`
(tools/ci_run.py) claims it on this machine (claim_port_offset), so two checkouts' test runs never meet.

    labid.py lab-id [--lab NAME] | port-offset [--part N]
"""
import argparse
import errno
import fcntl
import hashlib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The switch simulators' ports: base + the device's number (leaf0 1 .. spine2 12); bases 10000..23975 in
# steps of 25, below the kernel's ephemeral range (32768-) and the test twins' ports (24000 + offset).
PORT_BASE_FIRST = 10000
PORT_BASE_SLOTS = 560
PORT_BASE_STEP = 25


def lab_id(root=ROOT, lab=None):
    """This checkout's lab id; ``lab`` names another lab of the same checkout (`make test-host-network` has its own,
    so that it runs beside test-e2e's lab): an id derived from the checkout's (or the forced) one and that name."""
    forced = os.environ.get("AIFABRIC_LAB_ID", "")
    if forced:
        if not re.fullmatch(r"[0-9a-f]{6}", forced):
            raise SystemExit("AIFABRIC_LAB_ID=%r: give 6 lowercase hex digits (e.g. 0a1b2c), or unset it" % forced)
        ident = forced
    else:
        ident = hashlib.sha1(os.path.realpath(root).encode("utf-8")).hexdigest()[:6]
    if lab:
        return hashlib.sha1(("%s:%s" % (ident, lab)).encode("utf-8")).hexdigest()[:6]
    return ident


def switch_port_base(ident=None):
    """First port of this lab's switch simulators (same formula as inventories/lab/group_vars/all/lab.yml)."""
    return PORT_BASE_FIRST + int(ident or lab_id(), 16) % PORT_BASE_SLOTS * PORT_BASE_STEP


# each lab switch's number: its port is switch_port_base() + number (inventories/lab/switches.yml)
SWITCH_NUMBERS = {"leaf0": 1, "leaf1": 2, "leaf2": 3, "leaf3": 4, "spine1": 11, "spine2": 12}


def switch_port(name, ident=None):
    return switch_port_base(ident) + SWITCH_NUMBERS[name]


def container(host, ident=None):
    return "aifabric-%s-%s" % (ident or lab_id(), host)


def switch_state_root(ident=None):
    return os.environ.get("AIFABRIC_SWITCH_LAB") or "/tmp/aifabric-lab-%s/switches" % (ident or lab_id())


# ----------------------------------------------------------------------------- the integration tests' offset
# An offset o gives a test run: switch simulators on tests/lab/switches/lab.py's test ports (2201-2222) + o, and + 30,
# + 60 for the second and third part mk/switches.mk runs side by side (port_offset(part=N)); test twins
# (tests/integration/twin, extensions/molecule/twin) with the namespace prefix <kind><o>- and SSH ports from
# TWIN_PORTS[kind] + o, at most TWIN_SIZE ports each (routers + hosts). One offset thus holds the ports
# [o + 2200, o + 2300) and [o + 24000, o + 24100) (port_ranges): offsets OFFSET_STEP apart never meet.
SWITCH_TEST_PORTS = (2200, 2300)
# a real Slurm of the scheduler tests (tests/lab/slurm_cluster.py): slurmctld at SLURM_PORT + o, slurmd at + 1 .. + 9
# (above the third switch part's 2260-2282)
SLURM_PORT = 2290
# GOR's event path of the scheduler tests (tests/lab/event_path.py): Prometheus, Alertmanager, the rulebook's webhook
# and a metrics page at these + o (between the third switch part's 2282 and SLURM_PORT)
EVENT_PATH_PORTS = {"prometheus": 2283, "alertmanager": 2284, "rulebook": 2285, "metrics": 2286, "rulebook_drain": 2287}
SWITCH_PART_STEP = 30
TWIN_PORTS = {"aift": 24000, "aifh": 24030, "aifp": 24060}
TWIN_SIZE = 30
OFFSET_STEP = 100
# Unset, the offset is this checkout's: OFFSET_FIRST + OFFSET_STEP * (lab id mod OFFSET_SLOTS), 300..7700, so the
# switch test ports stay below the labs' (10000-) and the twins' below the kernel's ephemeral ports (32768-).
OFFSET_FIRST = 300
OFFSET_SLOTS = 75
OFFSET_MAX = 65535 - 24100   # an explicit offset: every test port stays a port
OFFSET_LOCKS = "/tmp/aifabric-test-offsets"


def port_offset(ident=None, part=1):
    """The tests' port offset: AIFABRIC_TEST_PORT_OFFSET when set, else this checkout's (from the lab id); ``part``
    N of the switch tests adds SWITCH_PART_STEP * (N - 1)."""
    forced = os.environ.get("AIFABRIC_TEST_PORT_OFFSET", "")
    if forced:
        if not (forced.isdigit() and int(forced) <= OFFSET_MAX):
            raise SystemExit("AIFABRIC_TEST_PORT_OFFSET=%r: give a whole number 0..%d (added to the tests' ports "
                             "2200-2299 and 24000-24099), or unset it for this checkout's own" % (forced, OFFSET_MAX))
        base = int(forced)
    else:
        base = offset_of_slot(int(ident or lab_id(), 16) % OFFSET_SLOTS)
    return base + SWITCH_PART_STEP * (part - 1)


def offset_of_slot(slot):
    return OFFSET_FIRST + OFFSET_STEP * slot


def port_ranges(offset):
    """The ports a test run with this offset may listen on: [(first, end)] with the end excluded."""
    return [(SWITCH_TEST_PORTS[0] + offset, SWITCH_TEST_PORTS[1] + offset),
            (TWIN_PORTS["aift"] + offset, TWIN_PORTS["aift"] + OFFSET_STEP + offset)]


def twin_names(kind, offset=None):
    """(namespace prefix, first SSH port) of a test twin: kind aift (the Molecule twin and tests/integration/twin),
    aifh (test_host_read's own), aifp (the p2p-scheme twin)."""
    offset = port_offset() if offset is None else offset
    return "%s%d-" % (kind, offset), TWIN_PORTS[kind] + offset


# ----------------------------------------------------------------------------- `make twin-up`'s twin
# The twin a user builds by hand (make twin-up, tests/lab/twin/twin.py without --ns-prefix/--base-port) is this
# checkout's: namespaces aif<lab id>-<device>, SSH ports from TWIN_UP_FIRST + TWIN_UP_STEP * (lab id mod
# TWIN_UP_SLOTS), TWIN_UP_STEP ports each. 61000-65499 lies above the kernel's default ephemeral range (32768-60999) and
# every range above (labs 10000-23999, test twins 24300-31899; rail512: 74 endpoints), so a second checkout's twin never removes the first's
# namespaces nor takes its ports (two lab ids in one slot: twin.py finds the ports taken and says so).
TWIN_UP_FIRST = 61000
TWIN_UP_SLOTS = 45
TWIN_UP_STEP = 100


def twin_up_names(ident=None):
    """(namespace prefix, first SSH port) of this checkout's own twin (make twin-up)."""
    ident = ident or lab_id()
    return "aif%s-" % ident, TWIN_UP_FIRST + TWIN_UP_STEP * (int(ident, 16) % TWIN_UP_SLOTS)


def claim_port_offset(ident=None, lock_dir=OFFSET_LOCKS):
    """(offset, held lock file) for one `make test`: this checkout's slot, or the next one when another run on this
    machine holds it (a checkout whose lab id falls in the same slot). The slot is ours while the file stays open."""
    if not os.path.isdir(lock_dir):
        os.makedirs(lock_dir, exist_ok=True)
        os.chmod(lock_dir, 0o1777)   # every user's test runs share the slots, like /tmp
    first = int(ident or lab_id(), 16) % OFFSET_SLOTS
    for step in range(OFFSET_SLOTS):
        slot = (first + step) % OFFSET_SLOTS
        handle = open(os.path.join(lock_dir, "slot-%02d.lock" % slot), "a", encoding="ascii")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            handle.close()
            if err.errno in (errno.EAGAIN, errno.EACCES):
                continue
            raise
        return offset_of_slot(slot), handle
    raise SystemExit("all %d test port offsets are held by test runs on this machine (%s): set "
                     "AIFABRIC_TEST_PORT_OFFSET to a free one" % (OFFSET_SLOTS, lock_dir))


def main(argv=None):
    parser = argparse.ArgumentParser(description="this checkout's lab id or the integration tests' port offset")
    parser.add_argument("what", choices=("lab-id", "port-offset"))
    parser.add_argument("--part", type=int, default=1, help="part N of the switch tests (mk/switches.mk)")
    parser.add_argument("--lab", help="lab-id: the id of this checkout's lab of that name (e.g. host-network)")
    args = parser.parse_args(argv)
    print(lab_id(lab=args.lab) if args.what == "lab-id" else port_offset(part=args.part))


if __name__ == "__main__":
    sys.exit(main())
