"""Per-checkout lab names (issue 28 item 3): tests/lab/labid.py and inventories/lab agree, and two checkouts differ.

The lab scripts (tests/lab/hosts/lab.py, tests/lab/switches/lab.py, tools/demo.py) name containers, ports and the
state dir with labid.py; Ansible finds them through inventories/lab/group_vars/all/lab.yml, which computes the id
again from the inventory's own path. If the two formulas drifted apart, ansible-playbook would reach another
checkout's lab, or none.
"""
import functools
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import labid  # noqa: E402  pylint: disable=wrong-import-position

BIN = os.path.dirname(sys.executable)


def inventory_view(inventory, env_id=None):
    """What Ansible makes of the lab inventory: {host: "ansible_host ansible_port known_hosts"} (templated)."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
               ANSIBLE_LOAD_CALLBACK_PLUGINS="1")
    env.pop("AIFABRIC_LAB_ID", None)
    env.pop("AIFABRIC_SWITCH_LAB", None)
    if env_id:
        env["AIFABRIC_LAB_ID"] = env_id
    proc = subprocess.run([os.path.join(BIN, "ansible"), "-i", inventory, "gpu02,leaf1,spine2", "-m", "ansible.builtin.debug",
                           "-a", json.dumps({"msg": "{{ ansible_host }} {{ ansible_port | default('-') }} {{ switch_known_hosts | default('-') }}"})],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    tasks = json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]
    return {host: result["msg"] for host, result in tasks.items()}


def expected(ident):
    return {"gpu02": "%s - -" % labid.container("gpu02", ident),
            "leaf1": "127.0.0.1 %d /tmp/aifabric-lab-%s/switches/known_hosts" % (labid.switch_port("leaf1", ident), ident),
            "spine2": "127.0.0.1 %d /tmp/aifabric-lab-%s/switches/known_hosts" % (labid.switch_port("spine2", ident), ident)}


def test_inventory_and_lab_scripts_name_the_same_lab(monkeypatch):
    monkeypatch.delenv("AIFABRIC_LAB_ID", raising=False)
    ident = labid.lab_id(ROOT)
    assert len(ident) == 6 and int(ident, 16) >= 0
    assert inventory_view(os.path.join(ROOT, "inventories", "lab")) == expected(ident)


def test_another_checkout_gets_another_lab(tmp_path, monkeypatch):
    """A copy of the inventory elsewhere (another checkout) names other containers, ports and state; AIFABRIC_LAB_ID wins."""
    monkeypatch.delenv("AIFABRIC_LAB_ID", raising=False)
    other = tmp_path / "other-checkout"
    shutil.copytree(os.path.join(ROOT, "inventories", "lab"), str(other / "inventories" / "lab"))
    other_id = labid.lab_id(str(other))
    assert other_id != labid.lab_id(ROOT)
    assert inventory_view(str(other / "inventories" / "lab")) == expected(other_id)
    assert inventory_view(str(other / "inventories" / "lab"), env_id="0a1b2c") == expected("0a1b2c")


def test_a_named_lab_of_the_checkout_is_another_lab_the_inventory_reaches(monkeypatch):
    """`make test-host-network` runs on a lab of its own (labid.py lab-id --lab host-network), beside test-e2e's: another
    id than the checkout's, the same on every call, derived from AIFABRIC_LAB_ID when one is forced; handed over as
    AIFABRIC_LAB_ID, the lab inventory names that lab's containers and ports."""
    monkeypatch.delenv("AIFABRIC_LAB_ID", raising=False)
    own, named = labid.lab_id(ROOT), labid.lab_id(ROOT, lab="host-network")
    assert re.fullmatch(r"[0-9a-f]{6}", named) and named != own and named == labid.lab_id(ROOT, lab="host-network")
    assert labid.container("gpu01", named) != labid.container("gpu01", own)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "lab", "labid.py"), "lab-id", "--lab", "host-network"],
                         capture_output=True, text=True, check=True, env=dict(os.environ, AIFABRIC_LAB_ID="0a1b2c"))
    forced = out.stdout.strip()
    assert forced not in (named, "0a1b2c") and re.fullmatch(r"[0-9a-f]{6}", forced)
    assert inventory_view(os.path.join(ROOT, "inventories", "lab"), env_id=forced) == expected(forced)


def test_port_bases_stay_below_the_twins_and_the_ephemeral_range():
    bases = {labid.switch_port_base("%06x" % n) for n in range(0, 0xffffff, 4099)}
    assert min(bases) >= 10000 and max(bases) + max(labid.SWITCH_NUMBERS.values()) < 24000


