"""Property: whatever structure comes in, the planner returns a plan or raises FabricError.

No other exception, no hang: hypothesis drives normalize + build_plan with random structures,
with random values put at random key paths of a valid fabric, and with several such edits at once.
When a plan does come out, every name in it passes the allowlists and every artifact path stays
inside the artifact directory.

Settings: each example must finish within DEADLINE (hypothesis) and ALARM_S (SIGALRM, which turns a
real hang into a failure instead of a stuck run); example counts keep the file under ~30 s on a
shared 2-core machine. database=None: no .hypothesis directory is written into the checkout.
"""
import datetime
import json
import posixpath
import signal
import string

from hypothesis import HealthCheck, given, settings, strategies as st

from ansible_collections.aifabric.roce.plugins.module_utils.fabric import names as allow
from ansible_collections.aifabric.roce.plugins.module_utils.nos.offline import switch_files
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.artifacts import render_all
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.errors import FabricError
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.plan import build_plan
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.views import cabling
from ansible_collections.aifabric.roce.plugins.module_utils.fabric.schema import normalize

from .intents import lab, small
from .malformed import apply_edits

DEADLINE = datetime.timedelta(seconds=5)
ALARM_S = 20
COMMON = dict(deadline=DEADLINE, database=None, suppress_health_check=[HealthCheck.too_slow])

# Characters that mean something to a shell, a CLI, a path or a format string, plus invisible ones.
HOSTILE = "{}[]:.!/\\;$`'\"\n\t #-_|&<>*?~\u202e\u200b\x00"
texts = st.text(alphabet=string.ascii_letters[:6] + string.digits[:4] + HOSTILE, max_size=24)
patterns = st.builds(lambda a, b, c: a + b + c, st.sampled_from(["", "gpu", "Ethernet", "swp", "../", "-"]),
                     st.sampled_from(["{index}", "{port}", "{lane}", "{rail}", "{group}", "{plane}", "{index[0]}",
                                      "{port.vlan}", "{index:>999999999}", "{index:03d}", "{index!r}", "{0}", "{}",
                                      "{", "}", "{{x}}", "{index:x}", "{rail.real}", "", "{port}/{lane}"]),
                     st.sampled_from(["", "/1", "$(reboot)", "\nreload", ";id", "..", "\n"]))
port_lists = st.one_of(
    st.builds("{}-{}".format, st.integers(-2, 5000), st.integers(-2, 2 * 10 ** 9)),
    st.builds(",".join, st.lists(st.sampled_from(["1-8", "5-6", "9", "0", "4096", "4097", "x", " 3 - 4 "]), max_size=4)),
    st.lists(st.integers(-1, 5000), max_size=6))
interesting_ints = st.one_of(st.integers(), st.sampled_from(
    [0, -1, 1, 2, 3, 4, 7, 8, 63, 64, 255, 256, 4096, 4097, 65536, 65537, 262144, 10 ** 9, 2 ** 31, 2 ** 63]))
scalars = st.one_of(st.none(), st.booleans(), interesting_ints, st.floats(allow_nan=True), texts, patterns, port_lists)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(texts, st.sampled_from(
        ["count", "names", "ports", "trust", "gpu", "netdev", "rdma", "platform", "model", "port_name"])), inner,
        max_size=4)), max_leaves=12)


def _key_paths(node, prefix=""):
    """Every key path of a fabric, in apply_edits syntax (lists indexed by number)."""
    items = enumerate(node) if isinstance(node, list) else node.items() if isinstance(node, dict) else []
    for key, child in items:
        path = "%s%s" % (prefix, key)
        yield path
        yield from _key_paths(child, path + ".")


# Keys absent from the base fabrics but part of the schema: edits may add them.
EXTRA_PATHS = ["servers.names", "servers.first_index", "servers.gpus", "leafs.device_type", "spines.device_type",
               "spines.planes", "qos.overrides", "nccl", "addressing.rail_pools", "switch_models.lab-leaf.downlinks.breakout"]
