from collections import deque


def topo_order(deps):
    # The defect: ready items leave in the order they became ready (FIFO),
    # not smallest first.
    waiting = {}
    dependants = {}
    for item, requirements in deps.items():
        waiting.setdefault(item, 0)
        for requirement in requirements:
            waiting.setdefault(requirement, 0)
            waiting[item] += 1
            dependants.setdefault(requirement, []).append(item)
    ready = deque(item for item, count in waiting.items() if count == 0)
    order = []
    while ready:
        item = ready.popleft()
        order.append(item)
        for dependant in dependants.get(item, ()):
            waiting[dependant] -= 1
            if waiting[dependant] == 0:
                ready.append(dependant)
    if len(order) != len(waiting):
        raise ValueError("the dependencies contain a cycle")
    return order
