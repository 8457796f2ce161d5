
_CHECKSUM_MODULUS = (1 << 61) - 1


def run_case(solution, case_input):
    # Operation i is put(key, i) when ops[i] >= 0 with key = ops[i], and
    # get(key) when ops[i] < 0 with key = -ops[i] - 1.
    cache = solution.LRUCache(case_input["capacity"])
    results = []
    for index, op in enumerate(case_input["ops"]):
        if op >= 0:
            cache.put(op, index)
        else:
            results.append(_exact_int(cache.get(-op - 1), "get()"))
    if not case_input["summary"]:
        return results
    checksum = 0
    for value in results:
        checksum = (checksum * 1_000_003 + value + 2) % _CHECKSUM_MODULUS
    return {
        "gets": len(results),
        "misses": sum(1 for value in results if value == -1),
        "sum": sum(results),
        "first": results[:20],
        "checksum": checksum,
    }
