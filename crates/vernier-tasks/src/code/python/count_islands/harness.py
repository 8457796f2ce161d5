

def run_case(solution, case_input):
    grid = [list(row) for row in case_input]
    return _exact_int(solution.count_islands(grid), "the result")
