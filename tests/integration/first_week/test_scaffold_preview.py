"""An operator's first preview (issue 41 item 1): `site.yml --check --diff` on an inventory fresh from
playbooks/new_fabric.yml, before any switch credential or reachable host exists.

Before: every switch failed "Read every switch once" (no credentials), the play had no host left and the run ended
there (rc 2 in 1.3 s): no GPU host tried, no preview summary. Now every device is tried, and the summary names each
device that could not be previewed with the reason (the example's own hint for the missing credentials) and where
the offline configuration is."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.path.dirname(sys.executable)
RECAP_RE = re.compile(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)\s+skipped=\d+\s+rescued=\d+\s+"
                      r"ignored=(\d+)", re.M)
SWITCHES = ["leaf%d" % i for i in range(8)] + ["spine1", "spine2"]
HOSTS = ["gpu%02d" % i for i in range(1, 5)]


def playbook(tmp_path, *args):
    # no switch credentials anywhere (a fresh inventory has none); SSH to the example's documentation addresses
    # (RFC 5737) fails fast or after 3 s, whatever the network
    env = dict((k, v) for k, v in os.environ.items() if k not in ("ANSIBLE_NET_USERNAME", "ANSIBLE_NET_PASSWORD"))
    env.update(ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_TIMEOUT="3",
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run([os.path.join(BIN, "ansible-playbook")] + list(args), cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_a_fresh_inventory_previews_every_device_and_names_what_could_not_be_previewed(tmp_path):
    inv = str(tmp_path / "myfab")
    proc = playbook(tmp_path, os.path.join(ROOT, "playbooks", "new_fabric.yml"), "-e", "new_fabric_dest=" + inv)
    assert proc.returncode == 0, proc.stdout[-3000:]

    proc = playbook(tmp_path, "-i", inv, os.path.join(ROOT, "playbooks", "site.yml"), "--check", "--diff")
    out = proc.stdout
    assert proc.returncode == 2, out[-3000:] + proc.stderr[-2000:]
    recap = dict((m.group(1), tuple(int(g) for g in m.groups()[1:])) for m in RECAP_RE.finditer(out))
    # every switch was read and previewed (each attempt shown as fatal ... ignoring), none failed the run
    for name in SWITCHES:
        assert recap[name][2] == 0 and recap[name][3] >= 2, (name, recap)
    # one batch in a preview, and it says so
    assert re.search(r'"msg": "switch batch 1 of 1: (leaf\d, ){8}spine1, spine2 \(preview: every switch at once\)"', out), out[:6000]
    # every GPU host was tried by both host plays, after the switches
    assert out.index("PLAY [GPU host rail network") > out.index("PLAY [Switch RoCE QoS")
    for name in HOSTS:
        assert out.count("fatal: [%s]: UNREACHABLE!" % name) == 2, out[-4000:]
    # the summary: one line per reason, naming the devices, then where the offline configuration is
    summary = out[out.index("PLAY [Preview summary"):]
    assert '"no device was previewed"' in summary
    assert ('"%s: no switch password: attach an AWX Network credential, or set vault_switch_password in '
            'group_vars/switches/vault.yml"' % ", ".join(SWITCHES)) in summary, summary[:3000]
    # one line per ssh error, naming its hosts: the example's addresses fail as "Connection timed out" or, when the
    # kernel already knows there is no neighbour, "No route to host" (both seen on one machine)
    named = [h for line in re.findall(r'"([^"]+): unreachable: [^"]+"', summary) for h in line.split(", ")]
    assert sorted(named) == sorted(HOSTS), summary[:3000]
    assert "ansible-playbook aifabric.roce.plan -i <this inventory>" in summary
    assert os.path.join(str(tmp_path), "build", "myfab", "plan.json") in summary
    assert ("not previewed: switches %s (see their fatal ... ignoring lines), unreachable hosts %s; no device was previewed"
            % (", ".join(SWITCHES), ", ".join(HOSTS))) in summary


def test_plan_of_a_fresh_inventory_warns_what_its_platforms_will_not_configure_or_verify(tmp_path):
    """Issue 41 item 4: plan.yml on the scaffolded inventory (dell_sonic leafs, eos spines) says, from the drivers'
    declarations, what cannot be verified on the leafs, that the example's port_name is not dell_sonic's naming and
    that the group is sized full, in the terminal and in report.md; each switch's .cfg is what site.yml pushes."""
    inv = str(tmp_path / "myfab")
    assert playbook(tmp_path, os.path.join(ROOT, "playbooks", "new_fabric.yml"), "-e", "new_fabric_dest=" + inv).returncode == 0
    proc = playbook(tmp_path, "-i", inv, os.path.join(ROOT, "playbooks", "plan.yml"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    said = " ".join((proc.stdout + proc.stderr).split())
    assert ("[WARNING]: platform dell_sonic (leaf0, leaf1, leaf2, leaf3 and 4 more): cannot verify BGP sessions (no "
            "captured klish `show bgp ipv4 unicast summary` of Dell Enterprise SONiC); PPD path per host port") in said, said[-3000:]
    assert "port_name 'Ethernet{port}' names the leaf ports of dell_sonic switches Ethernet1, Ethernet2" in said
    assert "server group 1 holds 4 of its 32 servers" in said
    assert "platform eos" not in said   # the spines: rendered and verified, nothing to say
    with open(os.path.join(str(tmp_path), "build", "myfab", "report.md")) as handle:
        report = handle.read()
    assert "| dell_sonic | leaf0, leaf1, leaf2, leaf3 and 4 more | - | BGP sessions: no captured klish" in report
    with open(os.path.join(str(tmp_path), "build", "myfab", "switches", "leaf0.cfg")) as handle:
        assert "router bgp" in handle.read()   # and the role's default now pushes it (tests/unit/nos/test_families.py)
