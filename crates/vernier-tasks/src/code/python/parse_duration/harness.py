

def run_case(solution, case_input):
    text = _exact_str(case_input, "the case input")
    return _exact_int(solution.parse_duration(text), "the result")