def test_a_malformed_lab_id_is_refused_with_the_fix(monkeypatch):
    monkeypatch.setenv("AIFABRIC_LAB_ID", "../x")
    with pytest.raises(SystemExit, match="AIFABRIC_LAB_ID='../x': give 6 lowercase hex digits"):
        labid.lab_id()


# --- the integration tests' port offset (AIFABRIC_TEST_PORT_OFFSET) ------------------------------------------------
@functools.lru_cache(maxsize=None)
def switch_lab():
    """tests/lab/switches/lab.py and the size of a test twin of the lab plan (routers + hosts: one SSH port each)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "switches"))
    import lab  # pylint: disable=import-outside-toplevel
    plan = lab.lab_plan()
    return lab, len(plan["leafs"]) + len(plan["spines"]) + len(plan["hosts"])


def footprint(offset):
    """Every port and namespace prefix a test run with this offset uses: the switch simulators of the three parts
    mk/switches.mk runs side by side (tests/lab/switches/lab.py's test ports) and the three test twins
    (tests/lab/twin/twin.py), each as large as the lab plan's."""
    lab, twin_size = switch_lab()
    assert twin_size <= labid.TWIN_SIZE
    switch_ports = list(lab.PORTS.values()) + [port for _like, _platform, port in lab.EXTRA.values()]
    ports = {port + offset + labid.SWITCH_PART_STEP * (part - 1) for part in (1, 2, 3) for port in switch_ports}
    prefixes = set()
    for kind in labid.TWIN_PORTS:
        prefix, first = labid.twin_names(kind, offset)
        ports |= set(range(first, first + twin_size))
        prefixes.add(prefix)
    assert all(any(lo <= port < hi for lo, hi in labid.port_ranges(offset)) for port in ports), offset
    return ports, prefixes


def checkout_in_slot(tmp_path, slot, avoid=()):
    """A checkout path (not created) whose lab id falls in the given test offset slot."""
    for n in range(10000):
        path = str(tmp_path / ("checkout-%d" % n))
        if path not in avoid and int(labid.lab_id(path), 16) % labid.OFFSET_SLOTS == slot:
            return path
    raise AssertionError("no path found for slot %d" % slot)


def test_every_test_offset_slot_is_private_and_in_range():
    """The checkouts' own offsets: no two slots share a port or a namespace; every port is above 1024, the switch
    simulators below the labs' ports (10000-), the twins below the kernel's ephemeral ports (32768-)."""
    seen_ports, seen_prefixes = set(), set()
    for slot in range(labid.OFFSET_SLOTS):
        ports, prefixes = footprint(labid.offset_of_slot(slot))
        assert not ports & seen_ports and not prefixes & seen_prefixes, slot
        seen_ports |= ports
        seen_prefixes |= prefixes
    assert min(seen_ports) > 1024 and max(seen_ports) < 32768
    assert max(p for p in seen_ports if p < 24000) < labid.PORT_BASE_FIRST


def test_two_checkouts_get_disjoint_test_ports_and_the_same_checkout_the_same(tmp_path, monkeypatch):
    monkeypatch.delenv("AIFABRIC_TEST_PORT_OFFSET", raising=False)
    monkeypatch.delenv("AIFABRIC_LAB_ID", raising=False)
    here = labid.lab_id(ROOT)
    here_slot = int(here, 16) % labid.OFFSET_SLOTS
    other = labid.lab_id(checkout_in_slot(tmp_path, (here_slot + 1) % labid.OFFSET_SLOTS))
    assert labid.port_offset(here) == labid.port_offset(labid.lab_id(ROOT)) == labid.port_offset()
    ports_here, prefixes_here = footprint(labid.port_offset(here))
    ports_other, prefixes_other = footprint(labid.port_offset(other))
    assert not ports_here & ports_other and not prefixes_here & prefixes_other
    assert labid.port_offset(here, part=3) == labid.port_offset(here) + 2 * labid.SWITCH_PART_STEP
    # what mk/switches.mk and the Molecule twin (create.yml, verify.yml) run: the same number
    cli = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "lab", "labid.py"), "port-offset", "--part", "2"],
                         capture_output=True, text=True, check=True, env=dict(os.environ))
    assert int(cli.stdout) == labid.port_offset(part=2)


