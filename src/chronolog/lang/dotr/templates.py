"""A DOTR rule's DEFINE template compiled to one Python function per rule.

Building an output graph is the hot path of a rule with ``each`` selection (CityBench Q1
makes 5-6 output graphs per input graph per graph/s of rate), so the template is not
interpreted slot by slot at each firing: a function is generated that reads the
composite event's attributes, mints the firing's fresh IRIs and blank nodes, and
returns the triples, with the checks each position needs and no others (a fresh IRI is
never unbound nor a literal; a constant needs no check at all).

What it builds is what CONSTRUCT would: a triple with an unbound term, a literal
subject or a non-IRI predicate is left out, and each triple appears once.
"""
from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

from pyoxigraph import BlankNode, NamedNode

from chronolog import cep
from chronolog.generated import compile_generated
from chronolog.lang.dotr.lowering import LoweredRule
from chronolog.program.outputs import GraphOutput
from chronolog.terms import TermDictionary

Builder = Callable[[cep.Event, str], GraphOutput]


def compile_template(lowered: LoweredRule, emits: str, dictionary: TermDictionary) -> Builder:
    """``build(composite, firing)``: the output graph of the firing named ``firing`` (see
    ``firing_names``) of the rule that emits ``emits``, from its composite event, at the
    event's end. Fresh IRIs are ``urn:chronolog:EMITS:FIRING[-VAR]``, blank nodes
    ``_:EMITS.FIRINGxLABEL`` (see :func:`blank_prefix`), minted in that order (fresh
    variables first)."""
    names: dict[str, str] = {}  # variable -> local
    lines = ["def build(composite, firing):", "    get = composite[3].get"]
    for n, var in enumerate(lowered.fresh):
        names[var] = f"f{n}"
        suffix = "firing" if n == 0 else f"firing + {'-' + var!r}"
        lines.append(f"    f{n} = encode(NamedNode({f'urn:chronolog:{emits}:'!r} + {suffix}))")
    fresh = set(names)
    blanks: dict[str, str] = {}
    for slots in lowered.template.triples:
        for kind, value in slots:
            if kind == "var" and value not in names:
                local = names[value] = f"v{len(names) - len(fresh)}"  # type: ignore[index]
                if value in lowered.aggregated:
                    lines.append(f"    {local} = get({value!r})")
                    lines.append(f"    if {local} is not None:")
                    lines.append(f"        {local} = encode_value({local})")
                else:
                    lines.append(f"    {local} = get({value!r})")
            elif kind == "bnode" and value not in blanks:
                local = blanks[value] = f"b{len(blanks)}"  # type: ignore[index]
                lines.append(f"    {local} = encode(BlankNode({blank_prefix(emits)!r} + firing + {'x' + str(value)!r}))")
    # Two template triples with different constants in one position never build the same
    # triple; when every pair differs so, the triples need no de-duplication.
    triples = lowered.template.triples
    distinct = all(any(a[0] == b[0] == "id" and a[1] != b[1] for a, b in zip(t1, t2))
                   for t1, t2 in combinations(triples, 2))
    built, checked = [], False
    for slots in triples:
        terms, checks = [], []
        for position, (kind, value) in enumerate(slots):
            if kind == "id":
                terms.append(str(value))
                continue
            local = blanks[value] if kind == "bnode" else names[value]  # type: ignore[index]
            terms.append(local)
            if kind == "var" and value not in fresh:
                checks.append(f"{local} is not None")
                if position == 0:
                    checks.append(f"not is_literal({local})")
                elif position == 1:
                    checks.append(f"is_iri({local})")
        built.append((f"({', '.join(terms)})", " and ".join(checks)))
        checked |= bool(checks)
    head = f"    return NEW(GraphOutput, (composite[2], {lowered.iri!r}, "
    if distinct and not checked:
        lines.append(head + "(" + "".join(f"{triple}, " for triple, _ in built) + ")))")
    else:
        lines.append("    out = []" if distinct else "    out = {}")
        for triple, check in built:
            add = f"out.append({triple})" if distinct else f"out[{triple}] = None"
            lines.append(f"    if {check}:\n        {add}" if check else f"    {add}")
        lines.append(head + "tuple(out)))")
    namespace = {"encode": dictionary.encode, "encode_value": dictionary.encode_value,
                 "is_literal": dictionary.is_literal, "is_iri": dictionary.is_iri,
                 "NamedNode": NamedNode, "BlankNode": BlankNode, "GraphOutput": GraphOutput, "NEW": tuple.__new__}
    exec(compile_generated("\n".join(lines) + "\n", f"DEFINE {emits}"), namespace)
    return namespace["build"]


def blank_prefix(emits: str) -> str:
    """How the blank node labels of a rule's firings start: the rule's name, then a dot.
    Firing names repeat across rules (two rules firing on one event are both ``T-S-1``),
    so the name keeps their blank nodes apart, as it does their fresh IRIs. A character
    a label cannot hold, or that would make two names alike, is written ``_XX`` (hex)."""
    return "".join(c if c.isascii() and c.isalnum() else "".join(f"_{b:02x}" for b in c.encode("utf-8"))
                   for c in emits) + "."
