"""The HTML report in a real browser: Debian's headless Chromium, driven through Selenium, opens
the shared tiny run's report from disk with the network off and is used as a reader uses it.

The report (made as `make report` makes it: Snakemake's ``--report``, then
``vcrbench.plan.report``, which shows each CSV as a table) is a React app that shows a result only
when the reader picks it in its menu, so the walk clicks, from the menu, through every category
and subcategory (and both values of a subcategory's toggle, where the app makes one) and on every
result's eye button (every result is clicked, none only decoded from its data URI): each figure
must then be shown as an image that decodes whole (a width, a height, no pixel left undrawn) from
the run's own file, each table as a table with every row of its CSV, the CSV's bytes behind its
download link.
All the while no request may leave the file (only file:, data:, blob: and about: URLs) and nothing
may log an error on the console. A table's header sorts it: checked on the leaderboard (one model
in the tiny run, so only that the click sorts and keeps its row) and on vcr_metrics (4 rows).

The browser is /usr/bin/chromium with /usr/bin/chromedriver, which `make test` installs
(`make browser`); Selenium is given both, so it never downloads a browser or a driver.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from vcrbench.plan.report import RESULTS

from .conftest import snakemake

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
#: The only URLs the report may load: itself, and what it embeds.
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")
LEADERBOARD = "results/tables/paper/leaderboard/"
VCR_METRICS = "results/tables/vcr_metrics.csv"
WAIT = 30  # seconds for the app or a frame to show what was clicked

pytestmark = pytest.mark.slow


def csv_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    return rows[0], rows[1:]


@pytest.fixture(scope="module")
def made_report(finished_run, tmp_path_factory):
    """``(run, report)``: a copy of the shared run and its report, made as `make report` does."""
    run = tmp_path_factory.mktemp("report-browser") / "run"
    shutil.copytree(finished_run, run, symlinks=True)
    report = run / "results" / "report.html"
    proc = snakemake(run, "--report", str(report), configfile=run / "config.yaml")
    assert proc.returncode == 0, proc.stderr[-4000:]
    tables = subprocess.run(
        [sys.executable, "-m", "vcrbench.plan.report", str(report)],
        capture_output=True,
        text=True,
    )
    assert tables.returncode == 0, tables.stderr
    return run, report


def start_browser(profile: Path):
    """Headless Chromium through its chromedriver, its profile in ``profile``; the console and
    every network event logged (``drain``)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1600,1000",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # no host name resolves
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    # the driver's path given: Selenium Manager is not asked to find (or download) one
    service = Service(executable_path=str(CHROMEDRIVER))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_script_timeout(WAIT)
    return driver


def open_offline(driver, report: Path) -> None:
    """Open ``report`` from disk with DevTools' network emulation offline, once the app shows."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    drain(driver)  # what the browser's own start page loaded is none of the report's
    driver.get(report.as_uri())
    # the app's root component stores itself in the global `app` when it first renders
    wait(driver).until(lambda d: d.execute_script("return typeof app === 'object' && !!app"))


@pytest.fixture(scope="module")
def browser(made_report, tmp_path_factory):
    """Headless Chromium on the report, offline."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip(f"no {CHROMIUM} or {CHROMEDRIVER}: `make browser` (`make test`) installs them")
    driver = start_browser(tmp_path_factory.mktemp("chromium-profile"))
    try:
        open_offline(driver, made_report[1])
        yield driver
    finally:
        driver.quit()


def wait(driver, seconds=WAIT):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds)


@dataclass
class Logs:
    severe: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def outside(self) -> list[str]:
        return [u for u in self.requests if not u.startswith(LOCAL_SCHEMES)]


def drain(driver) -> Logs:
    """The console's errors and every URL requested since the last call (the logs are emptied)."""
    logs = Logs()
    for entry in driver.get_log("browser"):
        if entry["level"] == "SEVERE":
            logs.severe.append(entry["message"])
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.requestWillBeSent":
            logs.requests.append(params["request"]["url"])
        elif message["method"] == "Network.webSocketCreated":
            logs.requests.append(params["url"])
    return logs


