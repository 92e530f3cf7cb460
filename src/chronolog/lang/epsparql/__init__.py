"""EP-SPARQL (seed 001): SPARQL with event operators over time intervals, RDFS background
knowledge and recursive CONSTRUCT rules. :mod:`.syntax` parses."""
