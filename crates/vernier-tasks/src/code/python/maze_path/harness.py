

def run_case(solution, case_input):
    maze = [_exact_str(row, "each row") for row in case_input]
    return _exact_int(solution.shortest_path(maze), "the result")
