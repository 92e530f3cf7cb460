"""A naive Datalog evaluator written straight from the definitions, for differential tests.

Programs are plain data: a rule is (head, positives, negatives), each atom a triple of
strings where names starting with '?' are variables. Levels give the stratification; the
perfect model of a stratified program does not depend on which stratification is used.
"""
from __future__ import annotations


Atom = tuple[str, str, str]
RefRule = tuple[Atom, list[Atom], list[Atom]]


def _match(atom: Atom, fact: tuple[str, str, str], env: dict[str, str]) -> dict[str, str] | None:
    out = dict(env)
    for a, v in zip(atom, fact):
        if a.startswith("?"):
            if out.setdefault(a, v) != v:
                return None
        elif a != v:
            return None
    return out


def _subst(atom: Atom, env: dict[str, str]) -> tuple[str, str, str]:
    return tuple(env.get(a, a) for a in atom)  # type: ignore[return-value]


def solutions(body: list[Atom], negatives: list[Atom], facts: set) -> list[dict[str, str]]:
    """Every substitution satisfying all positive atoms and no negated one, by brute force."""
    envs: list[dict[str, str]] = [{}]
    for atom in body:
        envs = [e2 for e in envs for f in facts if (e2 := _match(atom, f, e)) is not None]
    return [e for e in envs if not any(_subst(n, e) in facts for n in negatives)]


def perfect_model(facts: set, strata: list[list[RefRule]]) -> set:
    """Naive fixpoint, stratum after stratum."""
    model = set(facts)
    for rules in strata:
        changed = True
        while changed:
            changed = False
            for head, pos, neg in rules:
                for env in solutions(pos, neg, model):
                    fact = _subst(head, env)
                    if fact not in model:
                        model.add(fact)
                        changed = True
    return model


def render(strata: list[list[RefRule]], prefix: str) -> str:
    """The program in chronolog's rule syntax (predicates and constants are local names)."""
    lines = [f"PREFIX : <{prefix}>"]

    def atom(a: Atom) -> str:
        s, p, o = (x if x.startswith("?") else ":" + x for x in a)
        return f"{p}({s}, {o})"

    for rules in strata:
        for head, pos, neg in rules:
            body = [atom(a) for a in pos] + ["not " + atom(a) for a in neg]
            lines.append(f"{atom(head)} :- {', '.join(body)}.")
    return "\n".join(lines) + "\n"


__all__ = ["perfect_model", "render", "solutions"]
