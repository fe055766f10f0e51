"""Kubernetes rail networks: Spiderpool pools/configs, NADs, annotations, schema validation."""
import ipaddress
import json

import jsonschema
import pytest
import yaml

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.k8s.rails import K8sRailError, manifests, render
from ansible_collections.aifabric.roce.plugins.module_utils.k8s.schemas import BY_KIND, CNI_CONFIG

from ..fabric.intents import lab, rail512, small


def expand(ips):
    out = set()
    for item in ips:
        first, _sep, last = item.partition("-")
        a = ipaddress.ip_address(first)
        b = ipaddress.ip_address(last or first)
        out.update(ipaddress.ip_address(i) for i in range(int(a), int(b) + 1))
    return out


def validate_all(rendered):
    docs = manifests(rendered, "spiderpool") + manifests(rendered, "nad")
    for doc in docs:
        again = yaml.safe_load(yaml.safe_dump(doc))
        assert again == doc
        jsonschema.validate(again, BY_KIND[doc["kind"]])
    for nad in rendered["networkattachmentdefinitions"]:
        jsonschema.validate(json.loads(nad["spec"]["config"]), CNI_CONFIG)
    return docs


@pytest.mark.parametrize("intent", [lab, rail512])
def test_one_pool_and_config_per_rail_valid_against_schema(intent):
    plan = build_plan(intent())
    rendered = render(plan)
    validate_all(rendered)
    rails = plan["sizing"]["rails"]
    assert len(rendered["spiderippools"]) == rails
    assert len(rendered["spidermultusconfigs"]) == rails
    assert len(rendered["networkattachmentdefinitions"]) == rails
    names = ["kube-system/rail%d" % r for r in range(rails)]
    assert rendered["pod_annotations"] == {"k8s.v1.cni.cncf.io/networks": ",".join(names)}


@pytest.mark.parametrize("intent", [lab, rail512, lambda: small(servers=10, rails=3, spg=4)])
def test_pod_ranges_never_touch_host_or_gateway_addresses(intent):
    plan = build_plan(intent())
    rendered = render(plan)
    taken = set()
    for host in plan["hosts"].values():
        for nic in host["nics"]:
            taken.add(ipaddress.ip_address(nic["address"]))
            taken.add(ipaddress.ip_address(nic["gateway"]))
    for pool in rendered["spiderippools"]:
        spec = pool["spec"]
        subnet = ipaddress.ip_network(spec["subnet"])
        pod_ips = expand(spec["ips"])
        assert pod_ips and not pod_ips & taken
        assert all(ip in subnet and ip not in (subnet.network_address, subnet.broadcast_address) for ip in pod_ips)
        assert ipaddress.ip_address(spec["gateway"]) in subnet
        leaf_hosts = list(spec["nodeName"])
        for host in leaf_hosts:
            nic = [n for n in plan["hosts"][host]["nics"] if n["rail"] == int(pool["metadata"]["labels"]["aifabric.roce/rail"])][0]
            assert nic["subnet"] == spec["subnet"] and nic["gateway"] == spec["gateway"]
            assert {"dst": nic["rail_pool"], "gw": nic["gateway"]} in spec["routes"]


def test_rail512_capacity_and_lab_capacity():
    ranges = render(build_plan(rail512()))["pod_ranges"]
    assert ranges[0]["first"] == "10.0.0.65" and ranges[0]["last"] == "10.0.0.125" and ranges[0]["capacity"] == 61
    lab_ranges = render(build_plan(lab()))["pod_ranges"]
    assert [r["capacity"] for r in lab_ranges] == [1, 1, 1, 1]


def test_pool_ranges_stay_clear_of_servers_added_later():
    before = render(build_plan(small(servers=5, rails=2, spg=4)))
    after_plan = build_plan(small(servers=8, rails=2, spg=4))
    new_addresses = set(ipaddress.ip_address(n["address"]) for h in after_plan["hosts"].values() for n in h["nics"])
    for pool in before["spiderippools"]:
        assert not expand(pool["spec"]["ips"]) & new_addresses


