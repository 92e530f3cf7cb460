"""chronolog: a stream reasoner for time-annotated RDF graphs."""
from chronolog.errors import ChronologError, ChronologSyntaxError, LateElementError


def __getattr__(name: str) -> object:
    # the engine pulls in every layer: import it when it is asked for, not with the package
    if name == "Engine":
        from chronolog.engine import Engine

        return Engine
    raise AttributeError(name)


__all__ = ["ChronologError", "ChronologSyntaxError", "Engine", "LateElementError"]
__version__ = "0.1.0"
