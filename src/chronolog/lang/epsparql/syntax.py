"""The EP-SPARQL language (seed 001, sections 4.1-4.2): parse tree with positions, and its parser.

    PREFIX : <http://example.org/>
    CONSTRUCT { ?c :downrated ?a }
    WHERE { ?a :rates ?c ; :rating ?r1 } SEQ { ?a :rates ?c ; :rating ?r2 } FILTER (?r2 < ?r1)
    SELECT ?c WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 }
        FILTER (?p2 < ?p1 * 0.7 && getDURATION() < "P30D"^^xsd:duration)

A program is PREFIX/BASE declarations, then statements: any number of CONSTRUCT rules and at
most one SELECT. A WHERE clause is a group: operands joined by the binary operators ``SEQ``,
``EQUALS``, ``OPTIONALSEQ``, ``EQUALSOPTIONAL``, ``OPTIONAL``, ``AND`` and ``UNION`` (all of one precedence,
left-associative, so a chain of one operator associates as the paper's binarization does),
juxtaposed operands joined (``AND``), and ``FILTER``s that apply to the whole group they are
written in. An operand is a braced group or a block of triple patterns. Braces around the
whole WHERE clause are optional, as in the paper's examples. Expressions are SPARQL's, built
as :mod:`chronolog.sparql.algebra` nodes (one expression tree), with ``getDURATION()``,
``getSTARTTIME()`` and ``getENDTIME()`` as calls named ``GETDURATION``, ``GETSTARTTIME``,
``GETENDTIME``. Comments start with ``#`` outside IRIs and strings.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from pyoxigraph import Literal, NamedNode

from chronolog.errors import ChronologSyntaxError, SourceMap
from chronolog.sparql import algebra as A
from chronolog.sparql.expressions import SPECIAL, STRICT
from chronolog.terms import XSD, Var

OPERATORS = ("SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL", "OPTIONAL", "AND", "UNION")
INTERVAL_FUNCTIONS = ("GETDURATION", "GETSTARTTIME", "GETENDTIME")
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"

Term = Union[Var, NamedNode, Literal]


@dataclass(frozen=True)
class TriplePattern:
    subject: Term
    predicate: Term
    object: Term
    pos: int


@dataclass(frozen=True)
class Triples:
    """A block of triple patterns: a basic graph pattern."""

    triples: tuple[TriplePattern, ...]
    pos: int


@dataclass(frozen=True)
class Binary:
    """``left OPERATOR right`` (``AND`` also stands for juxtaposition)."""

    op: str
    left: "Pattern"
    right: "Pattern"
    pos: int


@dataclass(frozen=True)
class Filtered:
    """A group with its FILTERs (conjoined), which apply to the group's whole pattern."""

    pattern: "Pattern"
    filters: tuple[A.Expr, ...]
    pos: int


@dataclass(frozen=True)
class Projected:
    """A pattern's solutions with computed variables, projected (a SELECT's ``(expr AS ?v)``,
    or a subquery ``{ SELECT ... WHERE ... }``): each item is a variable kept as it is
    (``expr`` None) or bound to the value of ``expr``; the interval stays the pattern's."""

    pattern: "Pattern"
    items: tuple[tuple[Var, "A.Expr | None"], ...]
    pos: int


Pattern = Union[Triples, Binary, Filtered, Projected]


@dataclass(frozen=True)
class Select:
    variables: tuple[Var, ...] | None  # None: SELECT *
    distinct: bool
    where: Pattern
    pos: int


@dataclass(frozen=True)
class Construct:
    template: tuple[TriplePattern, ...]
    where: Pattern
    pos: int


Statement = Union[Select, Construct]


@dataclass(frozen=True)
class Program:
    statements: tuple[Statement, ...]
    prefixes: tuple[tuple[str, str], ...]

    @property
    def select(self) -> Select | None:
        return next((s for s in self.statements if isinstance(s, Select)), None)

    @property
    def rules(self) -> tuple[Construct, ...]:
        return tuple(s for s in self.statements if isinstance(s, Construct))


_TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<iri><[^<>"{}|^`\\\s]*>)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<var>[?$][A-Za-z_][A-Za-z0-9_]*)
  | (?P<bnode>_:[A-Za-z0-9_][A-Za-z0-9_.-]*)
  | (?P<number>[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+(?:[eE][+-]?[0-9]+)?)
  | (?P<pname>(?:[A-Za-z][A-Za-z0-9_.-]*)?:(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<langtag>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<op>\^\^|&&|\|\||<=|>=|!=|[{}().;,*/+\-=<>!])
""", re.VERBOSE)

KEYWORDS = {"PREFIX", "BASE", "SELECT", "CONSTRUCT", "WHERE", "FILTER", "DISTINCT", "AS", *OPERATORS}


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    pos: int

    @property
    def keyword(self) -> str | None:
        return self.text.upper() if self.kind == "name" and self.text.upper() in KEYWORDS else None


def tokenize(text: str, source: SourceMap) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise source.error(f"unexpected character {text[pos]!r}", pos)
        kind = m.lastgroup or ""
        if kind != "ws":
            tokens.append(Token(kind, m.group(), pos))
        pos = m.end()
    tokens.append(Token("eof", "", len(text)))
    return tokens


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


class _Parser:
    def __init__(self, text: str, filename: str | None) -> None:
        self.source = SourceMap(text, filename)
        self.tokens = tokenize(text, self.source)
        self.i = 0
        self.prefixes: dict[str, str] = {"xsd": XSD, "rdf": RDF_TYPE[:-4]}
        self.declared: list[tuple[str, str]] = []
        self.base: str | None = None

    # -- token helpers --
    def error(self, message: str, pos: int | None = None) -> ChronologSyntaxError:
        return self.source.error(message, self.peek().pos if pos is None else pos)

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def next(self) -> Token:
        tok = self.peek()
        self.i += 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok.kind == "op" and tok.text == text

    def at_keyword(self, *words: str) -> bool:
        return self.peek().keyword in words

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise self.error(f"expected {text!r}, got {self.describe(self.peek())}")
        return self.next()

    def expect_keyword(self, word: str) -> Token:
        if not self.at_keyword(word):
            raise self.error(f"expected {word}, got {self.describe(self.peek())}")
        return self.next()

    @staticmethod
    def describe(tok: Token) -> str:
        return "the end of the program" if tok.kind == "eof" else repr(tok.text)

    # -- program --
    def program(self) -> Program:
        while self.at_keyword("PREFIX", "BASE"):
            word = self.next().keyword
            if word == "BASE":
                self.base = self.iri_text(self.expect_kind("iri"))
                continue
            tok = self.next()
            if tok.kind != "pname" or not tok.text.endswith(":"):
                raise self.error(f"expected a prefix name like 'ex:', got {self.describe(tok)}", tok.pos)
            self.prefixes[tok.text[:-1]] = self.iri_text(self.expect_kind("iri"))
            self.declared.append((tok.text[:-1], self.prefixes[tok.text[:-1]]))
        statements: list[Statement] = []
        while self.peek().kind != "eof":
            if self.at_keyword("SELECT"):
                select = self.select()
                if any(isinstance(s, Select) for s in statements):
                    raise self.error("a program holds at most one SELECT", select.pos)
                statements.append(select)
            elif self.at_keyword("CONSTRUCT"):
                statements.append(self.construct())
            elif self.at_keyword("PREFIX", "BASE"):
                raise self.error("PREFIX and BASE come before the first statement")
            else:
                raise self.error(f"expected SELECT or CONSTRUCT, got {self.describe(self.peek())}")
        if not statements:
            raise self.error("expected at least one SELECT or CONSTRUCT")
        return Program(tuple(statements), tuple(self.declared))

    def expect_kind(self, kind: str) -> Token:
        tok = self.next()
        if tok.kind != kind:
            raise self.error(f"expected {'an IRI' if kind == 'iri' else kind}, got {self.describe(tok)}", tok.pos)
        return tok

    def select(self) -> Select:
        pos = self.next().pos
        distinct = self.at_keyword("DISTINCT")
        if distinct:
            self.next()
        items = self.projection()
        where = self.where()
        if items is None:
            return Select(None, distinct, where, pos)
        variables = tuple(var for var, _ in items)
        if any(expr is not None for _, expr in items):
            where = Projected(where, items, pos)
        return Select(variables, distinct, where, pos)

    def projection(self) -> tuple[tuple[Var, A.Expr | None], ...] | None:
        """``*`` (None), or variables and ``(expr AS ?v)`` items; the paper writes the
        latter without parentheses too (``SELECT ?sum / ?count AS ?average``)."""
        if self.at("*"):
            self.next()
            return None
        items: list[tuple[Var, A.Expr | None]] = []
        while True:
            tok = self.peek()
            if self.at("("):
                self.next()
                items.append(self.projected_expression())
                self.expect(")")
            elif tok.kind == "var" and self.peek(1).kind == "op" and self.peek(1).text in ("+", "-", "*", "/"):
                items.append(self.projected_expression())
            elif tok.kind == "var":
                items.append((Var(self.next().text[1:]), None))
            else:
                break
        if not items:
            raise self.error(f"expected variables or '*' after SELECT, got {self.describe(self.peek())}")
        names = [var for var, _ in items]
        for var in names:
            if names.count(var) > 1:
                raise self.error(f"?{var} is projected twice")
        return tuple(items)

    def projected_expression(self) -> tuple[Var, A.Expr]:
        expr = self.expression()
        if not self.at_keyword("AS"):
            raise self.error(f"expected AS ?variable after a projected expression, got {self.describe(self.peek())}")
        self.next()
        tok = self.expect_kind("var")
        return Var(tok.text[1:]), expr

    def construct(self) -> Construct:
        pos = self.next().pos
        self.expect("{")
        template = self.triples_block().triples if not self.at("}") else ()
        self.expect("}")
        return Construct(template, self.where(), pos)

    def where(self, top: bool = True) -> Pattern:
        if self.at_keyword("WHERE"):
            self.next()
        pos = self.peek().pos
        pattern = self.group(top=top)
        if pattern is None:
            raise self.error("expected a graph pattern", pos)
        return pattern

    # -- patterns --
    def group(self, top: bool = False) -> Pattern | None:
        """Chains, juxtaposed (joined), and FILTERs, until '}' (or a statement's end)."""
        pos = self.peek().pos
        pattern: Pattern | None = None
        filters: list[A.Expr] = []
        while True:
            if self.at_keyword("FILTER"):
                self.next()
                filters.append(self.constraint())
            elif self.at("{") or self.starts_term():
                chain = self.chain()
                pattern = chain if pattern is None else Binary("AND", pattern, chain, chain.pos)
            elif self.at("."):
                self.next()
            elif self.peek().keyword in OPERATORS:
                raise self.error(f"{self.peek().keyword} needs a graph pattern on its left")
            else:
                break
        if top:
            if self.peek().kind != "eof" and not self.at_keyword("SELECT", "CONSTRUCT", "PREFIX", "BASE"):
                raise self.error(f"unexpected {self.describe(self.peek())}")
        if pattern is None:
            if filters:
                raise self.error("a FILTER needs a graph pattern to apply to", pos)
            return None
        return Filtered(pattern, tuple(filters), pos) if filters else pattern

    def chain(self) -> Pattern:
        left = self.operand()
        while self.peek().keyword in OPERATORS:
            tok = self.next()
            if not (self.at("{") or self.starts_term()):
                raise self.error(f"{tok.keyword} needs a graph pattern on its right, got {self.describe(self.peek())}")
            left = Binary(tok.keyword or "", left, self.operand(), tok.pos)
        return left

    def operand(self) -> Pattern:
        if self.at("{") and self.peek(1).keyword == "SELECT":  # a subquery
            self.next()
            pos = self.next().pos
            items = self.projection()
            where = self.where(top=False)
            self.expect("}")
            if items is None:
                return where
            return Projected(where, items, pos)
        if self.at("{"):
            open_ = self.next()
            inner = self.group()
            if inner is None:
                raise self.error("an empty group matches nothing in time: write a triple pattern", open_.pos)
            self.expect("}")
            return inner
        return self.triples_block()

    def starts_term(self) -> bool:
        tok = self.peek()
        return tok.kind in ("var", "iri", "pname", "bnode", "string", "number") or (
            tok.kind == "name" and tok.keyword is None and tok.text.lower() in ("a", "true", "false"))

    def triples_block(self) -> Triples:
        pos = self.peek().pos
        triples: list[TriplePattern] = []
        while self.starts_term():
            subject_tok = self.peek()
            subject = self.term()
            self.predicate_objects(subject, subject_tok.pos, triples)
            if not self.at("."):
                break
            self.next()
        if not triples:
            raise self.error(f"expected a triple pattern, got {self.describe(self.peek())}", pos)
        return Triples(tuple(triples), pos)

    def predicate_objects(self, subject: Term, pos: int, out: list[TriplePattern]) -> None:
        while True:
            tok = self.peek()
            if tok.kind == "name" and tok.text == "a":
                self.next()
                predicate: Term = NamedNode(RDF_TYPE)
            else:
                predicate = self.term()
                if isinstance(predicate, Literal):
                    raise self.error("a predicate cannot be a literal", tok.pos)
            while True:
                out.append(TriplePattern(subject, predicate, self.term(), pos))
                if not self.at(","):
                    break
                self.next()
            if not self.at(";"):
                return
            self.next()
            if not self.starts_term():
                return

    def term(self) -> Term:
        tok = self.next()
        if tok.kind == "var":
            return Var(tok.text[1:])
        if tok.kind == "bnode":
            return Var("_b_" + tok.text[2:])
        if tok.kind in ("iri", "pname"):
            return NamedNode(self.iri_of(tok))
        if tok.kind in ("string", "number") or (tok.kind == "name" and tok.text.lower() in ("true", "false")):
            return self.literal(tok)
        raise self.error(f"expected a term, got {self.describe(tok)}", tok.pos)

    def literal(self, tok: Token) -> Literal:
        if tok.kind == "number":
            kind = "double" if "e" in tok.text.lower() else "decimal" if "." in tok.text else "integer"
            return Literal(tok.text, datatype=NamedNode(XSD + kind))
        if tok.kind == "name":
            return Literal(tok.text.lower(), datatype=NamedNode(XSD + "boolean"))
        value = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), tok.text[1:-1])
        if self.peek().kind == "langtag":
            return Literal(value, language=self.next().text[1:])
        if self.at("^^"):
            self.next()
            dt = self.next()
            if dt.kind not in ("iri", "pname"):
                raise self.error(f"expected a datatype IRI after '^^', got {self.describe(dt)}", dt.pos)
            return Literal(value, datatype=NamedNode(self.iri_of(dt)))
        return Literal(value)

    def iri_text(self, tok: Token) -> str:
        text = tok.text[1:-1]
        if self.base and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", text):
            from urllib.parse import urljoin

            text = urljoin(self.base, text)
        try:
            NamedNode(text)
        except ValueError as exc:
            raise self.error(f"invalid IRI <{text}>: {exc}", tok.pos) from None
        return text

    def iri_of(self, tok: Token) -> str:
        if tok.kind == "iri":
            return self.iri_text(tok)
        prefix, _, local = tok.text.partition(":")
        if prefix not in self.prefixes:
            raise self.error(f"unknown prefix {prefix!r}", tok.pos)
        text = self.prefixes[prefix] + local
        try:
            NamedNode(text)
        except ValueError as exc:
            raise self.error(f"invalid IRI <{text}>: {exc}", tok.pos) from None
        return text

    # -- expressions --
    def constraint(self) -> A.Expr:
        if self.at("("):
            return self.bracketed()
        tok = self.peek()
        if tok.kind == "name" and self.peek(1).kind == "op" and self.peek(1).text == "(":
            return self.primary()
        raise self.error(f"expected '(' or a function call after FILTER, got {self.describe(tok)}")

    def bracketed(self) -> A.Expr:
        self.expect("(")
        expr = self.expression()
        self.expect(")")
        return expr

    def expression(self) -> A.Expr:
        left = self.and_expression()
        while self.at("||"):
            pos = self.next().pos
            left = A.Call(pos=pos, name="||", args=(left, self.and_expression()))
        return left

    def and_expression(self) -> A.Expr:
        left = self.relational()
        while self.at("&&"):
            pos = self.next().pos
            left = A.Call(pos=pos, name="&&", args=(left, self.relational()))
        return left

    def relational(self) -> A.Expr:
        left = self.additive()
        tok = self.peek()
        if tok.kind == "op" and tok.text in ("=", "!=", "<", ">", "<=", ">="):
            self.next()
            return A.Call(pos=tok.pos, name=tok.text, args=(left, self.additive()))
        return left

    def additive(self) -> A.Expr:
        left = self.multiplicative()
        while self.peek().kind == "op" and self.peek().text in ("+", "-"):
            tok = self.next()
            left = A.Call(pos=tok.pos, name=tok.text, args=(left, self.multiplicative()))
        return left

    def multiplicative(self) -> A.Expr:
        left = self.unary()
        while self.peek().kind == "op" and self.peek().text in ("*", "/"):
            tok = self.next()
            left = A.Call(pos=tok.pos, name=tok.text, args=(left, self.unary()))
        return left

    def unary(self) -> A.Expr:
        tok = self.peek()
        if tok.kind == "op" and tok.text in ("!", "-", "+"):
            self.next()
            name = {"!": "!", "-": "UMINUS", "+": "UPLUS"}[tok.text]
            return A.Call(pos=tok.pos, name=name, args=(self.unary(),))
        return self.primary()

    def primary(self) -> A.Expr:
        tok = self.peek()
        if self.at("("):
            return self.bracketed()
        if tok.kind == "var":
            self.next()
            return A.VarRef(pos=tok.pos, var=Var(tok.text[1:]))
        if tok.kind == "name" and tok.text.lower() not in ("true", "false"):
            self.next()
            name = tok.text.upper()
            if name not in INTERVAL_FUNCTIONS and name not in STRICT and name not in SPECIAL:
                raise self.error(f"unknown function {tok.text}", tok.pos)
            args = self.arguments()
            if name in INTERVAL_FUNCTIONS and args:
                raise self.error(f"{tok.text}() takes no arguments", tok.pos)
            if name == "BOUND" and (len(args) != 1 or not isinstance(args[0], A.VarRef)):
                raise self.error("BOUND takes one variable", tok.pos)
            return A.Call(pos=tok.pos, name=name, args=args)
        if tok.kind in ("iri", "pname") and self.peek(1).kind == "op" and self.peek(1).text == "(":
            self.next()
            return A.FunctionCall(pos=tok.pos, iri=NamedNode(self.iri_of(tok)), args=self.arguments())
        if tok.kind in ("iri", "pname", "string", "number", "name"):
            return A.Const(pos=tok.pos, term=self.term())
        raise self.error(f"expected an expression, got {self.describe(tok)}")

    def arguments(self) -> tuple[A.Expr, ...]:
        self.expect("(")
        args: list[A.Expr] = []
        while not self.at(")"):
            args.append(self.expression())
            if not self.at(","):
                break
            self.next()
        self.expect(")")
        return tuple(args)


def parse(text: str, filename: str | None = None) -> Program:
    """The parse tree of an EP-SPARQL program; a positioned ChronologSyntaxError otherwise.

    >>> p = parse("PREFIX : <http://e/> SELECT ?x WHERE { ?x :p 1 } SEQ { ?x :q 2 }")
    >>> p.select.where.op, len(p.rules)
    ('SEQ', 0)
    >>> try:
    ...     parse("SELECT ?x WHERE { ?x :p 1 }", "q.eps")
    ... except ChronologSyntaxError as e:
    ...     print(e)
    q.eps:1:22: unknown prefix ''
        SELECT ?x WHERE { ?x :p 1 }
                             ^
    """
    parser = _Parser(text, filename)
    try:
        return parser.program()
    except RecursionError:
        raise parser.error("the program nests too deeply") from None
