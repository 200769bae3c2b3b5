"""The analysis of finished tables on the server (docs/analysis.md "On the server").

``ludoteca serve --analysis all|request|off`` (default ``request``): every finished table is
analysed, or those a visitor asks for on the replay page, or none. The analyses run in a small pool
of worker processes at the lowest CPU priority (work.py), fed by a queue in the database that every
worker of the server shares (service.py; repository/analyses.py); the replay page reads them through
``GET /api/tables/{id}/analysis`` and asks with ``POST`` (routes.py).
"""
