"""GOR's event path on this machine (test plumbing): Prometheus -> Alertmanager -> ansible-rulebook, all real.

Prometheus (Debian `prometheus`) scrapes a metrics URL every second and evaluates GOM's alert rules
(monitoring/gom-alerts.yml); Alertmanager (Debian `prometheus-alertmanager`, clustering off) sends every
notification, resolved ones too, to a webhook of ansible-rulebook (host-link alerts to the drain ruleset's) (PyPI, Java from Debian `default-jre-headless`)
running extensions/eda/rulebooks/gor.yml with the given inventory. Everything lives in one directory; ports are
this checkout's (tests/lab/labid.py EVENT_PATH_PORTS + offset). Timers are the shortest each tool takes (scrape and
evaluation 1 s, group_wait 0 s, group_interval 1 s) so a test measures the chain, not its waits.
"""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import labid  # noqa: E402

BINARIES = ("/usr/bin/prometheus", "/usr/bin/prometheus-alertmanager")


def ports(offset=None):
    base = labid.port_offset() if offset is None else offset
    return dict((k, v + base) for k, v in labid.EVENT_PATH_PORTS.items())


def missing():
    out = [b for b in BINARIES if not os.access(b, os.X_OK)]
    rulebook = os.path.join(os.path.dirname(sys.executable), "ansible-rulebook")
    if not os.access(rulebook, os.X_OK):
        out.append(rulebook)
    if not shutil.which("java"):
        out.append("java")
    return out


def _wait_http(url, limit=60.0, proc=None, log=None):
    deadline = time.time() + limit
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError("%s exited (rc %s): %s" % (proc.args[0], proc.returncode, _tail(log)))
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError("%s did not answer in %.0f s: %s" % (url, limit, _tail(log)))


def _tail(path):
    if not path or not os.path.exists(path):
        return ""
    with open(path, errors="replace") as handle:
        return handle.read()[-3000:]


class EventPath(object):
    def __init__(self, root, inventory, rules=os.path.join(ROOT, "monitoring", "gom-alerts.yml"), offset=None):
        self.root, self.inventory, self.rules = root, inventory, rules
        self.ports = ports(offset)
        self.procs = []
        os.makedirs(root, exist_ok=True)

    def _start(self, name, argv, env=None):
        log = os.path.join(self.root, name + ".log")
        proc = subprocess.Popen(argv, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env, cwd=self.root)
        self.procs.append(proc)
        return proc, log

    def up(self, metrics_url, rulebook=os.path.join(ROOT, "extensions", "eda", "rulebooks", "gor.yml")):
        p = self.ports
        with open(os.path.join(self.root, "prometheus.yml"), "w") as handle:
            json.dump({"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                       "rule_files": [self.rules],
                       "alerting": {"alertmanagers": [{"static_configs": [
                           {"targets": ["127.0.0.1:%d" % p["alertmanager"]]}]}]},
                       "scrape_configs": [{"job_name": "gom", "metrics_path": "/metrics",
                                           "static_configs": [{"targets": [metrics_url]}]}]}, handle)
        with open(os.path.join(self.root, "alertmanager.yml"), "w") as handle:
            timers = {"group_by": ["alertname", "link"], "group_wait": "0s", "group_interval": "1s", "repeat_interval": "1h"}
            json.dump({"route": dict(timers, receiver="gor-steer", routes=[
                dict(timers, receiver="gor-drain", matchers=['link_class=~"host_up|host_down"'])]),
                "receivers": [{"name": "gor-steer", "webhook_configs": [
                    {"url": "http://127.0.0.1:%d/endpoint" % p["rulebook"], "send_resolved": True}]},
                    {"name": "gor-drain", "webhook_configs": [
                        {"url": "http://127.0.0.1:%d/endpoint" % p["rulebook_drain"], "send_resolved": True}]}]}, handle)
        with open(os.path.join(self.root, "rulebook-vars.yml"), "w") as handle:
            json.dump({"gor_webhook_host": "127.0.0.1", "gor_webhook_port": p["rulebook"],
                       "gor_drain_webhook_port": p["rulebook_drain"]}, handle)
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
                   PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
        rb, rb_log = self._start("rulebook", [os.path.join(os.path.dirname(sys.executable), "ansible-rulebook"),
                                              "--rulebook", rulebook, "-i", self.inventory, "--vars",
                                              os.path.join(self.root, "rulebook-vars.yml"), "-v"], env=env)
        am, am_log = self._start("alertmanager", [
            "/usr/bin/prometheus-alertmanager", "--config.file=%s" % os.path.join(self.root, "alertmanager.yml"),
            "--storage.path=%s" % os.path.join(self.root, "am-data"), "--cluster.listen-address=",
            "--web.listen-address=127.0.0.1:%d" % p["alertmanager"]])
        prom, prom_log = self._start("prometheus", [
            "/usr/bin/prometheus", "--config.file=%s" % os.path.join(self.root, "prometheus.yml"),
            "--storage.tsdb.path=%s" % os.path.join(self.root, "prom-data"),
            "--web.listen-address=127.0.0.1:%d" % p["prometheus"]])
        _wait_http("http://127.0.0.1:%d/-/ready" % p["alertmanager"], proc=am, log=am_log)
        _wait_http("http://127.0.0.1:%d/-/ready" % p["prometheus"], proc=prom, log=prom_log)
        deadline = time.time() + 90
        while "Waiting for events" not in _tail(rb_log) and "ebhook" not in _tail(rb_log):
            if rb.poll() is not None or time.time() > deadline:
                raise RuntimeError("ansible-rulebook did not start: %s" % _tail(rb_log))
            time.sleep(0.3)
        return self

    def log(self, name):
        return _tail(os.path.join(self.root, name + ".log"))

    def down(self):
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.procs = []
