"""End to end: the real server (python -m dashboard.serve) in headless Chromium from Debian.

Chromium is driven over its DevTools protocol (chromium_cdp.py, on the websockets package);
pages are checked once Streamlit reports the script run finished and Plotly has drawn. Skipped
only when /usr/bin/chromium is missing (apt-get install chromium). Set COLLSWEEP_E2E_SHOTS to
a folder to keep the screenshots.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import synthetic
from helpers.chromium_cdp import CHROMIUM, Browser, Page

from dashboard.figures.style import short_name
from runners import store
from runners.analysis.workload_report import report_workload
from runners.domain.workload.file import workload_from_json

ROOT = Path(__file__).resolve().parents[2]
RUN_A, RUN_B = (spec.run_id for spec in synthetic.demo_specs())
STARTUP_S = 90.0
WORKLOAD = {  # reported on the served copy's first run, for the Workload page
    "collsweep_workload": 1,
    "name": "e2e",
    "calls": [
        {"collective": "allreduce", "bytes": b, "dtype": "float32", "op": "sum", "ranks": 2}
        | {"calls": n}
        for b, n in ((64, 1000), (262144, 40), (2097152, 10))
    ],
}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs /usr/bin/chromium (apt-get install chromium)"
    ),
]

IDLE = """(() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning';
})()"""
PLOTTED = """(() => {
  const plot = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
  return !!plot && !!plot.data && document.querySelectorAll('.js-plotly-plot .main-svg').length > 0;
})()"""


def _free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _Log:
    """Collects the server's output in a thread; notes when serve says it is ready."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self.ready = threading.Event()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line.rstrip())
            if "collsweep dashboard: ready at" in line:
                self.ready.set()


