"""Vernier grader runner: runs one submission against its cases inside the sandbox.

Uploaded by the grader next to the submission; the image holds no grading code.
Protocol (parsed by crates/vernier-grader/src/protocol.rs):

* /work/inputs.json holds the case inputs only (a JSON list); expected values
  never enter the container.
* The first line of standard input is a random nonce. It is read before any
  untrusted code runs, and standard input is then replaced by /dev/null.
* Standard output is duplicated to a private descriptor before the submission
  is imported. Each result is one line on it:
  "\\n\\x1evernier-result <nonce> <index> <json>\\n", with <index> a case index or
  "setup", and <json> an ASCII-only JSON object. Lines without the nonce are
  plain output, however they look.
* Exactly one record per case is written, in order; after the last one the
  process ends with os._exit(0), so threads, atexit hooks and child processes
  left by the submission change nothing.
"""

import os
import sys

RECORD_PREFIX = "\x1evernier-result"
MAX_RECORD_JSON = int(os.environ.get("VERNIER_MAX_RECORD", "1048576"))
MAX_MESSAGE = 500


def _read_nonce():
    line = sys.stdin.buffer.readline(256)
    nonce = line.strip().decode("ascii", "replace")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return nonce


def main():
    nonce = _read_nonce()
    channel = os.dup(1)  # private and not inherited by child processes
    main_pid = os.getpid()

    import importlib.util
    import json

    dumps = json.dumps
    write = os.write
    getpid = os.getpid
    exit_now = os._exit

    def emit(index, payload):
        if getpid() != main_pid:
            # A forked child that returned into this loop: it has no say.
            exit_now(0)
        try:
            body = dumps(payload, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
        except BaseException as error:  # noqa: BLE001 - any failure is the result
            body = dumps({"unserialisable": _describe(error)}, ensure_ascii=True)
        if len(body) > MAX_RECORD_JSON:
            body = dumps({"too_large": len(body)})
        data = ("\n%s %s %s %s\n" % (RECORD_PREFIX, nonce, index, body)).encode("ascii")
        while data:
            written = write(channel, data)
            data = data[written:]

    def flush_std():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001
                pass

    try:
        with open("/work/inputs.json", "rb") as handle:
            inputs = json.load(handle)
    except BaseException as error:  # noqa: BLE001
        emit("setup", {"stage": "inputs", "raised": _names(error), "message": _message(error)})
        exit_now(2)

    def load(name, path):
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    try:
        harness = load("harness", "/work/harness.py")
        run_case = harness.run_case
    except BaseException as error:  # noqa: BLE001
        emit("setup", {"stage": "harness", "raised": _names(error), "message": _message(error)})
        exit_now(2)

    try:
        solution = load("solution", "/work/solution.py")
    except BaseException as error:  # noqa: BLE001 - SystemExit included
        flush_std()
        emit("setup", {"stage": "solution", "raised": _names(error), "message": _message(error)})
        exit_now(0)

    for index, case_input in enumerate(inputs):
        try:
            result = run_case(solution, case_input)
        except BaseException as error:  # noqa: BLE001 - SystemExit, KeyboardInterrupt too
            flush_std()
            emit(index, {"raised": _names(error), "message": _message(error)})
            continue
        flush_std()
        emit(index, {"value": result})

    flush_std()
    exit_now(0)


def _names(error):
    """The class names of an exception's MRO, most specific first."""
    try:
        return [str(cls.__name__) for cls in type(error).__mro__]
    except BaseException:  # noqa: BLE001
        return ["BaseException"]


def _message(error):
    try:
        text = str(error)
    except BaseException:  # noqa: BLE001
        text = "<unprintable>"
    if not isinstance(text, str):
        text = "<unprintable>"
    return text[:MAX_MESSAGE]


def _describe(error):
    return "%s: %s" % (_names(error)[0], _message(error))


if __name__ == "__main__":
    main()
