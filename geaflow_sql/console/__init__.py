"""The web console: ``geaflow-sql serve`` and the JSON API it answers.

``workspaces`` keeps one Session per named workspace (a browser tab) on one
Spark, ``json_values`` turns a query's Arrow rows into JSON, ``api`` is the
Starlette application (routes, token, request limits) and ``serve`` the
command that starts it under uvicorn.
"""
