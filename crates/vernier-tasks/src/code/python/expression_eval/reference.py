def _tokens(expression):
    tokens = []
    i = 0
    while i < len(expression):
        char = expression[i]
        if char in " \t":
            i += 1
        elif char in "+-*/()":
            tokens.append(char)
            i += 1
        elif "0" <= char <= "9":
            start = i
            while i < len(expression) and "0" <= expression[i] <= "9":
                i += 1
            if i < len(expression) and expression[i] == ".":
                i += 1
                digits = i
                while i < len(expression) and "0" <= expression[i] <= "9":
                    i += 1
                if i == digits:
                    raise ValueError(f"a number needs digits after its point at {start}")
            tokens.append(float(expression[start:i]))
        else:
            raise ValueError(f"unexpected character {char!r} at {i}")
    return tokens


class _Parser:
    def __init__(self, tokens):
        self.tokens = tokens
        self.position = 0

    def peek(self):
        if self.position < len(self.tokens):
            return self.tokens[self.position]
        return None

    def take(self):
        token = self.peek()
        if token is None:
            raise ValueError("the expression ends too early")
        self.position += 1
        return token

    def expression(self):
        value = self.term()
        while self.peek() in ("+", "-"):
            if self.take() == "+":
                value = ("+", value, self.term())
            else:
                value = ("-", value, self.term())
        return value

    def term(self):
        value = self.unary()
        while self.peek() in ("*", "/"):
            if self.take() == "*":
                value = ("*", value, self.unary())
            else:
                value = ("/", value, self.unary())
        return value

    def unary(self):
        if self.peek() == "-":
            self.take()
            return ("neg", self.unary())
        return self.primary()

    def primary(self):
        token = self.take()
        if token == "(":
            value = self.expression()
            if self.take() != ")":
                raise ValueError("a parenthesis is not closed")
            return value
        if isinstance(token, float):
            return token
        raise ValueError(f"unexpected {token!r}")


def _value(tree):
    if isinstance(tree, float):
        return tree
    if tree[0] == "neg":
        return -_value(tree[1])
    left = _value(tree[1])
    right = _value(tree[2])
    if tree[0] == "+":
        return left + right
    if tree[0] == "-":
        return left - right
    if tree[0] == "*":
        return left * right
    if right == 0:
        raise ZeroDivisionError("division by zero")
    return left / right


def evaluate(expression):
    parser = _Parser(_tokens(expression))
    tree = parser.expression()
    if parser.peek() is not None:
        raise ValueError(f"unexpected {parser.peek()!r} after the expression")
    return _value(tree)
