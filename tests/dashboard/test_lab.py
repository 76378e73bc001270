"""Tests for the modular lab: pure logic in dashboard/lab/logic.py and the page via AppTest."""

from __future__ import annotations

import ast
import math
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from dashboard.lab import logic as lab

PAGE = ROOT / "dashboard" / "lab" / "page.py"


# --------------------------------------------------------------------------- pure logic


def test_orbit_m8_a1_visits_all_residues_in_order() -> None:
    """a = 1 walks 0..7 and closes after eight steps."""
    state = lab.run_to_close(lab.new_orbit(8, 1))
    assert state.visited == tuple(range(8))
    assert state.steps == 8 == lab.period(8, 1)
    assert state.closed and state.current == 0


def test_orbit_m8_a4_has_period_two() -> None:
    """a = 4 only reaches {0, 4}."""
    first = lab.step(lab.new_orbit(8, 4))
    assert first.visited == (0, 4) and first.steps == 1 and not first.closed
    second = lab.step(first)
    assert second.closed and second.steps == 2 == lab.period(8, 4)
    assert lab.step(second) == second


@pytest.mark.parametrize(("m", "a"), [(1, 0), (1, 5), (8, 0), (8, 6), (12, 9), (360, 7), (9, -3)])
def test_period_matches_simulation(m: int, a: int) -> None:
    """The closed orbit length equals m // gcd(m, a) and visits that many residues."""
    state = lab.run_to_close(lab.new_orbit(m, a))
    assert state.steps == lab.period(m, a) == m // math.gcd(m, a)
    assert len(state.visited) == state.steps == len(set(state.visited))


def test_period_rejects_bad_modulus() -> None:
    """m < 1 is not a modulus."""
    with pytest.raises(ValueError):
        lab.period(0, 1)
    with pytest.raises(ValueError):
        lab.new_orbit(-3, 1)


def test_judge_none_while_open_and_verdicts_when_closed() -> None:
    """judge returns None until closed, then says whether the prediction held."""
    open_state = lab.step(lab.new_orbit(8, 4))
    assert lab.judge(lab.Prediction("period", 2), open_state) is None
    closed = lab.run_to_close(open_state)
    assert lab.prediction_holds(lab.Prediction("period", 2), closed) is True
    assert "held" in lab.judge(lab.Prediction("period", 2), closed)
    assert "did not hold" in lab.judge(lab.Prediction("all"), closed)
    assert "did not hold" in lab.judge(lab.Prediction("period", 4), closed)
    full = lab.run_to_close(lab.new_orbit(8, 3))
    assert lab.prediction_holds(lab.Prediction("all"), full) is True


@pytest.mark.parametrize(
    ("text", "expected"), [("8", 8), (" 12 ", 12), ("1", 1), ("360", lab.MAX_MODULUS)]
)
def test_parse_modulus_valid(text: str, expected: int) -> None:
    """Whole numbers from 1 to MAX_MODULUS are accepted."""
    assert lab.parse_modulus(text) == lab.Parsed(expected, None)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("0", "at least 1"),
        ("-3", "at least 1"),
        ("abc", "whole number"),
        ("1.5", "whole number"),
        ("", "whole number"),
        (None, "whole number"),
        (str(10**9), f"at most {lab.MAX_MODULUS}"),
        ("9" * 5000, "whole number"),
    ],
)
def test_parse_modulus_errors(text: str | None, fragment: str) -> None:
    """Invalid moduli give a readable message, never an exception."""
    parsed = lab.parse_modulus(text)
    assert parsed.value is None and not parsed.ok
    assert fragment in parsed.error


def test_parse_step() -> None:
    """Steps are whole numbers, negative allowed, magnitude capped."""
    assert lab.parse_step("4").value == 4
    assert lab.parse_step("-1").value == -1
    assert "whole number" in lab.parse_step("1.5").error
    assert "between" in lab.parse_step(str(10**12)).error


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(None, 0.3), ("", 0.3), ("0", 0.0), ("0.05", 0.05), ("x", 0.3), ("99", 2.0), ("nan", 0.3)],
)
def test_play_delay(raw: str | None, expected: float) -> None:
    """The Play delay defaults to 0.3 s and is clamped to [0, 2]."""
    assert lab.play_delay(raw) == pytest.approx(expected)