# --------------------------------------------------------------------------- the reader's clicks


def nav_links(driver):
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, "nav a")


def click_link(driver, label: str):
    """Click the navigation link whose text is ``label`` (a menu or category entry)."""
    links = [a for a in nav_links(driver) if a.text.strip() == label]
    assert links, f"no link {label!r} in the report's menu: {[a.text for a in nav_links(driver)]}"
    links[0].click()


def go_home(driver):
    from selenium.webdriver.common.by import By

    # the breadcrumbs' first entry, the house: back to the menu of categories
    driver.find_element(By.CSS_SELECTOR, "nav ol li a").click()
    wait(driver).until(lambda d: d.execute_script("return app.state.navbarMode") == "menu")


def open_subcategory(driver, category: str, subcategory: str, single: bool):
    go_home(driver)
    click_link(driver, category)
    if not single:  # the category lists its subcategories first
        click_link(driver, subcategory)
    wait(driver).until(
        lambda d: d.execute_script("return [app.state.navbarMode, app.state.subcategory]")
        == ["subcategory", subcategory]
    )


def show_each_row(driver, where: str):
    """Click each result's eye button in the subcategory shown (``where``: its name, for
    messages); yields after each click, once the app has taken it (its view changed)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By

    n = len(driver.find_elements(By.CSS_SELECTOR, "nav table tbody tr"))
    assert n > 0, f"{where}: the report lists no result"
    for i in range(n):
        row = driver.find_elements(By.CSS_SELECTOR, "nav table tbody tr")[i]
        eye = row.find_elements(By.CSS_SELECTOR, "td:last-child a")[0]
        before = driver.execute_script("return app.state.renderTrigger")
        eye.click()
        try:
            wait(driver, 10).until(
                lambda d, before=before: d.execute_script("return app.state.renderTrigger")
                != before
            )
        except TimeoutException:
            # Snakemake's app makes a CSV's eye button a download link: nothing is shown
            raise AssertionError(
                f"{where}: the eye button of {row.text!r} shows nothing in the report's page "
                "(a CSV the report offers only as a download: not made by `make report`?)"
            ) from None
        yield driver.execute_script("return app.state.resultPath")


def toggle_values(driver):
    """The labels of the subcategory's toggle (the app makes one for a label with two values
    that split its results in halves), or ``[None]`` where there is none."""
    from selenium.webdriver.common.by import By

    labels = driver.find_elements(By.CSS_SELECTOR, "nav fieldset label")
    return [label.text for label in labels] or [None]


def click_toggle(driver, value):
    from selenium.webdriver.common.by import By

    if value is not None:
        labels = driver.find_elements(By.CSS_SELECTOR, "nav fieldset label")
        [label] = [x for x in labels if x.text == value]
        label.click()


SHOWN_IMAGE = """
const done = arguments[arguments.length - 1];
const path = app.state.resultPath;
const img = Array.from(document.images).find((i) => i.src === results[path].data_uri);
if (img === undefined) {
  done({ path, error: "the page shows no image of this result" });
} else {
  img.decode().then(
    () => {
      // pixels left undrawn (alpha 0): a file cut short shows its first rows only
      const canvas = document.createElement("canvas");
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const context = canvas.getContext("2d");
      context.drawImage(img, 0, 0);
      const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
      let undrawn = 0;
      for (let i = 3; i < pixels.length; i += 4) undrawn += pixels[i] === 0;
      done({ path, width: img.naturalWidth, height: img.naturalHeight, undrawn });
    },
    (err) => done({ path, error: String(err) }),
  );
}
"""

SHOWN_FRAME = """
const frames = Array.from(document.querySelectorAll("iframe"));
return frames.length === 1 && frames[0].src === results[app.state.resultPath].data_uri;
"""

TABLE_IN_FRAME = """
const table = document.querySelector("table");
if (document.readyState !== "complete" || table === null) return null;
return {
  header: Array.from(table.tHead.rows[0].cells, (c) => c.textContent.trim()),
  rows: Array.from(table.tBodies[0].rows, (r) => Array.from(r.cells, (c) => c.textContent)),
  download: document.querySelector("a[download]")?.getAttribute("href") ?? null,
  sortable: table.tHead.querySelectorAll("th button").length,
};
"""


def read_frame(driver, script=TABLE_IN_FRAME):
    """What ``script`` returns inside the content frame (waiting until it returns something)."""
    from selenium.webdriver.common.by import By

    wait(driver).until(lambda d: d.execute_script(SHOWN_FRAME))
    driver.switch_to.frame(driver.find_element(By.CSS_SELECTOR, "iframe"))
    try:
        return wait(driver).until(lambda d: d.execute_script(script))
    finally:
        driver.switch_to.default_content()


@dataclass
class Walk:
    kinds: dict[str, str]  # every result of the report: path -> mime type
    images: dict[str, dict] = field(default_factory=dict)  # what each figure decoded to
    tables: dict[str, dict] = field(default_factory=dict)  # what each table showed
    other: list[str] = field(default_factory=list)
    logs: Logs = field(default_factory=Logs)


def walk_report(driver) -> Walk:
    """Every result of the report, reached through the menu and shown, as the reader does it."""
    categories = driver.execute_script("return categories")
    kinds = driver.execute_script(
        "return Object.fromEntries(Object.entries(results).map(([p, r]) => [p, r.mime_type]))"
    )
    seen = Walk(kinds)
    for category in sorted(categories):
        subcategories = sorted(categories[category])
        for subcategory in subcategories:
            open_subcategory(driver, category, subcategory, single=len(subcategories) == 1)
            for value in toggle_values(driver):
                click_toggle(driver, value)
                for path in show_each_row(driver, f"{category} / {subcategory}"):
                    if kinds[path] in ("image/png", "image/svg+xml"):
                        seen.images[path] = driver.execute_async_script(SHOWN_IMAGE)
                    elif kinds[path] == "text/html":
                        seen.tables[path] = read_frame(driver)
                    else:
                        seen.other.append(f"{path} ({kinds[path]})")
    seen.logs = drain(driver)
    return seen


@pytest.fixture(scope="module")
def walk(browser) -> Walk:
    return walk_report(browser)


# --------------------------------------------------------------------------- the checks


def test_every_result_is_reached_through_the_menu(walk):
    reached = set(walk.images) | set(walk.tables)
    assert not walk.other, f"results the report cannot show in its page: {walk.other}"
    assert reached == set(walk.kinds), sorted(set(walk.kinds) - reached)
    assert walk.images and walk.tables


def test_every_figure_decodes_where_the_report_shows_it(walk, made_report):
    # drawn whole: the figures are opaque (matplotlib's white background), and a file cut short
    # decodes to its size with the rows it lacks left transparent
    broken = {
        p: r
        for p, r in walk.images.items()
        if "error" in r or not (r["width"] > 0 and r["height"] > 0 and r["undrawn"] == 0)
    }
    assert not broken, broken
    # and what the report shows is the run's own file
    run, report = made_report
    results = json.loads(RESULTS.search(report.read_text(encoding="utf-8")).group(2))
    for path in walk.images:
        payload = results[path]["data_uri"].partition(",")[2]
        assert base64.b64decode(payload) == (run / path).read_bytes(), path


def test_every_table_shows_every_row_of_its_csv(walk, made_report):
    run, _ = made_report
    for path, shown in walk.tables.items():
        assert path.endswith(".csv"), f"{path}: an HTML result that is not one of the run's tables"
        header, rows = csv_rows(run / path)
        assert shown["header"] == header, path
        assert shown["rows"] == rows, f"{path}: {len(shown['rows'])} rows shown of {len(rows)}"
        assert shown["sortable"] == len(header), f"{path}: a column's header does not sort"
        assert shown["download"] is not None, f"{path}: no download link"
        payload = shown["download"].partition(",")[2]
        assert base64.b64decode(payload) == (run / path).read_bytes(), f"{path}: not its CSV"
    # a leaderboard and vcr_metrics hold a row for each model in every run: shown empty, the
    # report fails (model_differences, by contrast, has no row in a run of one model)
    leaderboards = [p for p in walk.tables if p.startswith(LEADERBOARD)]
    assert leaderboards and VCR_METRICS in walk.tables
    for path in [*leaderboards, VCR_METRICS]:
        assert walk.tables[path]["rows"], f"{path}: the report shows no row"


def test_nothing_leaves_the_file_and_nothing_logs_an_error(walk):
    assert walk.logs.requests, "no request was logged at all: the performance log is not read"
    assert not walk.logs.outside(), walk.logs.outside()
    assert not walk.logs.severe, walk.logs.severe


SORT_BY = """
const button = Array.from(document.querySelectorAll("thead th button"))
  .find((b) => b.textContent === arguments[0]);
