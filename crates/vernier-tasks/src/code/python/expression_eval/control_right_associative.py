import re

_TOKEN = r"\s*(?:(\d+(?:\.\d+)?)|(.))"


def _tokens(expression):
    tokens = []
    for number, other in re.findall(_TOKEN, expression):
        if number:
            tokens.append(float(number))
        elif other.strip():
            if other not in "+-*/()":
                raise ValueError(f"unexpected {other!r}")
            tokens.append(other)
    return tokens


def evaluate(expression):
    tokens = _tokens(expression)
    position = 0

    def peek():
        return tokens[position] if position < len(tokens) else None

    def take():
        nonlocal position
        if position >= len(tokens):
            raise ValueError("the expression ends too early")
        position += 1
        return tokens[position - 1]

    # The defect: binary operators recurse on the right, so 8/4/2 is 8/(4/2).
    def expression_():
        left = term()
        if peek() in ("+", "-"):
            operator = take()
            right = expression_()
            return left + right if operator == "+" else left - right
        return left

    def term():
        left = unary()
        if peek() in ("*", "/"):
            operator = take()
            right = term()
            if operator == "*":
                return left * right
            if right == 0:
                raise ZeroDivisionError("division by zero")
            return left / right
        return left

    def unary():
        if peek() == "-":
            take()
            return -unary()
        token = take()
        if token == "(":
            value = expression_()
            if take() != ")":
                raise ValueError("a parenthesis is not closed")
            return value
        if isinstance(token, float):
            return token
        raise ValueError(f"unexpected {token!r}")

    value = expression_()
    if peek() is not None:
        raise ValueError("trailing input")
    return value
