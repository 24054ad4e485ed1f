"""``oriole view``: every sweep and experiment in one local web application, read through the read-only role.

``app`` holds the pages (Flask and its Jinja2 templates in ``templates/``), ``reader`` the one read-only database
connection; the scripts and styles are the workstation's ``assets/``, shared with the static pages.
"""
