"""Front ends: each language has its own parse tree with source positions, lowered to the core."""
