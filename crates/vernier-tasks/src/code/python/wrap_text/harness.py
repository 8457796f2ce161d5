

def run_case(solution, case_input):
    text = _exact_str(case_input["text"], "the text")
    result = _exact_sequence(solution.wrap_text(text, case_input["width"]), "the result")
    return [_exact_str(line, "each line") for line in result]