def test_checkouts_in_one_slot_claim_two_offsets(tmp_path, monkeypatch):
    """Two checkouts whose lab ids fall in one slot: the first `make test` claims the slot, the second one the next
    free one, while both run; once the first is done the slot is free again."""
    monkeypatch.delenv("AIFABRIC_LAB_ID", raising=False)
    one = checkout_in_slot(tmp_path, 7)
    two = checkout_in_slot(tmp_path, 7, avoid=(one,))
    locks = str(tmp_path / "locks")
    first, held = labid.claim_port_offset(labid.lab_id(one), locks)
    second, held_too = labid.claim_port_offset(labid.lab_id(two), locks)
    assert first == labid.offset_of_slot(7) and second == labid.offset_of_slot(8)
    assert not footprint(first)[0] & footprint(second)[0]
    held.close()
    third, held_three = labid.claim_port_offset(labid.lab_id(two), locks)
    assert third == first
    held_too.close()
    held_three.close()


def test_a_given_test_port_offset_wins_and_a_malformed_one_is_refused(monkeypatch):
    monkeypatch.setenv("AIFABRIC_TEST_PORT_OFFSET", "3000")
    assert labid.port_offset("abcdef") == 3000 and labid.port_offset(part=2) == 3030
    assert labid.twin_names("aift") == ("aift3000-", 27000)
    for bad in ("-5", "3OO", str(labid.OFFSET_MAX + 1)):
        monkeypatch.setenv("AIFABRIC_TEST_PORT_OFFSET", bad)
        with pytest.raises(SystemExit, match="AIFABRIC_TEST_PORT_OFFSET='%s': give a whole number 0..%d" % (bad, labid.OFFSET_MAX)):
            labid.port_offset()


def test_twin_ports_stay_out_of_the_kernels_ephemeral_range(tmp_path):
    """twin.py refuses SSH ports the kernel may hand to outgoing connections (an sshd there fails to bind at random),
    naming the range and the fix; the test twins' own ports (24000 + this checkout's offset) stay below it."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "twin"))
    twin = pytest.importorskip("twin")
    ranges = tmp_path / "ip_local_port_range"
    ranges.write_text("32768\t60999\n")
    twin.check_ports(24000, 100, str(ranges))
    twin.check_ports(32668, 100, str(ranges))   # ends just below the range
    for base in (32669, 35200, 60999):
        with pytest.raises(SystemExit) as err:
            twin.check_ports(base, 100, str(ranges))
        assert "ip_local_port_range" in str(err.value) and "AIFABRIC_TEST_PORT_OFFSET" in str(err.value)
    for slot in range(labid.OFFSET_SLOTS):
        for kind in labid.TWIN_PORTS:
            twin.check_ports(labid.TWIN_PORTS[kind] + labid.offset_of_slot(slot), 30, str(ranges))


def test_each_checkouts_own_twin_has_its_own_names_and_ports_clear_of_every_other_range(tmp_path):
    """make twin-up's twin (issue 41 item 5): prefix aif<lab id>- (two checkouts never share a namespace), ports
    61000 + 100 * slot, above the kernel's default ephemeral range and every lab and test port, all below 65536."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "twin"))
    twin = pytest.importorskip("twin")
    ranges = tmp_path / "ip_local_port_range"
    ranges.write_text("32768\t60999\n")
    others = set()
    for slot in range(labid.OFFSET_SLOTS):
        others |= footprint(labid.offset_of_slot(slot))[0]
    bases = {}
    for n in range(0, 0xffffff, 997):
        ident = "%06x" % n
        prefix, base = labid.twin_up_names(ident)
        assert prefix == "aif%s-" % ident
        bases.setdefault(base, ident)
        twin.check_ports(base, labid.TWIN_UP_STEP, str(ranges))
    assert sorted(bases) == [61000 + 100 * s for s in range(labid.TWIN_UP_SLOTS)] and max(bases) + 99 < 65536
    assert min(bases) > max(others) and min(bases) > labid.switch_port_base("%06x" % (labid.PORT_BASE_SLOTS - 1)) + 25


def test_a_twin_on_ports_in_use_is_refused_before_anything_is_built(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "tests", "lab", "twin"))
    twin = pytest.importorskip("twin")
    import socket  # pylint: disable=import-outside-toplevel
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        with pytest.raises(SystemExit) as err:
            twin.check_free(port - 2, 4, str(tmp_path))
        assert "%d in use on 127.0.0.1" % port in str(err.value) and "TWIN_BASE_PORT=<port>" in str(err.value)
    twin.check_free(port - 2, 4, str(tmp_path))   # free again
