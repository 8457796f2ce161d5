"""Vernier grader runner: runs one submission against its cases inside the sandbox.

Uploaded by the grader next to the submission; the image holds no grading code.
Protocol (parsed by crates/vernier-grader/src/protocol.rs):

* /work/inputs.json holds the case inputs only (a JSON list); expected values
  never enter the container.
* The first line of standard input is a random nonce, read first; standard
  input is then replaced by /dev/null.
* This process (the runner) imports the harness, never the submission, and
  makes itself non-dumpable, so no other process of the sandbox user can read
  its memory, trace it or open its descriptors through /proc.
* For each case it creates pipes and forks a case process, which takes the
  pipes as its standard output and result descriptor (it keeps no descriptor
  of the container's standard output), imports the submission, calls
  run_case for that one case and sends one length-prefixed JSON message back.
  The runner copies the case process's standard output to its own with every
  0x1E byte replaced by U+241E, so no copied line can begin a record.
* The runner alone writes records on standard output, one per case, in
  order, tagged with the index it assigned:
  "\\n\\x1evernier-result <nonce> <index> <json>\\n", with <index> a case index or
  "setup", and <json> an ASCII-only JSON object.
* A case process that dies before sending fails its case only, with the
  reason ("exited with status 0 before returning", "killed by signal 9
  (SIGKILL)"); one killed by the kernel's OOM killer ends the run.
* After the last record the runner ends with os._exit(0).
"""

import os
import sys

RECORD_PREFIX = "\x1evernier-result"
MAX_RECORD_JSON = int(os.environ.get("VERNIER_MAX_RECORD", "1048576"))
MEMORY_BYTES = int(os.environ.get("VERNIER_MEMORY_BYTES", "0"))
MAX_MESSAGE = 500
CHUNK = 65536
# How often the runner looks for a case process that died while a process it
# left behind still holds its pipes open (only then is EOF never seen).
POLL_MS = 50
OOM_CONTROL = "/sys/fs/cgroup/memory/memory.oom_control"  # cgroup v1
MEMORY_EVENTS = "/sys/fs/cgroup/memory.events"  # cgroup v2


def _read_nonce():
    line = sys.stdin.buffer.readline(256)
    nonce = line.strip().decode("ascii", "replace")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return nonce


def _make_non_dumpable():
    """PR_SET_DUMPABLE 0: /proc/<pid>/mem, /fd, ptrace and process_vm_* are refused
    to processes without CAP_SYS_PTRACE, which the sandbox drops."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0 or libc.prctl(3, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def _oom_kills():
    """The memory cgroup's count of OOM kills, or None where it cannot be read."""
    for path in (OOM_CONTROL, MEMORY_EVENTS):
        try:
            with open(path, "rb") as handle:
                for line in handle.read().split(b"\n"):
                    fields = line.split()
                    if len(fields) == 2 and fields[0] == b"oom_kill":
                        return int(fields[1])
        except (OSError, ValueError):
            continue
    return None