@pytest.fixture(scope="module")
def server(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m dashboard.serve` on a free port against a copy of the demo store, with a
    workload reported on its first run; its base URL."""
    path = tmp_path_factory.mktemp("served") / demo_store.name
    shutil.copyfile(demo_store, path)
    report_workload(path, RUN_A, workload_from_json(WORKLOAD))
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dashboard.serve", "--store", str(path), "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    log = _Log(proc.stdout)
    try:
        if not log.ready.wait(STARTUP_S):
            pytest.fail("the dashboard did not start:\n" + "\n".join(log.lines[-30:]))
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


WIDTH, HEIGHT = 1400, 1800  # the tab's CSS pixels unless a test asks for another width


def set_width(page: Page, width: int) -> None:
    """Make the tab `width` CSS pixels wide (HEIGHT high, no scaling, not mobile)."""
    page.call(
        "Emulation.setDeviceMetricsOverride",
        width=width,
        height=HEIGHT,
        deviceScaleFactor=1,
        mobile=False,
    )


@contextlib.contextmanager
def width_of(page: Page, width: int) -> Iterator[None]:
    """The tab at `width` px for the block, back at WIDTH afterwards."""
    set_width(page, width)
    try:
        yield
    finally:
        set_width(page, WIDTH)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    """One headless Chromium tab, WIDTH x HEIGHT CSS pixels."""
    with Browser(tmp_path_factory.mktemp("chromium-profile")) as browser:
        tab = browser.new_page()
        set_width(tab, WIDTH)
        yield tab


def load(page: Page, url: str, plotted: bool = True) -> None:
    """Open ``url`` and wait until the script run finished (and a Plotly chart is drawn)."""
    page.evaluate("window.collsweepOldDocument = true")
    page.navigate(url)
    page.wait_for("!window.collsweepOldDocument", 60, "the new document")
    page.wait_for(IDLE, 60, "the script run to finish")
    if plotted:
        page.wait_for(PLOTTED, 60, "a Plotly chart")


def text(page: Page, selector: str = "body") -> str:
    """The visible text of the first element matching ``selector``."""
    return page.evaluate(f"document.querySelector({selector!r})?.innerText || ''")


SETTLED = "document.getAnimations().every(a => a.playState !== 'running')"


def shoot(page: Page, folder: Path, name: str) -> Path:
    """A screenshot once the sidebar's and charts' transitions have ended, also copied to
    $COLLSWEEP_E2E_SHOTS when set."""
    page.wait_for(SETTLED, 30, "the transitions to end")
    shot = page.screenshot(folder / f"{name}.png")
    keep = os.environ.get("COLLSWEEP_E2E_SHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
    return shot


def test_curves_deep_link_draws_measured_and_predicted(server, page, tmp_path) -> None:
    """A shared /curves link opens that view: dashed predictions, crossovers, log axes,
    red badges for the oversubscribed non-power-of-two ranks, and the app's navigation."""
    load(page, f"{server}/curves?run={RUN_A}&ranks=3&metric=time")
    assert page.evaluate("location.pathname") == "/curves"
    body = text(page)
    assert "Page not found" not in body
    assert "not_oversubscribed violated" in body and "Not a clean test of the model" in body
    nav = text(page, '[data-testid="stSidebarNav"]')
    titles = ["Verdict", "Runs", "Curves", "Crossovers", "Assumptions", "Override impact"]
    positions = [nav.find(title) for title in titles]
    assert -1 not in positions and positions == sorted(positions), nav
    assert "Modular lab" in nav
    plot = "document.querySelector('.js-plotly-plot')"
    dashed = page.evaluate(
        f"{plot}.data.filter(t => t.line && t.line.dash === 'longdashdot').length"
    )
    assert dashed == len(synthetic.ALGORITHMS)  # the autotuned mpi: its lower bound
    kinds = page.evaluate(
        f"{plot}.data.filter(t => t.meta && t.meta.role === 'crossover').map(t => t.meta.kind)"
    )
    assert sorted(kinds) == ["measured", "predicted"]
    assert page.evaluate(f"[{plot}.layout.xaxis.type, {plot}.layout.yaxis.type]") == ["log", "log"]
    legend = page.evaluate("document.querySelector('.js-plotly-plot .legend').textContent")
    assert "ring" in legend and "(model)" not in legend and "measured crossover" in legend
    shot = shoot(page, tmp_path, "curves")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000


def test_the_curves_plot_area_is_large_at_1280_px(server, page, tmp_path) -> None:
    """At 1280 px wide the plot area itself (axes only, legend excluded) is at least 700 x 450
    px: the legend sits below the plot, one entry per algorithm."""
    with width_of(page, 1280):
        load(page, f"{server}/curves?run={RUN_A}&ranks=3&metric=time")
        box = page.evaluate(
            "(() => { const r = document.querySelector('.js-plotly-plot .nsewdrag')"
            ".getBoundingClientRect(); return [r.width, r.height]; })()"
        )
        shoot(page, tmp_path, "curves-1280")
    assert box[0] >= 700 and box[1] >= 450, box


def test_changing_the_metric_rewrites_the_url(server, page) -> None:
    """Clicking 'algbw' reruns the page, redraws in GB/s and puts metric=algbw in the URL."""
    load(page, f"{server}/curves?run={RUN_A}&ranks=2")
    page.evaluate(
        "[...document.querySelectorAll('[data-testid=\"stRadio\"] label')]"
        ".find(l => l.innerText.trim() === 'algbw').click()"
    )
    page.wait_for("location.search.includes('metric=algbw')", 30, "metric=algbw in the URL")
    page.wait_for(IDLE, 60)
    title = "document.querySelector('.js-plotly-plot').layout.yaxis.title.text"
    page.wait_for(f"({title} || '').startsWith('Algorithm bandwidth')", 30, "the GB/s axis")
    assert f"run={RUN_A}" in page.evaluate("location.search")


def test_sql_box_refuses_reading_files(server, page) -> None:
    """read_csv('/etc/hostname') from the URL runs only when asked, then shows the refusal,
    not the file."""
    sql = urllib.parse.quote("SELECT * FROM read_csv('/etc/hostname')")
    load(page, f"{server}/sql?q={sql}", plotted=False)
    assert "opening a link never runs its SQL" in text(page, '[data-testid="stMain"]')
    button = "[...document.querySelectorAll('button')].find(b => b.innerText.includes('Run query'))"
    page.wait_for(f"!!{button}", 30, "the Run query button")
    page.evaluate(f"{button}.click()")
    page.wait_for("document.body.innerText.includes('Query failed')", 30, "the refusal")
    alerts = text(page, '[data-testid="stMain"]')
    assert "Query failed" in alerts and "file system operations are disabled" in alerts
    assert socket.gethostname() not in text(page, '[data-testid="stMain"] [data-testid="stAlert"]')


EVERY_PAGE = (
    ("", "", True),  # the Verdict, the default page, lives at the root
    ("runs", "", False),
    ("curves", f"?run={RUN_A}&ranks=2", True),
    ("crossovers", f"?run={RUN_A}", True),
    ("assumptions", f"?run={RUN_A}", False),
    ("override", f"?run={RUN_A}", True),
    ("tuning", "", False),
    ("workload", f"?run={RUN_A}", True),
    ("model-fit", f"?run={RUN_A}", True),
    ("compare", f"?a={RUN_A}&b={RUN_B}", True),
    ("sql", "", False),
    ("modular-lab", "", True),
    ("scale", "", False),
    ("placements", f"?runs={RUN_A}&runs={RUN_B}", True),
    ("parameters", f"?run={RUN_A}", False),
)


# Every chart drawn at its container's width (after a resize, Streamlit redraws each chart)
RESIZED = """[...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(c => {
  const plot = c.querySelector('.js-plotly-plot');
  return !plot || !plot._fullLayout || Math.abs(plot._fullLayout.width - c.clientWidth) < 2;
})"""
# What overlaps or is cut on the page, each as a line: a chart's tick labels running into each
# other on one axis, its annotations on top of each other, and text wider than its box (a
# title, card, tab or button label cut or hidden behind an ellipsis).
FLAWS = """(() => {
  const flaws = [];
  const hit = (a, b) => a.width > 0 && b.width > 0 && a.left < b.right - 1 && b.left < a.right - 1
    && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  document.querySelectorAll('.js-plotly-plot').forEach((plot, n) => {
    for (const axis of plot.querySelectorAll('.xaxislayer-above, .yaxislayer-above')) {
      const boxes = [...axis.querySelectorAll('text')].filter(t => t.textContent)
        .map(t => [t.textContent, t.getBoundingClientRect()]);
      for (let i = 1; i < boxes.length; i++)
        if (hit(boxes[i - 1][1], boxes[i][1]))
          flaws.push(`chart ${n}: ticks '${boxes[i - 1][0]}' and '${boxes[i][0]}' overlap`);
    }
    const notes = [...plot.querySelectorAll('.annotation')].filter(a => a.textContent)
      .map(a => [a.textContent, a.getBoundingClientRect()]);
    for (let i = 0; i < notes.length; i++)
      for (let j = i + 1; j < notes.length; j++)
        if (hit(notes[i][1], notes[j][1]))
          flaws.push(`chart ${n}: '${notes[i][0]}' and '${notes[j][0]}' overlap`);
  });
  const boxed = '[data-testid="stMain"] :is(h1, h2, h3, [data-testid="stMetric"] *, '
    + '[data-baseweb="tab"], button p)';
  document.querySelectorAll(boxed).forEach(e => {
    if (e.innerText && e.scrollWidth > e.clientWidth + 1) flaws.push(`cut: '${e.innerText}'`);
  });
  return flaws;
})()"""


def test_every_page_at_two_widths_without_an_exception(server, page, tmp_path) -> None:
    """Every page loaded once, then seen at 1280 and at 1600 px: no exception or error box,
    nothing overlapping or cut (FLAWS), and a screenshot of each (kept in the test's temporary
    folder, or $COLLSWEEP_E2E_SHOTS)."""
    flaws = []
    for name, query, plotted in EVERY_PAGE:
        set_width(page, 1280)
        load(page, f"{server}/{name}{query}", plotted=plotted)
        for width in (1280, 1600):
            set_width(page, width)
            page.wait_for(RESIZED, 30, f"the charts of {name or 'verdict'} at {width} px")
            broken = page.evaluate(
                "document.querySelectorAll('[data-testid=\"stException\"]').length"
            )
            assert broken == 0, f"{name} at {width} px shows an exception"
            assert "Traceback" not in text(page, '[data-testid="stMain"]'), name
            shot = shoot(page, tmp_path, f"{name or 'verdict'}-{width}")
            assert shot.stat().st_size > 20_000
            flaws += [f"{name or 'verdict'} at {width} px: {f}" for f in page.evaluate(FLAWS)]
    set_width(page, WIDTH)
    assert flaws == [], "\n".join(flaws)


def test_the_verdict_is_the_front_page_with_its_strip_in_view(server, page, demo_store) -> None:
    """The root URL shows the newest run's verdict; its winner strip is visible at 1280 px
    without scrolling, and its cells are the stored winners (decided, or 'tie')."""
    with width_of(page, 1280):
        load(page, f"{server}/", plotted=True)
        assert text(page, "h1") == "Verdict"
        plot = "document.querySelector('.js-plotly-plot')"
        top = page.evaluate(f"{plot}.getBoundingClientRect().top")
        assert top < 900, f"the strip starts {top} px down: below a laptop's fold"
        cells = page.evaluate(
            f"{plot}.data.filter(t => t.meta && t.meta.role === 'strip')[0].text.flat()"
        )
    winners = store.query(
        demo_store,
        "SELECT winner, decided FROM winners WHERE run_id = ? AND library = 'all'",
        [RUN_B],
    )
    decided = {short_name(w) for w, d in zip(winners.winner, winners.decided, strict=True) if d}
    shown = {c.split("<br>")[0] for c in cells if c and c != "tie"}
    assert shown == decided and ("tie" in cells) == (not winners.decided.all())


def test_the_curves_chart_starts_above_a_laptops_fold(server, page) -> None:
    """At 1280 px the Curves chart starts within the first 900 px of a provisional,
    oversubscribed view (the verdict and the assumptions' words sit below it) and its y axis
    is log, set by the medians."""
    with width_of(page, 1280):
        load(page, f"{server}/curves?run={RUN_A}&ranks=3")
        plot = "document.querySelector('.js-plotly-plot')"
        top = page.evaluate(f"{plot}.getBoundingClientRect().top")
        assert top < 900, f"the chart starts {top} px down: below a laptop's fold"
        assert page.evaluate(f"{plot}.layout.yaxis.type") == "log"
        assert "not_oversubscribed violated" in text(page)  # still said, below the chart


def test_the_runs_page_lists_the_runs(server, page) -> None:
    """/runs shows the runs of the store."""
    load(page, f"{server}/runs", plotted=False)
    page.wait_for("document.body.innerText.includes('2 runs')", 30, "the runs caption")
    assert text(page, "h1") == "Runs"


def _status(url: str, host: str) -> int:
    """The HTTP status of a GET of ``url`` sent with the given Host header."""
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(f"GET {parts.path or '/'} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        return int(sock.recv(64).split()[1])


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:{port}", 200),
        ("localhost:{port}", 200),
        ("evil.example:{port}", 403),  # a DNS-rebinding page still names its own host
        ("192.168.1.10:{port}", 403),
    ],
)
def test_requests_not_addressed_to_loopback_are_refused(server, host: str, status: int) -> None:
    """The server answers only requests whose Host header names loopback (DNS rebinding)."""
    port = urllib.parse.urlsplit(server).port
    assert _status(f"{server}/_stcore/health", host.format(port=port)) == status
    assert _status(f"{server}/", host.format(port=port)) == status


def test_no_exposure_warning_when_served_by_collsweep(server, page) -> None:
    """Served by `collsweep dashboard` (loopback, Host check), no page warns about exposure."""
    load(page, f"{server}/", plotted=False)
    assert "other machines can reach it" not in text(page)
    assert "Host check" not in text(page)


def test_app_started_by_hand_on_every_interface_warns(demo_store, tmp_path, page) -> None:
    """`streamlit run dashboard/app.py` by hand listens on every interface without the Host
    check; every page then says so and how to start it safely."""
    path = tmp_path / demo_store.name
    shutil.copyfile(demo_store, path)
    port = _free_port()
    command = [sys.executable, "-m", "streamlit", "run", str(ROOT / "dashboard/app.py")]
    options = ["--server.port", str(port), "--server.headless", "true"]
    proc = subprocess.Popen(
        [*command, *options, "--", "--store", str(path)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            try:
                if _status(f"http://127.0.0.1:{port}/_stcore/health", "127.0.0.1") == 200:
                    break
            except OSError:
                time.sleep(0.3)
        load(page, f"http://127.0.0.1:{port}/", plotted=False)
        page.wait_for("document.body.innerText.includes('other machines')", 30, "the warning")
        body = text(page)
        assert "listens on every interface" in body and "Host check" in body
        assert "collsweep dashboard" in body
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


CARD_COUNT = "document.querySelectorAll('[data-testid=\"stMetric\"]').length"
# The text of every element inside a metric card wider than its box (cut, or hidden behind
# an ellipsis), as '<data-testid>: <text>'.
CUT_TEXT = """(() => [...document.querySelectorAll('[data-testid="stMetric"] *')]
  .filter(e => e.innerText && e.scrollWidth > e.clientWidth + 1)
  .map(e => (e.closest('[data-testid]') || e).dataset.testid + ': ' + e.innerText))()"""


@pytest.mark.parametrize("width", [1280, 1600])
def test_model_fit_cards_show_their_whole_text(server, page, tmp_path, width) -> None:
    """Every metric card on the Model fit page shows its whole label and value at 1280 and
    1600 px: no text cut off behind an ellipsis."""
    with width_of(page, width):
        load(page, f"{server}/model-fit?run={RUN_A}", plotted=True)
        page.wait_for(f"{CARD_COUNT} >= 3", 30, "the fit's cards")  # may follow the chart
        cards = page.evaluate(CARD_COUNT)
        cut = page.evaluate(CUT_TEXT)
        shoot(page, tmp_path, f"model-fit-cards-{width}")
    assert cards >= 3 and cut == [], cut
