"""The SQL migrations (``NNNN_*.sql``, applied once each, in order) and the analysis views and functions
(``views/<name>.sql``, made again whenever one changes), read as package data by ``oriole.store``.

This folder of the repository is their one copy: ``pyproject.toml`` maps it to the package ``oriole.migrations``
(the wheel and an editable install), and ``infra/bundling.py`` copies it into the Lambda asset.
"""
