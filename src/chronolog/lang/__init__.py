"""Front ends: each language is a package here with its own parse tree (source positions),
lowered onto the core and compiled to a program of the program contract; the registry
(:mod:`chronolog.lang.registry`) finds them."""
