import pytest

from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.qos import complete_dscp_map, resolve


def test_complete_map_covers_every_dscp_and_keeps_only_roce_on_the_lossless_priority():
    profile = resolve({"profile": "roce_lossless"})
    mapping = dict(complete_dscp_map(profile))
    assert sorted(mapping) == list(range(64))
    assert mapping[26] == 3 and mapping[48] == 6
    # DSCP 24-31 sit on priority 3 under the NOS defaults (DSCP // 8); here only the RoCE DSCP does
    assert [d for d, p in mapping.items() if p in profile["lossless_priorities"]] == [26]
    assert set(p for d, p in mapping.items() if d not in (26, 48)) == {0}


def test_default_priority_is_an_override_and_must_stay_lossy():
    profile = resolve({"profile": "roce_lossless", "overrides": {"dscp_default_priority": 1}})
    assert dict(complete_dscp_map(profile))[0] == 1
    with pytest.raises(FabricError) as caught:
        resolve({"profile": "roce_lossless", "overrides": {"dscp_default_priority": 3}})
    assert "fabric.qos.overrides.dscp_default_priority" in str(caught.value)
    assert "outside lossless_priorities" in str(caught.value)
    with pytest.raises(FabricError) as caught:
        resolve({"profile": "roce_lossless", "overrides": {"dscp_default_priority": 8}})
    assert "outside 0..7" in str(caught.value)
