"""``make report``'s second step: the report's tables shown as tables.

Snakemake's HTML report (9.x) shows a figure in its page but offers a CSV result only as a
download: its app has no table view, so none of the run's tables could be read, or sorted, in the
report itself. This step rewrites each CSV result of a finished report (the ``results`` object the
report's ``<script id="results">`` defines) into the page :func:`vcrbench.tables.html.page` makes
of it, a ``text/html`` result, which the app shows in its content frame as it shows any HTML
result: every row, sortable by a click on a header, the CSV behind a download link. Captions,
categories, labels and everything else of the report stay as Snakemake wrote them; a report
already rewritten is left as it is (it holds no CSV result any more).

    python -m vcrbench.plan.report results/report.html
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import sys
from pathlib import Path

from vcrbench.errors import PlanError
from vcrbench.files import io
from vcrbench.tables.html import page

#: Where the report defines its results: ``var results = {...};`` as Snakemake's template writes it.
RESULTS = re.compile(r'(<script id="results">\s*var results = )(\{.*?\})(;\s*</script>)', re.S)


def _data(uri: str, path: str) -> bytes:
    head, sep, payload = uri.partition(",")
    if not (uri.startswith("data:") and sep and head.endswith(";base64")):
        raise PlanError(f"report result {path}: not an embedded base64 data URI ({head[:60]!r})")
    return base64.b64decode(payload)


def _html_uri(text: str, filename: str) -> str:
    # the form Snakemake gives its own data URIs (report.common.data_uri)
    payload = base64.b64encode(text.encode()).decode()
    return f"data:text/html;charset=utf8;filename={filename}.html;base64,{payload}"


def show_tables(report: str) -> tuple[str, list[str]]:
    """``(report with every CSV result as an HTML table page, the paths of those results)``."""
    match = RESULTS.search(report)
    if match is None:
        raise PlanError(
            "not a Snakemake HTML report (no <script id=\"results\"> defining `var results`); "
            "make it with `snakemake --report results/report.html` (an .html, not a .zip)"
        )
    results = json.loads(match.group(2))
    shown = []
    for path, entry in results.items():
        if entry.get("mime_type") != "text/csv":
            continue
        text = _data(entry["data_uri"], path).decode()
        entry["data_uri"] = _html_uri(page(text, entry["name"], path), entry["name"])
        entry["mime_type"] = "text/html"
        shown.append(path)
    # "</" escaped so that no caption can close the script element early (valid JSON and JS)
    rendered = json.dumps(results).replace("</", "<\\/")
    return report[: match.start(2)] + rendered + report[match.end(2) :], shown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="the HTML report Snakemake wrote (rewritten)")
    args = parser.parse_args(argv)
    try:
        text, shown = show_tables(args.report.read_text(encoding="utf-8"))
    except (OSError, PlanError, ValueError) as exc:
        print(f"{args.report}: {exc}", file=sys.stderr)
        return 1
    with io.atomic_path(args.report) as tmp:  # a failed write leaves the report as it was
        tmp.write_text(text, encoding="utf-8")
    print(f"{args.report}: CSV results shown as sortable tables: {len(shown)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
