"""The DOTR rule language: parse tree with source positions, and its parser.

    PREFIX : <http://example.org/>
    EVENT Smoke    AS SELECT ?read ?room WHERE { ?read a :SmokeReading ; :sensor ?s . ?s :is_in_room ?room }
    EVENT HighTemp AS SELECT ?read ?room ?val WHERE { ... FILTER(?val > 60) }
    RULE :fire
      DEFINE { ?fire a :Fire ; :at_room ?room ; :max_temp ?max . }
      FROM Smoke AND LAST HighTemp WITHIN 5 min FROM Smoke
      WHERE Smoke.room = HighTemp.room
      WITH ?room = Smoke.room, ?max = MAX(HighTemp.val WITHIN 5 min FROM Smoke)
      CONSUMING HighTemp
      FEEDBACK

An EVENT names a SPARQL SELECT query whose solutions at each time point are events (its
variables are the attributes). A RULE's FROM is a TESLA pattern: a terminator, then
``[EACH|LAST|FIRST [n]] Type [AS alias] WITHIN duration FROM alias`` predicates and
``NOT Type [AS alias] (WITHIN duration FROM alias | BETWEEN alias AND alias)`` negations.
WHERE holds comparisons of ``alias.attribute`` terms, constants and aggregates
``AVG|SUM|MIN|MAX|COUNT(Type.attribute [WITHIN d FROM alias | BETWEEN a AND b] [WHERE ...])``;
WITH binds the DEFINE template's variables; template variables left unbound get a fresh IRI
per firing. ``FEEDBACK [AFTER duration]`` makes the rule's output graphs input elements
again, ``duration`` (default: one time unit) after their time. Comments start with ``#`` outside IRIs and strings.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union

from chronolog.errors import ChronologSyntaxError, SourceMap


@dataclass(frozen=True)
class Span:
    """A piece of the source text kept verbatim (a SPARQL query, a DEFINE template)."""

    text: str
    pos: int


@dataclass(frozen=True)
class EventDecl:
    name: str
    query: Span
    pos: int


@dataclass(frozen=True)
class Ref:
    """``alias.attribute``."""

    alias: str
    attribute: str
    pos: int


@dataclass(frozen=True)
class Constant:
    """A literal, IRI or prefixed name, as written (resolved by the lowering)."""

    kind: str  # number, string, iri, pname, boolean
    text: str
    pos: int
    datatype: str | None = None
    lang: str | None = None


@dataclass(frozen=True)
class Scope:
    """``WITHIN duration FROM alias`` (within) or ``BETWEEN a AND b`` (between)."""

    kind: str
    duration: str | None
    first: str
    second: str | None
    pos: int


@dataclass(frozen=True)
class AggregateNode:
    func: str
    ref: Ref  # Type.attribute (attribute "*" for COUNT(Type))
    scope: Scope | None
    where: tuple["Condition", ...]
    pos: int


Operand = Union[Ref, Constant, AggregateNode]


@dataclass(frozen=True)
class Condition:
    left: Operand
    op: str
    right: Operand
    pos: int


@dataclass(frozen=True)
class PatternItem:
    """The terminator (selection None, scope None), a predicate, or a negation."""

    type: str
    alias: str
    selection: str | None  # each, last, first
    n: int
    negated: bool
    scope: Scope | None
    pos: int


@dataclass(frozen=True)
class Binding:
    var: str
    value: Operand
    pos: int


@dataclass(frozen=True)
class Feedback:
    """``FEEDBACK [AFTER duration]``: the rule's outputs are input again after a delay."""

    duration: str | None  # None: one time unit
    pos: int


@dataclass
class RuleDecl:
    name: str  # as written: an IRI, a prefixed name or a plain name
    name_pos: int
    template: Span
    pattern: list[PatternItem] = field(default_factory=list)
    where: list[Condition] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    consuming: list[tuple[str, int]] = field(default_factory=list)
    pos: int = 0
    feedback: Feedback | None = None


@dataclass
class DotrTree:
    prefixes: dict[str, str]
    base: str | None
    events: list[EventDecl]
    rules: list[RuleDecl]
    source: str
    filename: str | None
    prologue: str  # the PREFIX/BASE lines, prepended to every query and template