LAB_PATHS = sorted(set(_key_paths(lab())) | set(EXTRA_PATHS))
QOS_KEYS = ["trust", "roce_dscp", "lossless_priorities", "host_mtu", "roce_mtu", "pfc_watchdog", "bogus"]


def _alarm(_signum, _frame):
    raise AssertionError("planning did not finish within %d s (a hang)" % ALARM_S)


def _plan_or_fabric_error(fabric):
    """The planner's outcome; fails the test on any exception other than FabricError."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(ALARM_S)
    try:
        return build_plan(fabric)
    except FabricError as err:
        assert err.problems, "FabricError without problems"
        for problem in err.problems:
            assert isinstance(problem.path, str) and problem.path.startswith("fabric"), problem.path
            assert problem.message and problem.fix, str(problem)
        return None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _plain(text):
    """Independent of the allowlist's regexes: no whitespace, control, invisible or shell characters."""
    return bool(text) and all(c.isascii() and c.isprintable() and not c.isspace() and c not in "$`;'\"\\|&<>(){}*?!#~"
                              for c in text) and not text.startswith("-") and ".." not in text


def _check_accepted_plan(plan):
    json.dumps(plan, sort_keys=True)
    for name in list(plan["hosts"]) + list(plan["leafs"]) + list(plan["spines"]):
        assert allow.object_name_problem("x", name, maximum=allow.SERVER_NAME_MAX) is None, name
        assert _plain(name) and "/" not in name, name
    for cable in cabling(plan):
        for side in ("a_port", "b_port"):
            assert allow.port_name_problem("x", cable[side]) is None, cable
            assert _plain(cable[side]), cable
    for path in render_all(plan, switch_files):
        assert path == posixpath.normpath(path) and not path.startswith(("/", "..")), path


def _edit(fabric_factory, edits):
    try:
        fabric = apply_edits(fabric_factory(), edits)
    except (KeyError, IndexError, TypeError, ValueError):
        return None  # the edit path does not exist in this shape: nothing to test
    return fabric


@settings(max_examples=150, **COMMON)
@given(values)
def test_any_structure_is_planned_or_refused(fabric):
    plan = _plan_or_fabric_error(fabric)
    if plan is not None:
        _check_accepted_plan(plan)


@settings(max_examples=150, **COMMON)
@given(values)
def test_normalize_alone_only_raises_fabric_error(fabric):
    try:
        normalize(fabric)
    except FabricError as err:
        assert err.problems


@settings(max_examples=300, **COMMON)
@given(st.sampled_from(LAB_PATHS), st.one_of(values, patterns, port_lists, interesting_ints, texts))
def test_one_hostile_value_anywhere_in_a_valid_fabric(path, value):
    fabric = _edit(lab, [("set", path, value)])
    if fabric is not None:
        plan = _plan_or_fabric_error(fabric)
        if plan is not None:
            _check_accepted_plan(plan)


@settings(max_examples=150, **COMMON)
@given(st.lists(st.tuples(st.sampled_from(LAB_PATHS), st.one_of(scalars, values)), min_size=2, max_size=5))
def test_several_hostile_values_at_once(edits):
    fabric = _edit(lab, [("set", path, value) for path, value in edits])
    if fabric is not None:
        plan = _plan_or_fabric_error(fabric)
        if plan is not None:
            _check_accepted_plan(plan)


@settings(max_examples=100, **COMMON)
@given(st.dictionaries(st.sampled_from(QOS_KEYS), st.one_of(scalars, values), max_size=3))
def test_qos_overrides_of_any_shape(overrides):
    fabric = small()
    fabric["qos"] = {"overrides": overrides}
    plan = _plan_or_fabric_error(fabric)
    if plan is not None:
        assert plan["qos"]["trust"] == "dscp"
