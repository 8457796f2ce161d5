

def run_case(solution, case_input):
    intervals = [(start, end) for start, end in case_input]
    result = _exact_sequence(solution.merge_intervals(intervals), "the result")
    merged = []
    for item in result:
        pair = _exact_sequence(item, "each interval")
        if len(pair) != 2:
            raise TypeError(f"each interval must have 2 ends, got {len(pair)}")
        merged.append([_exact_int(pair[0], "an interval start"), _exact_int(pair[1], "an interval end")])
    return merged