def test_circle_xy_starts_at_top_and_is_unit() -> None:
    """Residue 0 sits at the top; all points lie on the unit circle."""
    pts = lab.circle_xy(8)
    assert pts[0] == pytest.approx((0.0, 1.0))
    assert pts[2] == pytest.approx((1.0, 0.0))
    assert all(math.hypot(x, y) == pytest.approx(1.0) for x, y in pts)


def test_partner_rounds_p8() -> None:
    """p = 8: partners are rank XOR 2**k and coverage doubles 2, 4, 8."""
    rounds = lab.partner_rounds(8)
    assert len(rounds) == 3
    assert [rounds[k][0].partner for k in range(3)] == [1, 2, 4]
    for k, exchanges in enumerate(rounds):
        size = 2 ** (k + 1)
        for e in exchanges:
            assert e.partner == e.rank ^ (1 << k)
            start = e.rank - e.rank % size
            assert e.covered == frozenset(range(start, start + size))
    assert all(e.covered == frozenset(range(8)) for e in rounds[-1])


@pytest.mark.parametrize("p", [1, 2, 4, 16, 32, 64])
def test_partner_rounds_log2_rounds(p: int) -> None:
    """log2 p rounds suffice for every rank to cover all p ranks."""
    rounds = lab.partner_rounds(p)
    assert len(rounds) == int(math.log2(p))
    if rounds:
        assert all(len(e.covered) == p for e in rounds[-1])


@pytest.mark.parametrize("p", [0, -4, 3, 6, 12, 128, 2.0, True])
def test_partner_rounds_rejects_bad_p(p: object) -> None:
    """Non powers of two, non-integers and p above MAX_RANKS are rejected."""
    with pytest.raises(ValueError):
        lab.partner_rounds(p)  # type: ignore[arg-type]


def test_format_ranks() -> None:
    """Runs of three or more compress to ranges."""
    assert lab.format_ranks({0, 1}) == "{0, 1}"
    assert lab.format_ranks(frozenset(range(8, 16))) == "{8..15}"
    assert lab.format_ranks({0, 1, 2, 5}) == "{0..2, 5}"


def test_lab_module_has_no_streamlit_or_mpi() -> None:
    """The logic module stays pure: no Streamlit and no mpi4py imports."""
    assert not {"streamlit", "mpi4py"} & _imported_roots(Path(lab.__file__))
    assert "mpi4py" not in _imported_roots(PAGE)


def _imported_roots(path: Path) -> set[str]:
    """Top-level package names imported anywhere in the file at ``path``."""
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.split(".")[0])
    return roots


# --------------------------------------------------------------------------- page


@pytest.fixture
def app() -> AppTest:
    """The lab page with Play's sleep disabled, after a first run."""
    at = AppTest.from_file(str(PAGE), default_timeout=30)
    at.session_state["lab_play_delay"] = 0.0
    return at.run()


def _set_orbit(at: AppTest, m: str, a: str) -> None:
    """Reset, then type m and a (one run per interaction, as in a browser)."""
    at.button(key="lab_reset").click().run()
    at.text_input(key="lab_m").input(m).run()
    at.text_input(key="lab_a").input(a).run()


def _predict(at: AppTest, kind: str, k: int = 2) -> None:
    """Choose a prediction before stepping."""
    at.radio(key="lab_pred_kind").set_value(kind)
    at.number_input(key="lab_pred_k").set_value(k)
    at.run()


def _metric(at: AppTest, label: str) -> str:
    """Value of the metric with the given label."""
    return next(m.value for m in at.metric if m.label == label)


def _markdown(at: AppTest) -> str:
    """All markdown on the page, joined."""
    return "\n".join(md.value for md in at.markdown)


