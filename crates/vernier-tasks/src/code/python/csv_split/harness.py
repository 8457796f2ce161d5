

def run_case(solution, case_input):
    line = _exact_str(case_input, "the case input")
    result = _exact_sequence(solution.split_csv_line(line), "the result")
    return [_exact_str(field, "each field") for field in result]