def main():
    nonce = _read_nonce()
    import importlib.util
    import json
    import signal

    dumps = json.dumps
    write = os.write

    def emit(index, payload):
        try:
            body = dumps(payload, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as error:
            body = dumps({"unserialisable": _describe(error)}, ensure_ascii=True)
        if len(body) > MAX_RECORD_JSON:
            body = dumps({"too_large": len(body)})
        data = ("\n%s %s %s %s\n" % (RECORD_PREFIX, nonce, index, body)).encode("ascii")
        _write_all(write, 1, data)

    def load(name, path):
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    try:
        _make_non_dumpable()
    except BaseException as error:  # noqa: BLE001 - no ctypes, no prctl: refuse to run
        emit("setup", {"stage": "isolation", "raised": _names(error), "message": _message(error)})
        os._exit(2)

    try:
        with open("/work/inputs.json", "rb") as handle:
            inputs = json.load(handle)
    except BaseException as error:  # noqa: BLE001
        emit("setup", {"stage": "inputs", "raised": _names(error), "message": _message(error)})
        os._exit(2)

    try:
        harness = load("harness", "/work/harness.py")
        run_case = harness.run_case
    except BaseException as error:  # noqa: BLE001
        emit("setup", {"stage": "harness", "raised": _names(error), "message": _message(error)})
        os._exit(2)

    # A case process could signal the runner (PID 1 ignores only signals it has no
    # handler for); Python's SIGINT handler is the one it has.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    context = {"run_case": run_case, "load": load, "dumps": dumps, "signal": signal}

    stopped = None
    for index, case_input in enumerate(inputs):
        if stopped is not None:
            emit(index, {"not_run": stopped})
            continue
        _flush_std()
        try:
            outcome = _run_one(case_input, context)
        except OSError as error:
            # Fork or pipe refused, e.g. by the pids limit while processes left by
            # an earlier case remain: the case could not run.
            outcome = {"died": "could not start the case: " + _describe(error)}
        if "import_failed" in outcome:
            emit("setup", dict(outcome["import_failed"], stage="solution"))
            break
        emit(index, outcome)
        if outcome.get("out_of_memory"):
            stopped = "an earlier case ran out of memory"

    _flush_std()
    os._exit(0)


def _run_one(case_input, context):
    """Forks the case process, relays its output, and returns its outcome as a record."""
    result_r, result_w = os.pipe()
    out_r, out_w = os.pipe()
    oom_before = _oom_kills()
    try:
        pid = os.fork()
    except BaseException:
        for fd in (result_r, result_w, out_r, out_w):
            os.close(fd)
        raise
    if pid == 0:
        _case_process(case_input, context, result_w, out_w, (result_r, out_r))
    os.close(result_w)
    os.close(out_w)
    os.set_blocking(result_r, False)
    os.set_blocking(out_r, False)
    try:
        received, status, rusage = _supervise(pid, result_r, out_r)
    finally:
        os.close(result_r)
        os.close(out_r)
    if received is not None:
        return _checked(received, context["dumps"])
    return _death(status, rusage, oom_before)


def _supervise(pid, result_r, out_r):
    """Relays output and reads the result until the case process is done.

    Returns (message bytes or None, wait status, rusage)."""
    import select

    poller = select.poll()
    poller.register(result_r, select.POLLIN)
    poller.register(out_r, select.POLLIN)
    reader = _MessageReader(result_r)
    while True:
        for fd, _ in poller.poll(POLL_MS):
            if fd == out_r:
                if not _relay(out_r):
                    poller.unregister(out_r)
            elif not reader.read():
                poller.unregister(result_r)
            if reader.message is not None:
                # The result is in: whatever the process still does cannot change it.
                status = _kill(pid)
                _relay(out_r)
                return (reader.message, *status)
        status = _reaped(pid)
        if status is not None:
            # Dead: what it sent before dying is still in the pipes.
            reader.read()
            _relay(out_r)
            return (reader.message, *status)


class _MessageReader:
    """Reads "<length>\\n<JSON>" from a case process, bounded."""

    def __init__(self, fd):
        self.fd = fd
        self.buffer = bytearray()
        self.length = None
        self.message = None

    def read(self):
        """Reads what is there; False at EOF."""
        while self.message is None:
            try:
                data = os.read(self.fd, CHUNK)
            except BlockingIOError:
                return True
            if not data:
                return False
            self.buffer += data
            if self.length is None and b"\n" in self.buffer:
                header, _, rest = bytes(self.buffer).partition(b"\n")
                self.buffer = bytearray(rest)
                if not (header.isdigit() and len(header) < 20):
                    self.message = b'{"malformed":true}'
                    return True
                self.length = int(header)
                if self.length > MAX_RECORD_JSON + 64:
                    self.message = b'{"too_large":%d}' % self.length
                    return True
            elif self.length is None and len(self.buffer) > 32:
                self.message = b'{"malformed":true}'
                return True
            if self.length is not None and len(self.buffer) >= self.length:
                self.message = bytes(self.buffer[: self.length])
        return True


def _reaped(pid):
    """Reaps orphans left to this process (PID 1) and reports pid's (status, rusage)."""
    found = None
    while True:
        try:
            child, status, rusage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return found
        if child == 0:
            return found
        if child == pid:
            found = (status, rusage)


def _kill(pid):
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    _, status, rusage = os.wait4(pid, 0)
    return status, rusage


def _relay(out_r):
    """Copies what the case process printed to stdout, with 0x1E bytes neutralised.
    Returns False at EOF."""
    while True:
        try:
            data = os.read(out_r, CHUNK)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not data:
            return False
        _write_all(os.write, 1, data.replace(b"\x1e", "\u241e".encode()))


def _checked(received, dumps):
    """Turns a case process's message into a record, trusting nothing in it."""
    import json

    def refuse(_constant):
        raise ValueError("not JSON")

    try:
        message = json.loads(received.decode("utf-8"), parse_constant=refuse)
    except (ValueError, RecursionError):
        return {"died": "sent a malformed result"}
    if not isinstance(message, dict) or len(message) == 0:
        return {"died": "sent a malformed result"}
    if "value" in message and len(message) == 1:
        return message
    if "import_failed" in message and len(message) == 1:
        failure = message["import_failed"]
        if isinstance(failure, dict):
            return {"import_failed": {
                "raised": _strings(failure.get("raised")) or ["BaseException"],
                "message": str(failure.get("message", ""))[:MAX_MESSAGE],
            }}
    if "raised" in message:
        return {
            "raised": _strings(message.get("raised")) or ["BaseException"],
            "message": str(message.get("message", ""))[:MAX_MESSAGE],
        }
    if "unserialisable" in message:
        return {"unserialisable": str(message["unserialisable"])[:MAX_MESSAGE]}
    if isinstance(message.get("too_large"), int):
        return {"too_large": message["too_large"]}
    return {"died": "sent a malformed result"}


def _strings(value):
    if not isinstance(value, list):
        return None
    return [str(item)[:200] for item in value[:64] if isinstance(item, str)]


def _death(status, rusage, oom_before):
    """The record of a case process that ended without sending its result."""
    if os.WIFEXITED(status):
        return {"died": "exited with status %d before returning" % os.WEXITSTATUS(status)}
    if not os.WIFSIGNALED(status):
        return {"died": "stopped before returning (wait status %d)" % status}
    number = os.WTERMSIG(status)
    try:
        import signal

        name = " (%s)" % signal.Signals(number).name
    except ValueError:
        name = ""
    record = {"died": "killed by signal %d%s" % (number, name)}
    if number == 9:
        oom_after = _oom_kills()
        if oom_before is not None and oom_after is not None:
            out_of_memory = oom_after > oom_before
        else:
            # No OOM counter: a SIGKILL near the memory cap is the OOM killer's.
            out_of_memory = MEMORY_BYTES > 0 and rusage.ru_maxrss * 1024 >= MEMORY_BYTES * 0.75
        if out_of_memory:
            record = {"died": "killed by signal 9 (SIGKILL): out of memory", "out_of_memory": True}
    return record


def _case_process(case_input, context, result_w, out_w, parent_fds):
    """Runs in the forked case process; never returns."""
    exit_now = os._exit
    try:
        write = os.write
        dumps = context["dumps"]
        signal = context["signal"]
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.dup2(out_w, 1)
        # Keep stdin (/dev/null), the new stdout, stderr and the result pipe only.
        keep = {0, 1, 2, result_w}
        for fd in parent_fds:
            os.close(fd)
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            if fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass

        def send(payload):
            _flush_std()
            try:
                body = dumps(payload, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
            except BaseException as error:  # noqa: BLE001 - any failure is the result
                body = dumps({"unserialisable": _describe(error)}, ensure_ascii=True)
            if len(body) > MAX_RECORD_JSON:
                body = dumps({"too_large": len(body)})
            data = b"%d\n" % len(body) + body.encode("ascii")
            _write_all(write, result_w, data)
            exit_now(0)

        try:
            solution = context["load"]("solution", "/work/solution.py")
        except BaseException as error:  # noqa: BLE001 - SystemExit included
            send({"import_failed": {"raised": _names(error), "message": _message(error)}})
        try:
            result = context["run_case"](solution, case_input)
        except BaseException as error:  # noqa: BLE001 - SystemExit, KeyboardInterrupt too
            send({"raised": _names(error), "message": _message(error)})
        send({"value": result})
    finally:
        exit_now(0)


def _write_all(write, fd, data):
    view = memoryview(data)
    while view:
        written = write(fd, view)
        view = view[written:]


def _flush_std():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass


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