def test_multi_group_pools_are_pinned_to_their_group_and_listed_per_rail():
    plan = build_plan(small(servers=8, rails=2, spg=4))
    rendered = render(plan, namespace="ai")
    validate_all(rendered)
    pools = dict((p["metadata"]["name"], p) for p in rendered["spiderippools"])
    assert sorted(pools) == ["rail0-g1", "rail0-g2", "rail1-g1", "rail1-g2"]
    assert pools["rail0-g2"]["spec"]["nodeName"] == ["h005", "h006", "h007", "h008"]
    config = rendered["spidermultusconfigs"][0]
    assert config["metadata"]["namespace"] == "ai"
    assert config["spec"]["macvlan"] == {"master": ["eth1"], "rdmaResourceName": "spidernet.io/rail0",
                                         "ippools": {"ipv4": ["rail0-g1", "rail0-g2"]}}
    assert rendered["nad_pod_annotations"]["2"] == {"k8s.v1.cni.cncf.io/networks": "ai/rail0-g2,ai/rail1-g2"}


def test_sriov_flavour():
    rendered = render(build_plan(lab()), cni="sriov", sriov_resource="nvidia.com/rail{rail}")
    validate_all(rendered)
    spec = rendered["spidermultusconfigs"][2]["spec"]
    assert spec["cniType"] == "sriov" and spec["sriov"]["resourceName"] == "nvidia.com/rail2"
    nad = rendered["networkattachmentdefinitions"][2]
    assert nad["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/resourceName": "nvidia.com/rail2"}
    assert json.loads(nad["spec"]["config"])["type"] == "sriov"


def test_nad_config_matches_pool():
    rendered = render(build_plan(rail512()))
    config = json.loads(rendered["networkattachmentdefinitions"][3]["spec"]["config"])
    pool = rendered["spiderippools"][3]["spec"]
    assert config["master"] == "ens4np0" and config["type"] == "macvlan"
    assert config["ipam"]["range"] == pool["subnet"]
    assert "%s-%s" % (config["ipam"]["range_start"], config["ipam"]["range_end"]) == pool["ips"][0]
    assert config["ipam"]["gateway"] == pool["gateway"]


def test_schema_rejects_a_misspelt_field():
    doc = render(build_plan(lab()))["spiderippools"][0]
    doc["spec"]["gatway"] = doc["spec"].pop("gateway")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, BY_KIND["SpiderIPPool"])


def test_p2p_scheme_and_unknown_cni_are_refused():
    with pytest.raises(K8sRailError, match="subnet_per_leaf"):
        render(build_plan(small(servers=4, rails=2, scheme="p2p")))
    with pytest.raises(K8sRailError, match="macvlan or sriov"):
        render(build_plan(lab()), cni="ovs")


def test_resource_names_must_be_extended_resource_names():
    with pytest.raises(K8sRailError, match="rdma_resource 'rail{rail}'.*Fix: use a name such as"):
        render(build_plan(lab()), rdma_resource="rail{rail}")
    with pytest.raises(K8sRailError, match="sriov_resource"):
        render(build_plan(lab()), cni="sriov", sriov_resource="a/b/{rail}")


@pytest.mark.parametrize("namespace", ["Kube-System", "rdma_net", "-a", "a-", "a.b", "x" * 64, ""])
def test_a_namespace_kubernetes_refuses_is_refused_by_name(namespace):
    with pytest.raises(K8sRailError, match=r"^namespace .* is not a DNS-1123 label.*Fix:"):
        render(build_plan(lab()), namespace=namespace)


@pytest.mark.parametrize("template, words", [
    ("spidernet.io/rail{0}", "uses the field {0}"), ("spidernet.io/rail{}", "uses the field {}"),
    ("spidernet.io/rail{rail:99999999}", "uses the field {rail:99999999}"), ("x.io/r{rail.real}", "{rail.real}"),
    ("x.io/r{rail!r}", "{rail!r}"), ("x.io/r{rail", "is not a format string"), ("x.io/r{nic}", "{nic}"),
    ("X_Y.io/rail{rail}", "not an extended resource name"), ("x.io/" + "r" * 64 + "{rail}", "not an extended"),
])
def test_a_name_template_never_crashes_and_names_the_option(template, words):
    with pytest.raises(K8sRailError) as err:
        render(build_plan(lab()), rdma_resource=template)
    assert str(err.value).startswith("rdma_resource ") and words in str(err.value) and "Fix:" in str(err.value)


def test_a_width_and_a_prefix_that_kubernetes_accepts_still_work():
    out = render(build_plan(lab()), rdma_resource="nvidia.com/rail{rail:02d}", prefix="roce-", namespace="rdma-net")
    assert out["spiderippools"][0]["metadata"]["name"].startswith("roce-rail0")
    assert out["pod_resources"] == dict(("nvidia.com/rail%02d" % r, 1) for r in range(len(out["pod_resources"])))
    with pytest.raises(K8sRailError, match="^name_prefix 'Roce_' gives the object name 'Roce_rail0"):
        render(build_plan(lab()), prefix="Roce_")