def test_page_states_orbit_is_not_the_partner_protocol(app: AppTest) -> None:
    """The page says plainly that the lab is addition mod m, not XOR or a tree."""
    assert not app.exception
    note = " ".join(i.value for i in app.info)
    assert "addition modulo m" in note
    assert "not the XOR partner schedule" in note and "not a tree simulation" in note
    assert "partner protocol" in note
    assert not app.error


def test_exercise_m8_a1_play_visits_all(app: AppTest) -> None:
    """Reset, m=8 a=1, predict all residues, Play: eight residues, period 8, held."""
    _set_orbit(app, "8", "1")
    _predict(app, "all")
    app.button(key="lab_play").click().run()
    assert not app.exception
    assert app.session_state["lab_orbit"].visited == tuple(range(8))
    assert _metric(app, "Steps taken") == "8"
    assert _metric(app, "Residues visited") == "8 of 8"
    assert "0 → 1 → 2 → 3 → 4 → 5 → 6 → 7" in _markdown(app)
    assert "= **8**" in _markdown(app)
    assert len(app.success) == 1 and "held" in app.success[0].value
    assert not app.warning and not app.error
    assert app.session_state["lab_playing"] is False
    assert app.button(key="lab_play").disabled and app.button(key="lab_step").disabled


def test_exercise_m8_a1_step_until_closed(app: AppTest) -> None:
    """The same exercise by Step: no verdict until the eighth step closes the orbit."""
    _set_orbit(app, "8", "1")
    _predict(app, "all")
    for expected in range(1, 8):
        app.button(key="lab_step").click().run()
        assert _metric(app, "Steps taken") == str(expected)
        assert not app.success and not app.warning
        assert app.radio(key="lab_pred_kind").disabled
    app.button(key="lab_step").click().run()
    assert set(app.session_state["lab_orbit"].visited) == set(range(8))
    assert "held" in app.success[0].value


def test_exercise_m8_a4_step_period_two(app: AppTest) -> None:
    """Reset, m=8 a=4, predict period 2, Step: {0, 4}, period 2, held."""
    _set_orbit(app, "8", "4")
    _predict(app, "period", 2)
    app.button(key="lab_step").click().run()
    assert not app.success
    app.button(key="lab_step").click().run()
    assert not app.exception
    assert set(app.session_state["lab_orbit"].visited) == {0, 4}
    assert "Visited in order: 0 → 4" in _markdown(app)
    assert "8 / gcd(8, 4) = **2**" in _markdown(app)
    assert "held" in app.success[0].value and "period is 2" in app.success[0].value


def test_exercise_m8_a4_play(app: AppTest) -> None:
    """Play with a real (tiny) sleep also follows st.rerun to the closed orbit."""
    app.session_state["lab_play_delay"] = 0.01
    _set_orbit(app, "8", "4")
    _predict(app, "period", 2)
    app.button(key="lab_play").click().run()
    assert _metric(app, "Steps taken") == "2"
    assert "held" in app.success[0].value


@pytest.mark.parametrize(("kind", "k"), [("all", 2), ("period", 4)])
def test_wrong_prediction_did_not_hold(app: AppTest, kind: str, k: int) -> None:
    """m=8 a=4 with 'all residues' or 'period 4' is reported as not holding."""
    _set_orbit(app, "8", "4")
    _predict(app, kind, k)
    app.button(key="lab_play").click().run()
    assert not app.success
    assert len(app.warning) == 1 and "did not hold" in app.warning[0].value
    assert "2 of 8 residues" in app.warning[0].value


def test_play_one_frame_per_run_and_pause(app: AppTest) -> None:
    """Without auto-rerun each run is one Play frame; Pause stops the frames."""
    app.session_state["lab_play_autorerun"] = False
    _set_orbit(app, "8", "1")
    app.button(key="lab_play").click().run()
    assert _metric(app, "Steps taken") == "1"
    app.run()
    assert _metric(app, "Steps taken") == "2"
    assert not app.button(key="lab_pause").disabled
    app.button(key="lab_pause").click().run()
    app.run()
    assert _metric(app, "Steps taken") == "2"
    assert app.session_state["lab_playing"] is False
    app.button(key="lab_step").click().run()
    assert _metric(app, "Steps taken") == "3"


