"""LARS programs as Laser writes them: tokens, a parse tree with source positions, the parser.

    % comment lines start with % (whole lines only: # occurs in quoted IRIs)
    q(X,Y,Z) :- time_win(3, 0, 1, diamond(a(X,Y))) and tuple_win(3, diamond(b(Y,Z)))
    @(T, high) :- time_win(60, 0, 1, @(T, temp(V))) and COMP(>=, V, 90)
    freeze :- not(alarm) and not(normal)

One rule per line, ``head :- literal and literal ...``. A name starting with an upper-case
letter is a variable, any other name, number or single-quoted text a constant (see
:mod:`chronolog.atomstreams` for constants). The parser accepts any nesting of ``not``,
``diamond``, ``box``, ``@`` and the windows; :mod:`.check` says which nestings are LARS.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from chronolog.atomstreams import KEYWORDS, Value, constant
from chronolog.errors import ChronologSyntaxError, SourceMap


@dataclass(frozen=True)
class Var:
    name: str
    pos: int


@dataclass(frozen=True)
class Const:
    value: Value
    pos: int


Term = Union[Var, Const]


@dataclass(frozen=True)
class Atom:
    pred: str
    args: tuple[Term, ...]
    pos: int


@dataclass(frozen=True)
class Not:
    inner: "Formula"
    pos: int


@dataclass(frozen=True)
class Diamond:
    inner: "Formula"
    pos: int


@dataclass(frozen=True)
class Box:
    inner: "Formula"
    pos: int


@dataclass(frozen=True)
class At:
    time: Term
    inner: "Formula"
    pos: int


@dataclass(frozen=True)
class TimeWin:
    """``time_win(n, 0, u, F)``: the time points [t - n*u, t]."""

    size: int
    unit: int
    inner: "Formula"
    pos: int


@dataclass(frozen=True)
class TupleWin:
    """``tuple_win(n, F)``: the last n data atoms."""

    size: int
    inner: "Formula"
    pos: int


Formula = Union[Atom, Not, Diamond, Box, At, TimeWin, TupleWin]


@dataclass(frozen=True)
class Math:
    """``MATH(op, R, A, B)``: R = A op B."""

    op: str
    result: Term
    left: Term
    right: Term
    pos: int


@dataclass(frozen=True)
class Comp:
    """``COMP(op, A, B)``: A op B."""

    op: str
    left: Term
    right: Term
    pos: int


Literal = Union[Formula, Math, Comp]


@dataclass(frozen=True)
class Rule:
    head: Formula
    body: tuple[Literal, ...]
    pos: int
    text: str  # the rule's line, for messages


@dataclass(frozen=True)
class LarsProgram:
    rules: tuple[Rule, ...]
    source: str
    filename: str | None

    def error(self, message: str, pos: int) -> ChronologSyntaxError:
        """A positioned error in this program's text."""
        return SourceMap(self.source, self.filename).error(message, pos)


@dataclass(frozen=True)
class Token:
    kind: str  # name, quoted, number, op, punct, end
    text: str
    pos: int


