# Test-only stand-in for the sandbox runner: runs a submission's cases with the
# task's harness on this machine's python3. Used by the crate's unit tests to prove
# references pass and controls fail without Docker; the sandbox proof is the
# self-check. The guard check and the comparison are the grader's own, on the Rust
# side. Usage: python3 local_runner.py WORK_DIR
import importlib.util
import json
import sys

work = sys.argv[1]
with open(f"{work}/inputs.json") as handle:
    inputs = json.load(handle)


def load(name):
    spec = importlib.util.spec_from_file_location(name, f"{work}/{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


harness = load("harness")
solution = load("solution")
results = []
for case_input in inputs:
    try:
        results.append({"value": harness.run_case(solution, case_input)})
    except Exception as error:  # the case's verdict, whatever it is
        results.append({"raised": type(error).__name__, "mro": [c.__name__ for c in type(error).__mro__]})
with open(f"{work}/results.json", "w") as handle:
    json.dump({"results": results}, handle)
