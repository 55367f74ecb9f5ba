"""Graph algorithms run by ``CALL name(args) YIELD (cols)``."""