_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r]+)
  | (?P<quoted>'(?:[^'\\\n]|\\.)*')
  | (?P<number>-?[0-9]+(?:\.[0-9]+)?(?![A-Za-z_]))
  | (?P<punct>:-|[(),@])
  | (?P<op>!=|<=|>=|[<>=+*/-])
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    """,
    re.VERBOSE,
)
COMP_OPS = ("<", "<=", ">", ">=", "=", "!=")
MATH_OPS = ("+", "-", "*", "/")


def tokenize(line: str, start: int, program: LarsProgram) -> list[Token]:
    """The tokens of one rule line (``start``: its offset in the program)."""
    tokens: list[Token] = []
    pos = 0
    while pos < len(line):
        match = _TOKEN.match(line, pos)
        if match is None:
            if line[pos] == "'":
                raise program.error("unterminated quoted name", start + pos)
            raise program.error(f"unexpected character {line[pos]!r}", start + pos)
        kind = match.lastgroup or ""
        if kind != "ws":
            tokens.append(Token(kind, match.group(), start + pos))
        pos = match.end()
    tokens.append(Token("end", "", start + len(line)))
    return tokens


class _Parser:
    def __init__(self, tokens: list[Token], program: LarsProgram) -> None:
        self.tokens = tokens
        self.i = 0
        self.program = program

    @property
    def peek(self) -> Token:
        return self.tokens[self.i]

    def next(self) -> Token:
        token = self.tokens[self.i]
        if token.kind != "end":
            self.i += 1
        return token

    def fail(self, message: str, token: Token | None = None) -> ChronologSyntaxError:
        token = token or self.peek
        found = "the end of the line" if token.kind == "end" else repr(token.text)
        return self.program.error(f"{message}, found {found}", token.pos)

    def expect(self, text: str) -> Token:
        if self.peek.text != text or self.peek.kind in ("quoted", "end"):
            raise self.fail(f"expected {text!r}")
        return self.next()

    def rule(self, text: str) -> Rule:
        start = self.peek.pos
        head = self.formula()
        self.expect(":-")
        body = [self.literal()]
        while self.peek.kind == "name" and self.peek.text in ("and", "or"):
            if self.peek.text == "or":
                raise self.program.error(
                    "'or' is not supported (Laser reads it as 'and'): write 'and', or one rule per alternative",
                    self.peek.pos)
            self.next()
            body.append(self.literal())
        if self.peek.kind != "end":
            raise self.fail("expected 'and' or the end of the rule")
        return Rule(head, tuple(body), start, text)

    def literal(self) -> Literal:
        token = self.peek
        if token.kind == "name" and token.text in ("MATH", "COMP") and self.tokens[self.i + 1].text == "(":
            self.next()
            self.expect("(")
            op = self.next()
            ops = MATH_OPS if token.text == "MATH" else COMP_OPS
            if op.kind not in ("op", "name") or op.text not in ops:
                raise self.fail(f"expected one of {' '.join(ops)} as the operator of {token.text}", op)
            terms = []
            for _ in range(3 if token.text == "MATH" else 2):
                self.expect(",")
                terms.append(self.term())
            self.expect(")")
            if token.text == "MATH":
                return Math(op.text, terms[0], terms[1], terms[2], token.pos)
            return Comp(op.text, terms[0], terms[1], token.pos)
        return self.formula()

    def formula(self) -> Formula:
        token = self.peek
        if token.text == "(" and token.kind == "punct":
            self.next()
            inner = self.formula()
            self.expect(")")
            return inner
        if token.text == "@" and token.kind == "punct":
            self.next()
            self.expect("(")
            time = self.term()
            self.expect(",")
            inner = self.formula()
            self.expect(")")
            return At(time, inner, token.pos)
        if token.kind == "name" and token.text in ("not", "diamond", "box") and self.tokens[self.i + 1].text == "(":
            self.next()
            self.expect("(")
            inner = self.formula()
            self.expect(")")
            return {"not": Not, "diamond": Diamond, "box": Box}[token.text](inner, token.pos)
        if token.kind == "name" and token.text in ("time_win", "tuple_win") and self.tokens[self.i + 1].text == "(":
            return self.window()
        if token.kind == "name" and token.text == "predicate_win":
            raise self.program.error("predicate_win is not supported (it is not in the LARS fragment Laser evaluates)",
                                     token.pos)
        return self.atom()

    def window(self) -> Formula:
        token = self.next()
        self.expect("(")
        numbers = [self.integer()]
        while True:
            self.expect(",")
            if self.peek.kind != "number":
                break
            numbers.append(self.integer())
        inner = self.formula()
        self.expect(")")
        sizes = [n for n, _ in numbers]
        if token.text == "time_win":
            if len(numbers) != 3:
                raise self.program.error("time_win takes (n, 0, unit, formula)", token.pos)
            if sizes[1] != 0:
                raise self.program.error("the second argument of time_win must be 0", numbers[1][1])
            if sizes[2] < 1:
                raise self.program.error("the time unit of time_win must be at least 1", numbers[2][1])
            if sizes[0] < 0:
                raise self.program.error("the size of a time window must be 0 or more", numbers[0][1])
            return TimeWin(sizes[0], sizes[2], inner, token.pos)
        if len(numbers) not in (1, 3) or (len(numbers) == 3 and sizes[1:] != [0, 1]):
            raise self.program.error("tuple_win takes (n, formula) or (n, 0, 1, formula)", token.pos)
        if sizes[0] < 1:
            raise self.program.error("the size of a tuple window must be 1 or more", numbers[0][1])
        return TupleWin(sizes[0], inner, token.pos)

    def integer(self) -> tuple[int, int]:
        token = self.next()
        if token.kind != "number" or "." in token.text:
            raise self.fail("expected an integer", token)
        return int(token.text), token.pos

    def atom(self) -> Atom:
        token = self.next()
        if token.kind == "quoted":
            pred = _unquote(token.text)
        elif token.kind in ("name", "number") and token.text not in KEYWORDS:
            if token.text[0].isupper() and self.peek.text != "(":
                raise self.program.error(f"expected an atom, found the variable {token.text}", token.pos)
            pred = token.text
        else:
            raise self.fail("expected an atom", token)
        args: list[Term] = []
        if self.peek.text == "(" and self.peek.kind == "punct":
            self.next()
            args.append(self.term())
            while self.peek.text == ",":
                self.next()
                args.append(self.term())
            self.expect(")")
        return Atom(pred, tuple(args), token.pos)

    def term(self) -> Term:
        token = self.next()
        if token.kind == "quoted":
            return Const(constant(_unquote(token.text)), token.pos)
        if token.kind == "number":
            return Const(constant(token.text), token.pos)
        if token.kind == "name" and token.text not in KEYWORDS:
            if token.text[0].isupper() or token.text[0] == "_":
                return Var(token.text, token.pos)
            return Const(constant(token.text), token.pos)
        raise self.fail("expected a variable or a constant", token)


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def parse(source: str, filename: str | None = None) -> LarsProgram:
    """The parse tree of a LARS program; a positioned ChronologSyntaxError otherwise.

    >>> window = parse("q(X) :- time_win(3, 0, 1, diamond(a(X)))").rules[0].body[0]
    >>> window.size, type(window.inner).__name__, window.inner.inner.pred
    (3, 'Diamond', 'a')
    """
    program = LarsProgram((), source, filename)
    rules: list[Rule] = []
    start = 0
    for line in source.split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith("%"):
            tokens = tokenize(line, start, program)
            rules.append(_Parser(tokens, program).rule(stripped))
        start += len(line) + 1
    return LarsProgram(tuple(rules), source, filename)
