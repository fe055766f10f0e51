"""The event path users run (issue 39 item 2), all real: Prometheus evaluates GOM's alert rules
(monitoring/gom-alerts.yml) on a GOM-shaped metrics page, Alertmanager sends the notification to ansible-rulebook
running extensions/eda/rulebooks/gor.yml, which runs playbooks/gor_drain.yml against a real Slurm: the host is
drained with the reason while its link is bad, and resumed once the alert resolves. The metrics page stands in for
GOM's collector (its series and labels as docs/gom.md section 4 states them); the twin test runs the real one."""
import http.server
import os
import sys
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import event_path  # noqa: E402

# issue 39: a host-link fault drains the node in <= 10 s; make bench-gor holds the test to it (AIFABRIC_GOR_STRICT=1, an
# otherwise idle machine); under make test's parallel lanes (9.8 s seen at load 13 on 2 cores) the bound is 20 s
CHAIN_BUDGET_S = 10.0 if os.environ.get("AIFABRIC_GOR_STRICT") else 20.0


class Metrics(http.server.BaseHTTPRequestHandler):
    text = ""

    def do_GET(self):  # noqa: N802 - http.server's name
        body = Metrics.text.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def state_line(link, cls, value):
    host, _sep, rest = link.partition(":")
    return ('gom_link_state{link="%s",link_class="%s",from="%s",to="%s",gpus="%s"} %d\n'
            % (link, cls, host, rest.split(">")[1].split(":")[0], link.split(">")[0], value))


@pytest.fixture(scope="module")
def chain(cluster, tmp_path_factory):
    if event_path.missing():
        pytest.fail("event path tools missing: %s. Fix: bash tools/setup-system.sh and make setup"
                    % event_path.missing())
    root = str(tmp_path_factory.mktemp("eventpath"))
    ports = event_path.ports()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", ports["metrics"]), Metrics)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    inventory = os.path.join(root, "inventory.yml")
    with open(inventory, "w") as handle:
        handle.write("all:\n  hosts:\n    localhost:\n      ansible_connection: local\n"
                     "      ansible_python_interpreter: %s\n      gor_slurm_conf: %s\n" % (sys.executable, cluster["conf"]))
    path = event_path.EventPath(root, inventory)
    try:
        path.up("127.0.0.1:%d" % ports["metrics"])
        yield path
    finally:
        path.down()
        server.shutdown()


def test_host_link_alert_drains_in_slurm_and_its_resolution_resumes(cluster, chain):
    plan = cluster["plan"]
    name = sorted(plan["hosts"])[3]
    nic = plan["hosts"][name]["nics"][0]
    link = "%s:%s>%s:%s" % (name, nic["netdev"], nic["leaf"], nic["leaf_port"])
    healthy = "".join(state_line("%s:%s>%s:%s" % (h, n["netdev"], n["leaf"], n["leaf_port"]), "host_up", 0)
                      for h in sorted(plan["hosts"]) for n in plan["hosts"][h]["nics"])
    Metrics.text = healthy
    time.sleep(3)     # Prometheus has scraped the healthy page: the fault below is a change it sees
    Metrics.text = healthy.replace(state_line(link, "host_up", 0), state_line(link, "host_up", 1))
    start = time.monotonic()
    while not cluster["node"](name)["drain"]:
        assert time.monotonic() - start < 60, "not drained in 60 s: %s\n%s" % (chain.log("rulebook"),
                                                                               chain.log("alertmanager"))
        time.sleep(0.2)
    drained = time.monotonic() - start
    node = cluster["node"](name)
    assert node["reason"].startswith("aifabric: %s " % link), node
    Metrics.text = healthy
    start = time.monotonic()
    while cluster["node"](name)["drain"]:
        assert time.monotonic() - start < 60, "not resumed in 60 s: %s" % chain.log("rulebook")
        time.sleep(0.2)
    resumed = time.monotonic() - start
    print("\nevent path (metrics -> Prometheus -> Alertmanager -> ansible-rulebook -> gor_drain.yml -> slurmctld): "
          "drained %.1f s after the link's state went to fault, resumed %.1f s after it cleared" % (drained, resumed))
    assert drained <= CHAIN_BUDGET_S
