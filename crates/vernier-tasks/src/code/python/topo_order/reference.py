import heapq


def topo_order(deps):
    waiting = {}
    dependants = {}
    for item, requirements in deps.items():
        waiting.setdefault(item, 0)
        for requirement in requirements:
            waiting.setdefault(requirement, 0)
            waiting[item] += 1
            dependants.setdefault(requirement, []).append(item)
    ready = [item for item, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        item = heapq.heappop(ready)
        order.append(item)
        for dependant in dependants.get(item, ()):
            waiting[dependant] -= 1
            if waiting[dependant] == 0:
                heapq.heappush(ready, dependant)
    if len(order) != len(waiting):
        raise ValueError("the dependencies contain a cycle")
    return order
