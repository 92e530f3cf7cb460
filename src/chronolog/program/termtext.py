"""Term ids as N-Triples texts and back, for snapshots that must not depend on one
process's term numbering."""
from __future__ import annotations

from chronolog.formats import parse_terms
from chronolog.terms import TermDictionary


def as_text(dictionary: TermDictionary, ids: object) -> object:
    """Term ids (nested in lists and tuples) as N-Triples texts."""
    if isinstance(ids, int):
        return dictionary.text(ids)
    if ids is None:
        return None
    return type(ids)(as_text(dictionary, i) for i in ids)  # type: ignore[call-arg, attr-defined]


def as_ids(dictionary: TermDictionary, texts: object) -> object:
    """The inverse of :func:`as_text`, in ``dictionary``."""
    if isinstance(texts, str):
        return dictionary.encode(parse_terms([texts])[0])
    if texts is None:
        return None
    return type(texts)(as_ids(dictionary, t) for t in texts)  # type: ignore[call-arg, attr-defined]
