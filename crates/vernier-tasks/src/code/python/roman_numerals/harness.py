

def _call(solution, function, argument):
    if function == "to_roman":
        return _exact_str(solution.to_roman(argument), "to_roman()")
    if function == "from_roman":
        return _exact_int(solution.from_roman(argument), "from_roman()")
    # round_trip: from_roman(to_roman(n)), both results checked for type.
    numeral = _exact_str(solution.to_roman(argument), "to_roman()")
    return _exact_int(solution.from_roman(numeral), "from_roman()")


def run_case(solution, case_input):
    function = case_input["function"]
    if "arguments" in case_input:
        return [_call(solution, function, argument) for argument in case_input["arguments"]]
    return _call(solution, function, case_input["argument"])
