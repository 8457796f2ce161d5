def run_case(solution, case_input):
    return solution.reverse_words(case_input["text"])
