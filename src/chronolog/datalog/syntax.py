"""The Datalog rule language for RDF: tokens, parse tree with source positions, parser.

    PREFIX : <http://example.org/>
    :is_in_room(?A, ?B) :- :is_at_location(?A, ?C), :is_in_room(?C, ?B).
    [hot] :Hot(?s) :- :temp(?s, ?v), ?v > 45, not :Calibrating(?s).
    [cax-dw] false :- owl:disjointWith(?c1, ?c2), ?x a ... .

A binary atom ``:p(s, o)`` is the triple ``s :p o``; a unary atom ``:C(x)`` is
``x rdf:type :C``; ``triple(s, p, o)`` allows a variable predicate; an atom whose predicate
is a bare name (``reach(?x, ?y, ?z)``) is a local relation of any arity, never output.
Rules without a body are facts; ``false :- body`` is a constraint reported as a diagnostic.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from chronolog.errors import ChronologSyntaxError, SourceMap


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    pos: int


_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|[#%][^\n]*)
  | (?P<label>\[[^\]\n]*\])
  | (?P<at>@prefix\b|@base\b)
  | (?P<var>[?$][A-Za-z_][A-Za-z0-9_]*)
  | (?P<bnode>_:[A-Za-z0-9_][A-Za-z0-9_.-]*(?<!\.))
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<dtype>\^\^)
  | (?P<number>[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|[0-9]+)
  | (?P<op>:-|!=|<=|>=|[()<>=,.+*/-])
  | (?P<pname>(?:[A-Za-z][A-Za-z0-9_.-]*(?<!\.))?:(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    """,
    re.VERBOSE,
)
_IRIREF = re.compile(r"<([^<>\"{}|^`\\\x00-\x20]*)>")
_AFTER_OPERAND = {"var", "number", "string", "rparen"}


def tokenize(source: str, filename: str | None) -> list[Token]:
    """Split ``source`` into tokens; ``<`` opens an IRI unless it follows an operand."""
    tokens: list[Token] = []
    pos = 0
    prev = ""
    while pos < len(source):
        if source[pos] == "<" and prev not in _AFTER_OPERAND:
            m = _IRIREF.match(source, pos)
            if m:
                tokens.append(Token("iri", m.group(1), pos))
                prev = "iri"
                pos = m.end()
                continue
        m = _TOKEN.match(source, pos)
        if not m:
            raise ChronologSyntaxError.at(f"unexpected character {source[pos]!r}", source, pos, filename)
        kind = m.lastgroup or ""
        if kind != "ws":
            text = m.group()
            if kind == "op" and text == ")":
                kind = "rparen"
            tokens.append(Token(kind, text, pos))
            prev = kind
        pos = m.end()
    tokens.append(Token("eof", "", len(source)))
    return tokens


# Parse tree -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TermNode:
    """A term as written: kind is var, iri, pname, bnode, literal, number or boolean."""

    kind: str
    value: str
    pos: int
    datatype: "TermNode | None" = None
    lang: str | None = None


@dataclass(frozen=True)
class AtomNode:
    predicate: TermNode  # iri/pname, or kind "name" for triple and local relations
    args: tuple[TermNode, ...]
    negated: bool
    pos: int


@dataclass(frozen=True)
class BinaryNode:
    """Arithmetic ``+ - * /`` or comparison ``= != < <= > >=``; ``neg`` is unary minus."""

    op: str
    left: "ExprNode"
    right: "ExprNode | None"
    pos: int


ExprNode = Union[TermNode, BinaryNode]
LiteralNode = Union[AtomNode, BinaryNode]


@dataclass(frozen=True)
class RuleNode:
    label: str | None
    head: AtomNode | None  # None: a constraint (``false :- ...``)
    body: tuple[LiteralNode, ...]
    pos: int


@dataclass
class ProgramNode:
    rules: list[RuleNode]
    prefixes: dict[str, str]
    base: str | None
    source: str
    filename: str | None


