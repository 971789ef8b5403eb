"""A CSV table as one self-contained HTML page: what the HTML report shows for each table
(:mod:`vcrbench.plan.report`).

Snakemake's report offers a CSV result only as a download; a page made here shows it as a table,
every row written into the HTML (no script is needed to see them), sortable by a click on a
column's header (a few lines of inline script: numbers by value, text in natural order, empty
cells last either way), with the CSV's own bytes behind a download link. The page loads nothing
(its Content-Security-Policy forbids any request), so the report stays one file that works
offline. The bytes depend only on the CSV and the names given.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import math

from vcrbench.errors import TableError

#: Nothing may be fetched: inline style and script only, the download link a data: URI.
POLICY = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

STYLE = """
body { font: 13px/1.4 system-ui, sans-serif; margin: 12px; color: #111; background: #fff; }
p { margin: 0 0 8px; color: #444; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 2px 6px; vertical-align: top; }
th { background: #eee; position: sticky; top: 0; }
th button { font: inherit; font-weight: 600; border: 0; background: none; padding: 0;
  cursor: pointer; white-space: nowrap; }
th[aria-sort="ascending"] button::after { content: " ▲"; }
th[aria-sort="descending"] button::after { content: " ▼"; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #f7f7f7; }
"""

# Sorting in place of the rows: the column is numeric when every cell with a value is a number;
# cells without a value (EMPTY) come after every value in either order. A second click on the same
# header reverses the order; aria-sort says which order is shown.
SCRIPT = """
const EMPTY = new Set(["", "–", "nan", "NaN"]);
document.querySelectorAll("thead th button").forEach((button, column) => {
  button.addEventListener("click", () => {
    const header = button.parentElement;
    const body = header.closest("table").tBodies[0];
    const descending = header.getAttribute("aria-sort") === "ascending";
    const rows = Array.from(body.rows);
    const text = (row) => row.cells[column].textContent.trim();
    const numeric = rows.every((row) => EMPTY.has(text(row)) || !isNaN(Number(text(row))));
    rows.sort((a, b) => {
      const x = text(a), y = text(b);
      if (EMPTY.has(x) || EMPTY.has(y)) return EMPTY.has(x) - EMPTY.has(y);
      const order = numeric
        ? Number(x) - Number(y)
        : x.localeCompare(y, undefined, { numeric: true });
      return descending ? -order : order;
    });
    body.append(...rows);
    header.closest("tr").querySelectorAll("th").forEach((th) => {
      const order = descending ? "descending" : "ascending";
      th.setAttribute("aria-sort", th === header ? order : "none");
    });
  });
});
"""


def _numeric(cell: str) -> bool:
    try:
        return math.isfinite(float(cell))
    except ValueError:
        return False


def _cell(cell: str) -> str:
    # numbers right-aligned, so that their digits line up
    kind = ' class="n"' if _numeric(cell) else ""
    return f"<td{kind}>{html.escape(cell)}</td>"


def read_rows(text: str, name: str) -> tuple[list[str], list[list[str]]]:
    """``(header, rows)`` of a CSV's text; a file without a header row is an error naming it."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or not rows[0]:
        raise TableError(f"{name}: no header row, so no table to show")
    return rows[0], rows[1:]


def page(text: str, name: str, path: str | None = None) -> str:
    """The HTML page of the CSV ``text`` (file name ``name``, shown as ``path`` when given)."""
    header, rows = read_rows(text, name)
    esc = html.escape
    download = "data:text/csv;charset=utf-8;base64," + base64.b64encode(text.encode()).decode()
    button = '<th aria-sort="none"><button type="button">{}</button></th>'
    head = "".join(button.format(esc(h)) for h in header)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>\n" for row in rows)
    count = f"{len(rows)} {'row' if len(rows) == 1 else 'rows'}"
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">\n'
        f"<title>{esc(name)}</title><style>{STYLE}</style></head><body>\n"
        f"<p>{esc(path or name)}: {count}. Click a column's header to sort by it. "
        f'<a href="{download}" download="{esc(name)}">Download the CSV</a></p>\n'
        f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>\n"
        f"<script>{SCRIPT}</script>\n</body></html>\n"
    )