def test_changing_m_or_a_resets_orbit(app: AppTest) -> None:
    """Editing a after some steps restarts at residue 0 and unlocks the prediction."""
    _set_orbit(app, "8", "1")
    app.button(key="lab_step").click().run()
    app.button(key="lab_step").click().run()
    assert _metric(app, "Steps taken") == "2"
    app.text_input(key="lab_a").input("3").run()
    assert _metric(app, "Steps taken") == "0"
    assert app.session_state["lab_orbit"].visited == (0,)
    assert not app.radio(key="lab_pred_kind").disabled


def test_reset_returns_to_zero(app: AppTest) -> None:
    """Reset keeps m and a but restarts the orbit."""
    _set_orbit(app, "8", "1")
    app.button(key="lab_play").click().run()
    app.button(key="lab_reset").click().run()
    assert _metric(app, "Steps taken") == "0"
    assert app.text_input(key="lab_m").value == "8"
    assert not app.success


def test_partner_table_p8(app: AppTest) -> None:
    """p=8: round 0 pairs 0<->1, round 1 0<->2, round 2 0<->4; covers 2, 4, 8."""
    app.selectbox(key="lab_p").set_value(8).run()
    tables = [df.value for df in app.dataframe]
    assert len(tables) == 3
    for k, table in enumerate(tables):
        assert list(table["partner"]) == [r ^ (1 << k) for r in range(8)]
        assert set(table["covered count"]) == {2 ** (k + 1)}
    assert tables[0].loc[0, "partner"] == 1 and tables[0].loc[0, "covers after round"] == "{0, 1}"
    assert tables[1].loc[0, "partner"] == 2 and tables[1].loc[0, "covers after round"] == "{0..3}"
    assert tables[2].loc[0, "partner"] == 4 and tables[2].loc[0, "covers after round"] == "{0..7}"


def test_partner_table_p32_has_five_rounds(app: AppTest) -> None:
    """p=32 gives log2 32 = 5 tables, the last covering all 32 ranks."""
    app.selectbox(key="lab_p").set_value(32).run()
    assert len(app.dataframe) == 5
    assert set(app.dataframe[4].value["covered count"]) == {32}


@pytest.mark.parametrize(
    ("key", "text", "fragment"),
    [
        ("lab_m", "0", "at least 1"),
        ("lab_m", "-3", "at least 1"),
        ("lab_m", "abc", "whole number"),
        ("lab_a", "1.5", "whole number"),
        ("lab_m", str(10**9), f"at most {lab.MAX_MODULUS}"),
    ],
)
def test_invalid_inputs_show_error(app: AppTest, key: str, text: str, fragment: str) -> None:
    """Bad m or a shows st.error, disables Step/Play, and never raises."""
    app.text_input(key=key).input(text).run()
    assert not app.exception
    assert len(app.error) == 1 and fragment in app.error[0].value
    assert app.button(key="lab_step").disabled and app.button(key="lab_play").disabled
    assert len(app.dataframe) == 3  # the protocol panel still renders


def test_invalid_input_then_fix_keeps_prediction(app: AppTest) -> None:
    """Fixing a bad input brings the orbit back; the prediction widget keeps its value."""
    _predict(app, "period", 5)
    app.text_input(key="lab_m").input("abc").run()
    app.text_input(key="lab_m").input("10").run()
    assert not app.error and not app.exception
    assert app.radio(key="lab_pred_kind").value == "period"
    assert app.number_input(key="lab_pred_k").value == 5


@pytest.mark.slow
def test_page_does_not_import_mpi4py() -> None:
    """Rendering the page in a fresh interpreter leaves mpi4py unimported."""
    code = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({str(PAGE)!r}, default_timeout=30).run()\n"
        "assert not at.exception, at.exception\n"
        "print(any(n.split('.')[0] == 'mpi4py' for n in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "False"
