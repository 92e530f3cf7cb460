"""chronolog: a stream reasoner for time-annotated RDF graphs."""
from chronolog.errors import ChronologError, ChronologSyntaxError, LateElementError

__all__ = ["ChronologError", "ChronologSyntaxError", "LateElementError"]
__version__ = "0.1.0"
