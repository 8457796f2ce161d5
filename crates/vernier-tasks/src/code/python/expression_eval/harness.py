

def run_case(solution, case_input):
    expression = _exact_str(case_input, "the case input")
    return _exact_number(solution.evaluate(expression), "the result")