_TOP = re.compile(r"^[ \t]*(EVENT|RULE|PREFIX|BASE)\b", re.M)
_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
  | (?P<var>[?$][A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<dtype>\^\^)
  | (?P<number>[+-]?(?:[0-9]+\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?)
  | (?P<op>!=|<=|>=|==|[=<>(),.{}])
  | (?P<punct>[;\[\]*/|!&+^-])
  | (?P<pname>(?:[A-Za-z][A-Za-z0-9_.-]*(?<!\.))?:(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?)?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
    """,
    re.VERBOSE,
)
_CLAUSES = {"DEFINE", "FROM", "WHERE", "WITH", "CONSUMING", "FEEDBACK"}
_AGGREGATES = {"AVG", "SUM", "MIN", "MAX", "COUNT"}
_UNITS = {"ms", "s", "sec", "second", "seconds", "min", "minute", "minutes", "h", "hour", "hours", "d", "day", "days"}


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    pos: int


class _Parser:
    def __init__(self, source: str, filename: str | None) -> None:
        self.source = source
        self.filename = filename
        self.map = SourceMap(source, filename)
        self.toks: list[_Tok] = []
        self.i = 0

    def error(self, message: str, pos: int) -> ChronologSyntaxError:
        return self.map.error(message, pos)

    # -- top level: split into declarations ------------------------------------------

    def program(self) -> DotrTree:
        starts = [(m.start(1), m.group(1)) for m in _TOP.finditer(self.source) if self._depth_zero(m.start(1))]
        first_code = self._first_code()
        if first_code is not None and (not starts or first_code < starts[0][0]):
            raise self.error("expected EVENT, RULE, PREFIX or BASE", first_code)
        prefixes: dict[str, str] = {}
        base = None
        prologue: list[str] = []
        events: list[EventDecl] = []
        rules: list[RuleDecl] = []
        for n, (pos, keyword) in enumerate(starts):
            end = starts[n + 1][0] if n + 1 < len(starts) else len(self.source)
            if keyword == "PREFIX":
                m = re.match(r"PREFIX\s+((?:[A-Za-z][A-Za-z0-9_.-]*)?):\s*<([^>]*)>\s*", self.source[pos:end])
                if not m or self.source[pos + m.end():end].strip(" \t\n").split("#")[0].strip():
                    raise self.error("expected PREFIX name: <IRI>", pos)
                prefixes[m.group(1)] = m.group(2)
                prologue.append(f"PREFIX {m.group(1)}: <{m.group(2)}>")
            elif keyword == "BASE":
                m = re.match(r"BASE\s*<([^>]*)>\s*", self.source[pos:end])
                if not m:
                    raise self.error("expected BASE <IRI>", pos)
                base = m.group(1)
                prologue.append(f"BASE <{base}>")
            elif keyword == "EVENT":
                events.append(self.event(pos, end))
            else:
                rules.append(self.rule(pos, end))
        return DotrTree(prefixes, base, events, rules, self.source, self.filename, "\n".join(prologue))

    def _first_code(self) -> int | None:
        for m in re.finditer(r"[^\s]", self.source):
            if m.group() == "#":
                continue
            line_start = self.source.rfind("\n", 0, m.start()) + 1
            if self.source[line_start:m.start()].strip().startswith("#"):
                continue
            return m.start()
        return None

    def _depth_zero(self, pos: int) -> bool:
        """Is ``pos`` outside braces, strings, IRIs and comments?"""
        depth = 0
        i = 0
        src = self.source
        while i < pos:
            c = src[i]
            if c == "#":
                nl = src.find("\n", i)
                i = len(src) if nl < 0 else nl
                if i >= pos:
                    return False
                continue
            if c in "\"'":
                end = i + 1
                while end < len(src) and src[end] != c and src[end] != "\n":
                    end += 2 if src[end] == "\\" else 1
                if end >= pos:
                    return False
                i = end + 1
                continue
            if c == "<":
                m = re.compile(r"<[^<>\"{}|^`\\\x00-\x20]*>").match(src, i)
                if m:
                    i = m.end()
                    continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            i += 1
        return depth == 0

    def event(self, pos: int, end: int) -> EventDecl:
        m = re.compile(r"EVENT\s+([A-Za-z_][A-Za-z0-9_]*)\s+AS\s+").match(self.source, pos, end)
        if not m:
            raise self.error("expected EVENT Name AS SELECT ...", pos)
        body = self.source[m.end():end].rstrip()
        if not body:
            raise self.error(f"event {m.group(1)} has no query after AS", m.end() - 1)
        return EventDecl(m.group(1), Span(body, m.end()), pos)

    # -- rules -------------------------------------------------------------------------

    def tokens(self, start: int, end: int) -> None:
        self.toks = []
        pos = start
        while pos < end:
            m = _TOKEN.match(self.source, pos, end)
            if not m:
                raise self.error(f"unexpected character {self.source[pos]!r}", pos)
            if m.lastgroup != "ws":
                self.toks.append(_Tok(m.lastgroup or "", m.group(), pos))
            pos = m.end()
        last = self.toks[-1] if self.toks else None  # the end of a rule: just after its last token
        self.toks.append(_Tok("eof", "", last.pos + len(last.text) if last else end))
        self.i = 0

    def peek(self, ahead: int = 0) -> _Tok:
        return self.toks[min(self.i + ahead, len(self.toks) - 1)]

    def next(self) -> _Tok:
        tok = self.peek()
        self.i += 1
        return tok

    def at_word(self, *words: str) -> bool:
        tok = self.peek()
        return tok.kind == "word" and tok.text.upper() in words

    def expect_word(self, what: str, *words: str) -> _Tok:
        if not self.at_word(*words):
            raise self._unexpected(what)
        return self.next()

    def expect_op(self, op: str) -> _Tok:
        tok = self.peek()
        if tok.kind != "op" or tok.text != op:
            raise self._unexpected(f"'{op}'")
        return self.next()

    def _unexpected(self, what: str) -> ChronologSyntaxError:
        tok = self.peek()
        found = repr(tok.text) if tok.text else "the end of the rule"
        return self.error(f"expected {what}, found {found}", tok.pos)

    def name(self, what: str) -> _Tok:
        tok = self.peek()
        if tok.kind != "word" or tok.text.upper() in _CLAUSES | {"AND", "NOT", "AS", "EACH", "LAST", "FIRST",
                                                                  "WITHIN", "BETWEEN"}:
            raise self._unexpected(what)
        return self.next()

    def rule(self, pos: int, end: int) -> RuleDecl:
        self.tokens(pos + len("RULE"), end)
        head = self.peek()
        if head.kind not in ("iri", "pname", "word") or (head.kind == "word" and head.text.upper() in _CLAUSES):
            raise self._unexpected("a rule name (an IRI, prefixed name or name)")
        self.next()
        define = self.expect_word("DEFINE { template }", "DEFINE")
        open_brace = self.expect_op("{")
        depth = 1
        while depth:
            tok = self.next()
            if tok.kind == "eof":
                raise self.error("unclosed '{' of DEFINE", open_brace.pos)
            if tok.kind == "op" and tok.text in "{}":
                depth += 1 if tok.text == "{" else -1
        close = self.toks[self.i - 1]
        template = Span(self.source[open_brace.pos + 1:close.pos], open_brace.pos + 1)
        rule = RuleDecl(head.text, head.pos, template, pos=pos)
        del define
        self.expect_word("FROM and the pattern", "FROM")
        self.pattern(rule)
        while self.peek().kind != "eof":
            if self.at_word("WHERE"):
                self.next()
                rule.where.append(self.condition())
                while self.at_word("AND") or (self.peek().kind == "op" and self.peek().text == ","):
                    self.next()
                    rule.where.append(self.condition())
            elif self.at_word("WITH"):
                self.next()
                rule.bindings.append(self.binding())
                while self.peek().kind == "op" and self.peek().text == ",":
                    self.next()
                    rule.bindings.append(self.binding())
            elif self.at_word("CONSUMING"):
                self.next()
                tok = self.name("an alias to consume")
                rule.consuming.append((tok.text, tok.pos))
                while self.peek().kind == "op" and self.peek().text == ",":
                    self.next()
                    tok = self.name("an alias to consume")
                    rule.consuming.append((tok.text, tok.pos))
            elif self.at_word("FEEDBACK"):
                tok = self.next()
                if rule.feedback is not None:
                    raise self.error("FEEDBACK is given twice in this rule", tok.pos)
                duration = None
                if self.at_word("AFTER"):
                    self.next()
                    duration = self.duration()
                    unit = self.peek()
                    if unit.kind == "word" and unit.text.upper() not in _CLAUSES and unit.text.upper() != "RULE":
                        raise self.error(f"unknown time unit {unit.text!r} (known: ms, s, min, h, d)", unit.pos)
                rule.feedback = Feedback(duration, tok.pos)
            else:
                raise self._unexpected("WHERE, WITH, CONSUMING, FEEDBACK or the next RULE/EVENT")
        return rule

    def pattern(self, rule: RuleDecl) -> None:
        term = self.name("the terminator event")
        alias = self.alias(term.text)
        rule.pattern.append(PatternItem(term.text, alias, None, 1, False, None, term.pos))
        while self.at_word("AND"):
            self.next()
            start = self.peek()
            negated = False
            selection = "each"
            n = 1
            if self.at_word("NOT"):
                self.next()
                negated = True
                selection = None
            elif self.at_word("EACH", "LAST", "FIRST"):
                selection = self.next().text.lower()
                if self.peek().kind == "number" and selection != "each":
                    n = int(self.next().text)
            typ = self.name("an event name")
            alias = self.alias(typ.text)
            scope = self.scope(required=not negated)
            if scope is None:
                raise self.error(f"NOT {typ.text} needs a scope: WITHIN duration FROM alias, or BETWEEN a AND b",
                                 typ.pos)
            rule.pattern.append(PatternItem(typ.text, alias, selection, n, negated, scope, start.pos))

    def alias(self, default: str) -> str:
        if self.at_word("AS"):
            self.next()
            return self.name("an alias").text
        return default

    def scope(self, required: bool) -> Scope | None:
        tok = self.peek()
        if self.at_word("WITHIN"):
            self.next()
            duration = self.duration()
            self.expect_word("FROM alias", "FROM")
            return Scope("within", duration, self.name("an alias").text, None, tok.pos)
        if self.at_word("BETWEEN"):
            self.next()
            first = self.name("an alias").text
            self.expect_word("AND", "AND")
            return Scope("between", None, first, self.name("an alias").text, tok.pos)
        if required:
            raise self._unexpected("WITHIN duration FROM alias")
        return None

    def duration(self) -> str:
        tok = self.peek()
        if tok.kind == "number":
            self.next()
            if self.peek().kind == "word" and self.peek().text in _UNITS:
                return f"{tok.text} {self.next().text}"
            return tok.text
        if tok.kind == "word" and tok.text.startswith("P"):
            return self.next().text
        raise self._unexpected("a duration such as 5 min, 500 ms or PT5M")

    def condition(self) -> Condition:
        left = self.operand()
        op = self.peek()
        if op.kind != "op" or op.text not in ("=", "==", "!=", "<", "<=", ">", ">="):
            raise self._unexpected("a comparison operator (= != < <= > >=)")
        self.next()
        return Condition(left, "==" if op.text in ("=", "==") else op.text, self.operand(), op.pos)

    def binding(self) -> Binding:
        tok = self.peek()
        if tok.kind != "var":
            raise self._unexpected("?variable = value")
        self.next()
        self.expect_op("=")
        return Binding(tok.text[1:], self.operand(), tok.pos)

    def operand(self) -> Operand:
        tok = self.peek()
        if tok.kind == "word" and tok.text.upper() in _AGGREGATES and self.peek(1).text == "(":
            return self.aggregate()
        if tok.kind == "word" and tok.text in ("true", "false"):
            self.next()
            return Constant("boolean", tok.text, tok.pos)
        if tok.kind == "word":
            return self.ref()
        if tok.kind == "number":
            self.next()
            return Constant("number", tok.text, tok.pos)
        if tok.kind in ("iri", "pname"):
            self.next()
            return Constant(tok.kind, tok.text, tok.pos)
        if tok.kind == "string":
            self.next()
            text = tok.text[1:-1].encode("utf-8").decode("unicode_escape") if "\\" in tok.text else tok.text[1:-1]
            if self.peek().kind == "lang":
                return Constant("string", text, tok.pos, lang=self.next().text[1:])
            if self.peek().kind == "dtype":
                self.next()
                dt = self.next()
                if dt.kind not in ("iri", "pname"):
                    raise self.error("expected a datatype IRI after '^^'", dt.pos)
                return Constant("string", text, tok.pos, datatype=dt.text)
            return Constant("string", text, tok.pos)
        raise self._unexpected("Alias.attribute, a constant or an aggregate")

    def ref(self) -> Ref:
        alias = self.next()
        self.expect_op(".")
        attribute = self.peek()
        if attribute.kind != "word":
            raise self._unexpected("an attribute name after '.'")
        self.next()
        return Ref(alias.text, attribute.text, alias.pos)

    def aggregate(self) -> AggregateNode:
        func = self.next()
        self.expect_op("(")
        typ = self.name("Type.attribute")
        if func.text.upper() == "COUNT" and self.peek().text != ".":
            ref = Ref(typ.text, "*", typ.pos)
        else:
            self.expect_op(".")
            attribute = self.peek()
            if attribute.kind != "word":
                raise self._unexpected("an attribute name after '.'")
            self.next()
            ref = Ref(typ.text, attribute.text, typ.pos)
        scope = self.scope(required=False)
        where: list[Condition] = []
        if self.at_word("WHERE"):
            self.next()
            where.append(self.condition())
            while self.at_word("AND"):
                self.next()
                where.append(self.condition())
        self.expect_op(")")
        return AggregateNode(func.text.lower(), ref, scope, tuple(where), func.pos)


def parse_dotr(source: str, filename: str | None = None) -> DotrTree:
    """Parse a DOTR program; errors are ChronologSyntaxError at FILE:LINE:COL."""
    return _Parser(source, filename).program()
