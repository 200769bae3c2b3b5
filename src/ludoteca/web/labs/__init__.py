"""The lab in the browser (``/lab``): runs and balance searches asked for by logged-in accounts,
queued on a pool apart from live play, with progress, cancel, reports, downloads and comparisons.

* :mod:`~ludoteca.web.labs.settings` — what the server owner allows (``ludoteca serve --lab``);
* :mod:`~ludoteca.web.labs.orders` — a request checked and turned into the lab's command;
* :mod:`~ludoteca.web.labs.pool` — the queue's worker: niced processes (or the Ray cluster);
* :mod:`~ludoteca.web.labs.views` — a run's settings, results and comparisons for the page;
* :mod:`~ludoteca.web.labs.routes` — ``/lab`` and ``/api/lab/…``;
* :mod:`~ludoteca.web.labs.setup` — the lab's part of the application (``create_app(lab=…)``).

The runs' table is web/repository/lab_runs.py; the page static/lab.html with js/lab.js (its option
controls are the lobby's, js/options.js). See docs/lab.md, "In the browser".
"""
