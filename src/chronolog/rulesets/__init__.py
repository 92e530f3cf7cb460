"""Built-in rule sets, written in chronolog's own Datalog language.

``rdfs``: the RDFS entailment rules of RDF 1.1 Semantics. ``owl-rl``: the OWL 2 RL/RDF
rules of the OWL 2 Profiles specification (section 4.3, Tables 4-9), each rule labelled
with its name in the spec; inconsistencies are constraints reported as diagnostics.
Each file's comments say which rules are left out and why.
"""
from __future__ import annotations

from importlib import resources

from chronolog.errors import ChronologError

RULESETS = {"rdfs": "rdfs.dl", "owl-rl": "owl-rl.dl"}


def ruleset_source(name: str) -> tuple[str, str]:
    """The text and file name of the built-in rule set ``name`` ("rdfs" or "owl-rl")."""
    filename = RULESETS.get(name)
    if filename is None:
        known = ", ".join(sorted(RULESETS))
        raise ChronologError(f"unknown rule set {name!r}; the built-in rule sets are: {known}")
    text = resources.files(__name__).joinpath(filename).read_text(encoding="utf-8")
    return text, filename