button.click();
const column = Array.from(button.closest("tr").cells).indexOf(button.parentElement);
return {
  order: button.parentElement.getAttribute("aria-sort"),
  values: Array.from(document.querySelector("tbody").rows, (r) => r.cells[column].textContent),
};
"""


def show_result(driver, path: str, categories: dict):
    """Show the result ``path`` through the menu (its category, subcategory, eye button)."""
    [(category, subcategory)] = [
        (c, s) for c, subs in categories.items() for s, paths in subs.items() if path in paths
    ]
    open_subcategory(driver, category, subcategory, single=len(categories[category]) == 1)
    for value in toggle_values(driver):
        click_toggle(driver, value)
        for shown in show_each_row(driver, f"{category} / {subcategory}"):
            if shown == path:
                return
    raise AssertionError(f"{path}: no eye button of its subcategory shows it")


def sort_by(driver, column: str) -> dict:
    from selenium.webdriver.common.by import By

    driver.switch_to.frame(driver.find_element(By.CSS_SELECTOR, "iframe"))
    try:
        return driver.execute_script(SORT_BY, column)
    finally:
        driver.switch_to.default_content()


def test_a_click_on_a_header_sorts_the_table(browser, walk, made_report):
    run, _ = made_report
    driver = browser
    categories = driver.execute_script("return categories")

    # vcr_metrics: by R_a, numbers by value, ascending then descending; by label space, as text
    show_result(driver, VCR_METRICS, categories)
    read_frame(driver)
    header, rows = csv_rows(run / VCR_METRICS)
    r_a = [row[header.index("R_a")] for row in rows]
    ascending = sorted(r_a, key=float)
    assert r_a != ascending, "the CSV is already in the order sorted to: nothing would be shown"
    assert sort_by(driver, "R_a") == {"order": "ascending", "values": ascending}
    assert sort_by(driver, "R_a") == {"order": "descending", "values": ascending[::-1]}
    spaces = [row[header.index("label_space")] for row in rows]
    assert spaces != sorted(spaces), "the CSV is already in label-space order"
    assert sort_by(driver, "label_space") == {"order": "ascending", "values": sorted(spaces)}

    # a leaderboard: its column sorts (the tiny run ranks one model: the row stays)
    leaderboard = sorted(p for p in walk.tables if p.startswith(LEADERBOARD))[0]
    show_result(driver, leaderboard, categories)
    shown = read_frame(driver)
    header, rows = csv_rows(run / leaderboard)
    r_a = sorted((row[header.index("R_a")] for row in rows), key=float)
    assert sort_by(driver, "R_a") == {"order": "ascending", "values": r_a}
    assert sort_by(driver, "R_a") == {"order": "descending", "values": r_a[::-1]}
    assert len(shown["rows"]) == len(rows)

    logs = drain(driver)
    assert not logs.outside() and not logs.severe, (logs.outside(), logs.severe)
