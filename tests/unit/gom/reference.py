"""Brute-force reference of the GOM planner: the original quadratic greedy (every remote leaf is
scored for every source NIC), kept to check that the indexed planner makes the same choices."""
from ansible_collections.aifabric.roce.plugins.module_utils.gom.probes import LinkModel, sport_for


def reference_reachable(plan):
    model = LinkModel(plan)
    by_leaf = {}
    for nic in model.nics:
        by_leaf.setdefault(nic["leaf"], []).append(nic)
    hosts_of = dict((leaf, set(n["host"] for n in nics)) for leaf, nics in by_leaf.items())
    out = set()
    reached = {}
    for src in model.nics:
        remote = [leaf for leaf in model.leaf_order if leaf in by_leaf and leaf != src["leaf"]
                  and model.parallel.get((src["spine"], leaf)) and hosts_of[leaf] - set([src["host"]])]
        local = [d for d in by_leaf[src["leaf"]] if d["host"] != src["host"] and model.is_local(src, d)]
        if remote or local:
            out.add(src["link_up"])
        for dst in local:
            out.add(dst["link_down"])
        if remote:
            out.add(model.source_up_link(src))
        for leaf in remote:
            out.update(model.parallel_down[(src["spine"], leaf)])
            reached.setdefault(leaf, set()).add(src["host"])
    for leaf, sources in reached.items():
        for dst in by_leaf[leaf]:
            if sources - set([dst["host"]]):
                out.add(dst["link_down"])
    return out


def reference_probes(plan):
    """[(source NIC id, destination NIC id, UDP source port)] in planning order."""
    model = LinkModel(plan)
    nics = model.nics
    by_leaf = {}
    for nic in nics:
        by_leaf.setdefault(nic["leaf"], []).append(nic)
    hosts_of = dict((leaf, set(n["host"] for n in items)) for leaf, items in by_leaf.items())
    dest_used = dict((n["id"], 0) for n in nics)
    slot_used = dict(((key[0], key[1], k), 0) for key, members in model.parallel.items() for k in range(len(members)))
    need = dict((leaf, len(items)) for leaf, items in by_leaf.items())
    need_host = {}
    for nic in nics:
        need_host[(nic["leaf"], nic["host"])] = need_host.get((nic["leaf"], nic["host"]), 0) + 1
    raw = []

    def remote_leafs(src):
        return [leaf for leaf in model.leaf_order if leaf != src["leaf"] and model.parallel.get((src["spine"], leaf))
                and leaf in by_leaf and hosts_of[leaf] - set([src["host"]])]

    def pick_dest(leaf, src):
        return min((d for d in by_leaf[leaf] if d["host"] != src["host"]), key=lambda d: dest_used[d["id"]])

    def emit(src, dst, k, members):
        sport = sport_for(src["address"], dst["address"], k, members) if members > 1 else None
        raw.append((src["id"], dst["id"], sport))
        if not dest_used[dst["id"]]:
            need[dst["leaf"]] -= 1
            need_host[(dst["leaf"], dst["host"])] -= 1
        dest_used[dst["id"]] += 1
        if members:
            slot_used[(src["spine"], dst["leaf"], k)] += 1

    positions = {}
    for leaf in model.leaf_order:
        for pos, nic in enumerate(by_leaf.get(leaf, [])):
            positions[nic["id"]] = (pos, model.leaf_index[leaf])
    local_only = []
    for src in sorted(nics, key=lambda n: positions[n["id"]]):
        leafs = remote_leafs(src)
        if not leafs:
            local_only.append(src)
            continue

        def score(leaf, src=src):
            free = len([k for k in range(len(model.parallel[(src["spine"], leaf)]))
                        if slot_used[(src["spine"], leaf, k)] == 0])
            ring = (model.leaf_index[leaf] - model.leaf_index[src["leaf"]]) % len(model.leaf_order)
            return (free > 0, need[leaf] - need_host.get((leaf, src["host"]), 0), free, -ring)

        target = max(leafs, key=score)
        members = len(model.parallel[(src["spine"], target)])
        k = min(range(members), key=lambda i: (slot_used[(src["spine"], target, i)], i))
        emit(src, pick_dest(target, src), k, members)
    for src in local_only:
        peers = [d for d in by_leaf[src["leaf"]] if d["host"] != src["host"] and model.is_local(src, d)]
        if peers:
            emit(src, min(peers, key=lambda d: dest_used[d["id"]]), 0, 0)
    source_used = {}
    for src_id, _dst, _sport in raw:
        source_used[src_id] = source_used.get(src_id, 0) + 1

    def least_used(sources):
        src = min(sources, key=lambda s: source_used.get(s["id"], 0))
        source_used[src["id"]] = source_used.get(src["id"], 0) + 1
        return src

    for (spine, leaf, k), used in sorted(slot_used.items()):
        if used or leaf not in by_leaf:
            continue
        sources = [s for s in nics if s["spine"] == spine and s["leaf"] != leaf and hosts_of[leaf] - set([s["host"]])]
        if sources:
            src = least_used(sources)
            emit(src, pick_dest(leaf, src), k, len(model.parallel[(spine, leaf)]))
    for dst in nics:
        if dest_used[dst["id"]]:
            continue
        sources = [s for s in nics if model.path(s, dst) is not None]
        if sources:
            src = least_used(sources)
            members = len(model.members(src, dst)) if not model.is_local(src, dst) else 0
            k = min(range(members), key=lambda i: slot_used[(src["spine"], dst["leaf"], i)]) if members else 0
            emit(src, dst, k, members)
    return raw
