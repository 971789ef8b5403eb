"""The report's tables as pages (vcrbench.tables.html) and the rewrite of a Snakemake report that
shows them (vcrbench.plan.report); what a browser makes of them is
tests/workflow/test_report_browser.py's."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from vcrbench.errors import PlanError, TableError
from vcrbench.plan.report import RESULTS, main, show_tables
from vcrbench.tables.html import page

CSV = 'model,R_a,note\nb,0.2,"two, words"\na,0.71,<i>&\nc,,\n'


class Cells(HTMLParser):
    """The text of every header and body cell, row by row, and every attribute seen."""

    def __init__(self):
        super().__init__()
        self.rows, self.attrs, self._cell = [], [], None

    def handle_starttag(self, tag, attrs):
        self.attrs.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.rows[-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def parsed(html: str) -> Cells:
    cells = Cells()
    cells.feed(html)
    return cells


def test_a_page_holds_every_row_and_cell_of_its_csv_escaped():
    html = page(CSV, "x.csv", "results/tables/x.csv")
    cells = parsed(html)
    assert cells.rows == [
        ["model", "R_a", "note"],
        ["b", "0.2", "two, words"],
        ["a", "0.71", "<i>&"],
        ["c", "", ""],
    ]
    assert "<i>" not in html.split("<table>")[1]  # the cell's text, not markup
    assert "results/tables/x.csv: 3 rows." in html


def test_every_header_is_a_sort_button_and_numbers_are_marked():
    attrs = parsed(page(CSV, "x.csv")).attrs
    assert [a for t, a in attrs if t == "th"] == [{"aria-sort": "none"}] * 3
    assert sum(t == "button" for t, _ in attrs) == 3
    assert [a.get("class") for t, a in attrs if t == "td"] == [
        None, "n", None, None, "n", None, None, None, None,
    ]  # fmt: skip


def test_the_download_link_holds_the_csv_bytes_and_nothing_is_fetched():
    html = page(CSV, "x.csv")
    attrs = parsed(html).attrs
    [link] = [a for t, a in attrs if t == "a"]
    assert link["download"] == "x.csv"
    assert base64.b64decode(link["href"].partition(",")[2]).decode() == CSV
    [policy] = [a["content"] for t, a in attrs if a.get("http-equiv") == "Content-Security-Policy"]
    assert policy.startswith("default-src 'none';")
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)


def test_a_page_without_header_is_an_error_naming_the_file():
    with pytest.raises(TableError, match="empty.csv"):
        page("", "empty.csv")


def test_header_only_csv_is_a_table_without_rows():
    assert parsed(page("a,b\n", "h.csv")).rows == [["a", "b"]]


def _uri(mime: str, name: str, data: bytes) -> str:
    return f"data:{mime};charset=utf8;filename={name};base64,{base64.b64encode(data).decode()}"


def report_text(results: dict) -> str:
    """A report as Snakemake's template writes one, down to the results script."""
    return (
        "<html><body>\n    <script id=\"results\">\n    var results = "
        + json.dumps(results)
        + ';\n    </script>\n\n    <script id="categories">\n    var categories = {};\n'
        "    </script>\n</body></html>"
    )


RESULTS_IN = {
    "results/tables/x.csv": {
        "name": "x.csv",
        "caption": "<p>a caption</p>",
        "mime_type": "text/csv",
        "data_uri": _uri("text/csv", "x.csv", CSV.encode()),
    },
    "results/figures/f.png": {
        "name": "f.png",
        "caption": "",
        "mime_type": "image/png",
        "data_uri": _uri("image/png", "f.png", b"\x89PNG"),
    },
}


def results_of(report: str) -> dict:
    return json.loads(RESULTS.search(report).group(2))


def test_the_report_shows_each_csv_as_its_page_and_leaves_the_rest():
    report, shown = show_tables(report_text(RESULTS_IN))
    assert shown == ["results/tables/x.csv"]
    out = results_of(report)
    table = out["results/tables/x.csv"]
    assert table["mime_type"] == "text/html"
    assert table["data_uri"].startswith("data:text/html;charset=utf8;filename=x.csv.html;base64,")
    html = base64.b64decode(table["data_uri"].partition(",")[2]).decode()
    assert html == page(CSV, "x.csv", "results/tables/x.csv")
    assert {k: v for k, v in table.items() if k not in ("mime_type", "data_uri")} == {
        "name": "x.csv",
        "caption": "<p>a caption</p>",
    }
    assert out["results/figures/f.png"] == RESULTS_IN["results/figures/f.png"]
    assert report.endswith('var categories = {};\n    </script>\n</body></html>')


def test_a_report_already_shown_is_left_as_it_is():
    once, _ = show_tables(report_text(RESULTS_IN))
    twice, shown = show_tables(once)
    assert shown == [] and twice == once


def test_no_caption_can_close_the_results_script():
    results = {"results/t.csv": {**RESULTS_IN["results/tables/x.csv"], "caption": "</script>"}}
    report, _ = show_tables(report_text(results))
    assert report.count("</script>") == 2  # the results' and the categories' own
    assert results_of(report)["results/t.csv"]["caption"] == "</script>"


def test_a_file_that_is_no_snakemake_report_is_refused_by_name():
    with pytest.raises(PlanError, match="not a Snakemake HTML report"):
        show_tables("<html></html>")


def test_the_command_rewrites_the_report_and_says_how_many(tmp_path):
    path = tmp_path / "report.html"
    path.write_text(report_text(RESULTS_IN), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "vcrbench.plan.report", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "CSV results shown as sortable tables: 1" in proc.stdout
    assert results_of(path.read_text())["results/tables/x.csv"]["mime_type"] == "text/html"


def test_the_command_refuses_a_file_it_cannot_read_and_leaves_it(tmp_path, capsys):
    bad = tmp_path / "bad.html"
    bad.write_text("<html></html>")
    assert main([str(bad)]) == 1
    assert "bad.html: not a Snakemake HTML report" in capsys.readouterr().err
    assert bad.read_text() == "<html></html>"
    assert main([str(tmp_path / "missing.html")]) == 1
    assert "missing.html" in capsys.readouterr().err
