

def run_case(solution, case_input):
    # The input is a list of [item, [dependencies...]] pairs so that the
    # dict's insertion order is exactly the one the case chose.
    deps = {item: list(requirements) for item, requirements in case_input}
    result = _exact_sequence(solution.topo_order(deps), "the result")
    return [_exact_str(item, "each item") for item in result]