_COMPARISONS = {"=", "!=", "<", "<=", ">", ">="}


class _Parser:
    def __init__(self, source: str, filename: str | None, prefixes: dict[str, str] | None) -> None:
        self.source = source
        self.filename = filename
        self.tokens = tokenize(source, filename)
        self.i = 0
        self.prefixes: dict[str, str] = dict(prefixes or {})
        self.base: str | None = None

    def error(self, message: str, tok: Token | None = None) -> ChronologSyntaxError:
        tok = tok or self.peek()
        return SourceMap(self.source, self.filename).error(message, tok.pos)

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def next(self) -> Token:
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, kind: str, text: str | None = None, what: str | None = None) -> Token:
        tok = self.peek()
        if tok.kind != kind or (text is not None and tok.text != text):
            wanted = what or (repr(text) if text else kind)
            found = repr(tok.text) if tok.text else "end of input"
            raise self.error(f"expected {wanted}, found {found}", tok)
        return self.next()

    def program(self) -> ProgramNode:
        rules: list[RuleNode] = []
        while self.peek().kind != "eof":
            tok = self.peek()
            if tok.kind == "name" and tok.text.upper() in ("PREFIX", "BASE"):
                self.directive(tok.text.upper(), dotted=False)
            elif tok.kind == "at":
                self.directive(tok.text[1:].upper(), dotted=True)
            else:
                rules.append(self.rule())
        return ProgramNode(rules, self.prefixes, self.base, self.source, self.filename)

    def directive(self, which: str, dotted: bool) -> None:
        self.next()
        if which == "PREFIX":
            ns = self.expect("pname", what="a prefix name like 'ex:'")
            if not ns.text.endswith(":") or ns.text.count(":") != 1:
                raise self.error("expected a prefix name ending in ':'", ns)
            iri = self.expect("iri", what="an IRI in <...>")
            self.prefixes[ns.text[:-1]] = self.resolve(iri.text)
        else:
            iri = self.expect("iri", what="an IRI in <...>")
            self.base = self.resolve(iri.text)
        if dotted:
            self.expect("op", ".")

    def resolve(self, iri: str) -> str:
        if self.base and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", iri):
            from urllib.parse import urljoin

            return urljoin(self.base, iri)
        return iri

    def rule(self) -> RuleNode:
        start = self.peek()
        label = None
        if start.kind == "label":
            label = self.next().text[1:-1].strip()
        head_tok = self.peek()
        head: AtomNode | None
        if head_tok.kind == "name" and head_tok.text == "false" and self.peek(1).text != "(":
            self.next()
            head = None
        else:
            head = self.atom(negated=False)
        body: list[LiteralNode] = []
        if self.peek().text == ":-" and self.peek().kind == "op":
            self.next()
            body.append(self.literal())
            while self.peek().kind == "op" and self.peek().text == ",":
                self.next()
                body.append(self.literal())
        elif head is None:
            raise self.error("a constraint 'false' needs a body ':- ...'")
        self.expect("op", ".", what="'.' at the end of the rule")
        return RuleNode(label, head, tuple(body), start.pos)

    def literal(self) -> LiteralNode:
        tok = self.peek()
        if tok.kind == "name" and tok.text == "not":
            self.next()
            return self.atom(negated=True)
        if tok.kind in ("iri", "pname", "name") and self.peek(1).text == "(" and self.peek(1).kind == "op":
            return self.atom(negated=False)
        left = self.expr()
        op = self.peek()
        if op.kind != "op" or op.text not in _COMPARISONS:
            raise self.error("expected an atom, 'not atom', or a comparison such as '?x > 3'", tok)
        self.next()
        return BinaryNode(op.text, left, self.expr(), op.pos)

    def atom(self, negated: bool) -> AtomNode:
        tok = self.peek()
        if tok.kind not in ("iri", "pname", "name"):
            raise self.error("expected an atom such as ':p(?x, ?y)'", tok)
        pred = self.term()
        self.expect("op", "(", what="'(' after the predicate")
        args = [self.term()]
        while self.peek().kind == "op" and self.peek().text == ",":
            self.next()
            args.append(self.term())
        self.expect("rparen", what="')' or ','")
        return AtomNode(pred, tuple(args), negated, tok.pos)

    def expr(self) -> ExprNode:
        node = self.product()
        while self.peek().kind == "op" and self.peek().text in ("+", "-"):
            op = self.next()
            node = BinaryNode(op.text, node, self.product(), op.pos)
        return node

    def product(self) -> ExprNode:
        node = self.unary()
        while self.peek().kind == "op" and self.peek().text in ("*", "/"):
            op = self.next()
            node = BinaryNode(op.text, node, self.unary(), op.pos)
        return node

    def unary(self) -> ExprNode:
        tok = self.peek()
        if tok.kind == "op" and tok.text == "-":
            self.next()
            return BinaryNode("neg", self.unary(), None, tok.pos)
        if tok.kind == "op" and tok.text == "(":
            self.next()
            inner = self.expr()
            self.expect("rparen", what="')'")
            return inner
        return self.term()

    def term(self) -> TermNode:
        tok = self.next()
        if tok.kind == "var":
            return TermNode("var", tok.text[1:], tok.pos)
        if tok.kind == "iri":
            return TermNode("iri", self.resolve(tok.text), tok.pos)
        if tok.kind == "pname":
            prefix, _, local = tok.text.partition(":")
            if prefix not in self.prefixes:
                raise self.error(f"unknown prefix '{prefix}:' (declare it with PREFIX {prefix}: <...>)", tok)
            return TermNode("iri", self.prefixes[prefix] + local, tok.pos)
        if tok.kind == "bnode":
            return TermNode("bnode", tok.text[2:], tok.pos)
        if tok.kind == "number":
            return TermNode("number", tok.text, tok.pos)
        if tok.kind == "op" and tok.text in "+-" and self.peek().kind == "number":
            return TermNode("number", tok.text + self.next().text, tok.pos)
        if tok.kind == "name" and tok.text in ("true", "false"):
            return TermNode("boolean", tok.text, tok.pos)
        if tok.kind == "name":
            return TermNode("name", tok.text, tok.pos)
        if tok.kind == "string":
            text = _unescape(tok.text[1:-1], self, tok)
            if self.peek().kind == "lang":
                return TermNode("literal", text, tok.pos, lang=self.next().text[1:])
            if self.peek().kind == "dtype":
                self.next()
                dt = self.next()
                if dt.kind not in ("iri", "pname"):
                    raise self.error("expected a datatype IRI after '^^'", dt)
                self.i -= 1
                return TermNode("literal", text, tok.pos, datatype=self.term())
            return TermNode("literal", text, tok.pos)
        found = repr(tok.text) if tok.text else "end of input"
        raise self.error(f"expected a term (variable, IRI, literal), found {found}", tok)


_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape(text: str, parser: _Parser, tok: Token) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt in ("u", "U"):
            width = 4 if nxt == "u" else 8
            digits = text[i + 2 : i + 2 + width]
            if len(digits) != width or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise ChronologSyntaxError.at("bad \\u escape in string", parser.source, tok.pos + 1 + i, parser.filename)
            code = int(digits, 16)
            if 0xD800 <= code < 0xE000 or code > 0x10FFFF:
                raise ChronologSyntaxError.at(f"\\{nxt}{digits} is not a Unicode character", parser.source,
                                              tok.pos + 1 + i, parser.filename)
            out.append(chr(code))
            i += 2 + width
        else:
            raise ChronologSyntaxError.at(f"unknown escape '\\{nxt}' in string", parser.source, tok.pos + 1 + i, parser.filename)
    return "".join(out)


def parse(source: str, filename: str | None = None, prefixes: dict[str, str] | None = None) -> ProgramNode:
    """Parse a Datalog program; errors are ChronologSyntaxError at FILE:LINE:COL."""
    return _Parser(source, filename, prefixes).program()
