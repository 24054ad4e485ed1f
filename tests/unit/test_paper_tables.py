"""The report's Markdown and LaTeX tables, pure over hand-made rows: read back by two Markdown renderers (CommonMark
and Python-Markdown, the docs site's), each cell what the rows say, stored text shown and never obeyed; LaTeX
with every special character escaped (compiling it is tests/integration/test_paper_tables.py's)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import markdown as python_markdown
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from oriole_workstation import paper_tables
from oriole_workstation.paper_tables import Markup, latex_text, markdown_text
from oriole_workstation.report import GroupBy, origin_of
from oriole_workstation.results import Filters
from tests.unit.test_report_html import NOW, build

HOSTILE = "**bold** <img src=x onerror=alert(1)> | [link](http://example.invalid) `code` ~~gone~~ \\ & {x} _i_"
SPEC = [
    ("baseline", "oracle", {}, "perfect", 7, ["success", "success", "success", "success"], 0),
    ("baseline", "random", {}, "perfect", 7, ["success", "agent", "agent", "error"], 0),
    ("ollama", HOSTILE, {}, "perfect", 7, ["agent", "success"], 100),
    ("baseline", "oracle", {}, "perfect", 9, ["success", "success"], 0),
]


def rendered(form: Markup, spec=SPEC) -> str:
    rows, experiments = build(spec)
    origin = origin_of(experiments, Filters(sweeps=("paper",)), GroupBy.family, "db", NOW)
    return paper_tables.render(rows, GroupBy.family, origin, form)


class Tables(HTMLParser):
    """Each rendered table as its rows of cell texts, and every tag met."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self.tags: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def read_back(html: str) -> Tables:
    parser = Tables()
    parser.feed(html)
    return parser


def renderers(text: str) -> dict[str, str]:
    return {
        "commonmark": MarkdownIt("commonmark").enable("table").render(text),
        "python-markdown": python_markdown.markdown(text, extensions=["tables"]),
    }


def test_markdown_tables_read_back_as_the_rows_say_in_both_renderers():
    for name, html in renderers(rendered(Markup.markdown)).items():
        tables = read_back(html).tables
        assert len(tables) == 2, name
        leaderboard, comparison = tables
        assert leaderboard[0] == ["agent", "perfect 7x7", "perfect 9x9"], name
        by_agent = {row[0]: row[1:] for row in leaderboard[1:]}
        # the interval over mazes where runs share mazes, Wilson's (marked) elsewhere; the flags after the counts
        assert by_agent["baseline/oracle"] == [
            "100.0 34.2\N{EN DASH}100.0 4/4 m c w",  # two mazes, all solved: Wilson's over the 2 mazes
            "100.0 34.2\N{EN DASH}100.0\N{DAGGER} 2/2 m",
        ], name
        assert by_agent["baseline/random"] == ["33.3 0.0\N{EN DASH}50.0 1/3 m u c", "no runs"], name
        header = comparison[0]
        assert header[:8] == ["agent", "family", "size", "mazes", "n", "successes", "censored", "errors"], name
        random = next(r for r in comparison[1:] if r[0] == "baseline/random")
        cells = dict(zip(header, random, strict=True))
        assert (cells["n"], cells["successes"], cells["success (%)"], cells["errors"]) == ("3", "1", "33.3", "1")
        assert (cells["all runs (%)"], cells["95% CI Wilson, all"]) == ("25.0", "4.6\N{EN DASH}69.9")


def test_a_hostile_agent_name_is_text_in_every_renderer():
    for name, html in renderers(rendered(Markup.markdown)).items():
        page = read_back(html)
        assert set(page.tags) <= {"p", "strong", "table", "thead", "tbody", "tr", "th", "td"}, (name, set(page.tags))
        assert page.tags.count("strong") == 2, name  # "Table N." of each caption, nothing the name asked for
        agents = [row[0] for table in page.tables for row in table[1:]]
        assert f"ollama/{HOSTILE}" in agents, (name, agents)


@settings(deadline=None)  # a renderer's first call may be slow on a loaded machine; the property is what counts
@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_any_text_is_one_cell_shown_as_written(text):
    table = f"| a | b |\n| :--- | :--- |\n| {markdown_text(text)} | x |\n"
    shown = paper_tables.terminal_safe(text).strip()
    parsed = read_back(MarkdownIt("commonmark").enable("table").render(table)).tables
    assert parsed[0][1] == [shown, "x"]


_LATEX_SPECIAL = set('\\{}$&#%_^~<>|"[]')
_ESCAPES = sorted(paper_tables._LATEX.values(), key=len, reverse=True)


@given(st.text(max_size=60))
def test_latex_text_leaves_no_special_character_and_only_ascii(text):
    written = latex_text(text)
    assert all(" " <= c <= "~" for c in written)
    rest = re.sub(r"\\texttt\{\\textless\{\}U\+[0-9A-F]{4,6}\\textgreater\{\}\}", "", written)
    for escape in _ESCAPES:
        rest = rest.replace(escape, "")
    assert not _LATEX_SPECIAL & set(rest), rest


def test_latex_tables_are_booktabs_floats_with_a_cell_per_column():
    text = rendered(Markup.latex)
    assert text.count(r"\begin{table}") == 2 and text.count(r"\toprule") == 2 and text.count(r"\bottomrule") == 2
    assert r"\label{tab:oriole-leaderboard}" in text and r"\label{tab:oriole-comparison}" in text
    for block in re.findall(r"\\begin\{tabular\}\{([lr]+)\}(.*?)\\end\{tabular\}", text, re.S):
        columns, body = block
        rows = [line for line in body.splitlines() if line.endswith(r"\\")]
        assert rows and all(len(re.findall(r"(?<!\\)&", row)) == len(columns) - 1 for row in rows)


def test_captions_carry_the_provenance():
    text = rendered(Markup.markdown)
    assert text.count("Provenance:") == 2
    assert "chosen\\_experiments(sweeps => ARRAY\\['paper'\\])" in text.replace("&gt;", ">")


def test_nothing_to_show_says_so():
    origin = origin_of([], Filters(), GroupBy.family, "db", NOW)
    assert paper_tables.render([], GroupBy.family, origin, Markup.markdown) == "No finished experiments match.\n"
    assert paper_tables.render([], GroupBy.family, origin, Markup.latex).startswith("%")
