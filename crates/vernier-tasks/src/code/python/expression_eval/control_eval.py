def evaluate(expression):
    if not expression.strip():
        raise ValueError("empty expression")
    try:
        return float(eval(expression, {"__builtins__": {}}, {}))
    except SyntaxError as error:
        raise ValueError(str(error)) from error
