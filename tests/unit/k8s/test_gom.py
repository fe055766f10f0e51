"""The GOM agent as a DaemonSet in the Kubernetes output (issue 38 step 2)."""
import json

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.gom import agent
from ansible_collections.aifabric.roce.plugins.module_utils.gom.identify import plan_identifiable
from ansible_collections.aifabric.roce.plugins.module_utils.gom.probes import by_host
from ansible_collections.aifabric.roce.plugins.module_utils.k8s import gom as k8s_gom
from ansible_collections.aifabric.roce.plugins.modules import k8s_rail_networks, probe_plan

from ..fabric.intents import lab
from ..module_runner import run_module


def lab_probes():
    return by_host(plan_identifiable(build_plan(lab()), dport=4792))


def test_daemonset_runs_the_agent_on_the_host_network_with_one_config_per_host():
    probes = lab_probes()
    docs = k8s_gom.daemonset(probes, "print('agent')\n", "10.0.0.5:9720", namespace="gom")
    maps, ds = docs[:-1], docs[-1]
    assert [d["kind"] for d in maps] == ["ConfigMap"] and ds["kind"] == "DaemonSet"
    spec = ds["spec"]["template"]["spec"]
    assert spec["hostNetwork"] is True and spec["nodeSelector"] == {"aifabric.roce/gpu-host": "true"}
    assert spec["containers"][0]["command"] == ["python3", "/gom/agent.py", "--config", "/gom/$(NODE_NAME).json"]
    assert [s["configMap"]["name"] for s in spec["volumes"][0]["projected"]["sources"]] == ["aifabric-gom-agent-0"]
    data = maps[0]["data"]
    assert data["agent.py"] == "print('agent')\n" and sorted(data) == ["agent.py"] + ["gpu0%d.json" % n for n in range(1, 5)]
    for host in ("gpu01", "gpu02", "gpu03", "gpu04"):
        config = agent.check_config(json.loads(data["%s.json" % host]))     # what the agent itself accepts
        assert config["dport"] == 4792 and config["collector"] == "10.0.0.5:9720"
        assert [p["id"] for p in config["probes"]] == [p["id"] for p in probes[host]]
        # it answers on every address of its host that a probe is sent to
        assert set(config["addresses"]) == set(p["dst_address"] for ps in probes.values() for p in ps
                                               if p["dst_host"] == host)


def test_configs_are_sharded_below_the_configmap_limit(monkeypatch):
    monkeypatch.setattr(k8s_gom, "SHARD_BYTES", 3000)
    docs = k8s_gom.daemonset(lab_probes(), "x" * 100, "c:1")
    maps = docs[:-1]
    assert len(maps) > 1 and all(len(json.dumps(m["data"])) < 3000 + 2500 for m in maps)
    names = set(k for m in maps for k in m["data"])
    assert names == {"agent.py", "gpu01.json", "gpu02.json", "gpu03.json", "gpu04.json"}
    sources = docs[-1]["spec"]["template"]["spec"]["volumes"][0]["projected"]["sources"]
    assert [s["configMap"]["name"] for s in sources] == [m["metadata"]["name"] for m in maps]


def test_module_adds_the_agent_from_probe_plan_output(tmp_path, capsys):
    probes = tmp_path / "probes.json"
    run_module(probe_plan, {"fabric": lab(), "dest": str(probes)}, capsys)
    result = run_module(k8s_rail_networks, {"fabric": lab(), "gom_probes": str(probes), "gom_collector": "10.0.0.5:9720"},
                        capsys)
    kinds = [d["kind"] for d in result["manifests"]]
    assert kinds[-2:] == ["ConfigMap", "DaemonSet"] and result["gom_agent"] == result["manifests"][-2:]
    assert "MAGIC = b\"GOM1\"" in result["gom_agent"][0]["data"]["agent.py"]      # the collection's own agent
    bad = run_module(k8s_rail_networks, {"fabric": lab(), "gom_probes": str(probes), "gom_collector": "nohost"}, capsys)
    assert bad["failed"] and "gom_collector" in bad["msg"]
    missing = run_module(k8s_rail_networks, {"fabric": lab(), "gom_probes": str(tmp_path / "x.json"),
                                             "gom_collector": "c:1"}, capsys)
    assert missing["failed"] and "gom_probes" in missing["msg"] and "Fix" in missing["msg"]
    alone = run_module(k8s_rail_networks, {"fabric": lab(), "gom_probes": str(probes)}, capsys)
    assert alone["failed"] and alone["msg"].startswith("gom_collector is required with gom_probes")
