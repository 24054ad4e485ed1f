"""The scripts and styles that the static pages inline and ``oriole view`` serves as files: one copy of each, in
``assets/`` (package data), so an animation or a transcript behaves alike in a file and in the viewer."""

from __future__ import annotations

from importlib import resources

FOLDER = resources.files("oriole_workstation").joinpath("assets")


def text(name: str) -> str:
    """An asset's text (``animation.js``, ``transcript.js``, ...)."""
    return FOLDER.joinpath(name).read_text(encoding="utf-8")


def inline_script(name: str) -> str:
    """An asset as an inline ``<script>`` of a self-contained page (no ``</script`` can end it early)."""
    return "<script>\n" + text(name).replace("</", "<\\/") + "</script>"
