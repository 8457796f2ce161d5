# Shared helpers of the hidden harnesses. They turn what a submission returns
# into plain JSON values and refuse anything else: exact built-in types only
# (no subclasses, no bool where a number is due), so an object with a
# permissive __eq__ or a str subclass cannot pose as a right answer. The
# harness never compares anything: expected values stay outside the sandbox.


def _exact_int(value, what):
    if type(value) is not int:
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    return value


def _exact_number(value, what):
    if type(value) is not int and type(value) is not float:
        raise TypeError(f"{what} must be a float or int, got {type(value).__name__}")
    return value


def _exact_str(value, what):
    if type(value) is not str:
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    return value


def _exact_sequence(value, what):
    if type(value) is not list and type(value) is not tuple:
        raise TypeError(f"{what} must be a list, got {type(value).__name__}")
    return list(value)
