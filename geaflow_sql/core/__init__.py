"""The floor every layer stands on: errors, configuration keys, the catalog,
GeaFlow's types and how values print.  Nothing here imports the rest of the
project (``tests/test_layers.py`` checks it)."""
