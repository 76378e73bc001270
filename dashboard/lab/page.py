"""Modular lab page: an additive orbit modulo m beside the real recursive-doubling protocol.

Runs on its own (``streamlit run dashboard/lab/page.py``) or as a page of an
``st.navigation`` app. Play advances one step per script run: the script sleeps
briefly and calls ``st.rerun()`` while playing and not closed. Session keys that
tests may preset before the first run:

* ``lab_play_delay`` (float seconds, default from ``COLLSWEEP_LAB_PLAY_DELAY`` or 0.3);
* ``lab_play_autorerun`` (bool, default True). When False the page never calls
  ``st.rerun()``, so each ``AppTest.run()`` advances exactly one Play frame.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

try:
    from dashboard.lab import logic as lab
except ModuleNotFoundError:  # a checkout that is not pip-installed: add the repo root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from dashboard.lab import logic as lab

KEY_M = "lab_m"
KEY_A = "lab_a"
KEY_PRED_KIND = "lab_pred_kind"
KEY_PRED_K = "lab_pred_k"
KEY_P = "lab_p"
KEY_ORBIT = "lab_orbit"
KEY_PREDICTION = "lab_prediction"
KEY_PLAYING = "lab_playing"
KEY_DELAY = "lab_play_delay"
KEY_AUTORERUN = "lab_play_autorerun"

PRED_LABELS = {"all": "All m residues appear", "period": "The period is k"}
RANK_CHOICES = [2, 4, 8, 16, 32]
LABEL_LIMIT = 48  # draw residue numbers on the circle up to this m


def _init_state() -> None:
    """Seed session defaults without overwriting values already set (e.g. by tests)."""
    ss = st.session_state
    ss.setdefault(KEY_M, "12")
    ss.setdefault(KEY_A, "3")
    ss.setdefault(KEY_PRED_KIND, "all")
    ss.setdefault(KEY_PRED_K, 2)
    ss.setdefault(KEY_P, 8)
    ss.setdefault(KEY_ORBIT, None)
    ss.setdefault(KEY_PREDICTION, None)
    ss.setdefault(KEY_PLAYING, False)
    ss.setdefault(KEY_DELAY, lab.play_delay(os.environ.get(lab.PLAY_DELAY_ENV)))
    ss.setdefault(KEY_AUTORERUN, True)


def _parsed_inputs() -> tuple[int, int] | None:
    """Current (m, a) from the text inputs, or None when either is invalid."""
    m = lab.parse_modulus(st.session_state.get(KEY_M))
    a = lab.parse_step(st.session_state.get(KEY_A))
    if m.value is None or a.value is None:
        return None
    return m.value, a.value


def _restart(m: int, a: int) -> lab.OrbitState:
    """Put a fresh orbit in session state, stop playing and unlock the prediction."""
    orbit = lab.new_orbit(m, a)
    st.session_state[KEY_ORBIT] = orbit
    st.session_state[KEY_PREDICTION] = None
    st.session_state[KEY_PLAYING] = False
    return orbit


def _synced_orbit() -> lab.OrbitState | None:
    """Orbit matching the current inputs; a change of m or a restarts it."""
    inputs = _parsed_inputs()
    if inputs is None:
        st.session_state[KEY_PLAYING] = False
        return None
    orbit = st.session_state.get(KEY_ORBIT)
    if orbit is None or (orbit.m, orbit.a) != inputs:
        orbit = _restart(*inputs)
    return orbit


def _advance() -> None:
    """Lock the prediction on the first step, then add a once."""
    orbit = _synced_orbit()
    if orbit is None or orbit.closed:
        return
    if st.session_state[KEY_PREDICTION] is None:
        kind = st.session_state[KEY_PRED_KIND]
        k = int(st.session_state[KEY_PRED_K]) if kind == "period" else None
        st.session_state[KEY_PREDICTION] = lab.Prediction(kind, k)
    st.session_state[KEY_ORBIT] = lab.step(orbit)


def _on_reset() -> None:
    """Reset button: back to residue 0, keeping m, a and the prediction inputs."""
    inputs = _parsed_inputs()
    st.session_state[KEY_PLAYING] = False
    if inputs is not None:
        _restart(*inputs)


def _on_step() -> None:
    """Step button: pause, then advance once."""
    st.session_state[KEY_PLAYING] = False
    _advance()


def _on_play() -> None:
    """Play button: start advancing one step per run (the first run ticks at once).

    Syncing first means an m or a edited in the same interaction restarts the
    orbit here, not in the body (which would also stop playing).
    """
    if _synced_orbit() is not None:
        st.session_state[KEY_PLAYING] = True


def _on_pause() -> None:
    """Pause button: stop advancing."""
    st.session_state[KEY_PLAYING] = False


def _input_controls() -> lab.OrbitState | None:
    """Render m and a; show errors for invalid input and return the synced orbit."""
    c_m, c_a = st.columns(2)
    c_m.text_input("Modulus m", key=KEY_M, help=f"Whole number from 1 to {lab.MAX_MODULUS}.")
    c_a.text_input("Step a", key=KEY_A, help="Whole number; each step adds a modulo m.")
    for parsed in (
        lab.parse_modulus(st.session_state[KEY_M]),
        lab.parse_step(st.session_state[KEY_A]),
    ):
        if parsed.error:
            st.error(parsed.error)
    return _synced_orbit()


def _prediction_controls(orbit: lab.OrbitState | None) -> None:
    """Prediction radio and k, locked once the first step has been taken.

    Rendered even when m or a is invalid so Streamlit keeps the widget values.
    """
    locked = st.session_state[KEY_PREDICTION] is not None
    st.radio(
        "Your prediction (before playing)",
        options=list(PRED_LABELS),
        format_func=PRED_LABELS.__getitem__,
        key=KEY_PRED_KIND,
        horizontal=True,
        disabled=locked,
    )
    st.number_input(
        "k (for 'The period is k')",
        min_value=1,
        max_value=lab.MAX_MODULUS,
        step=1,
        key=KEY_PRED_K,
        disabled=locked,
    )
    if locked:
        pred = st.session_state[KEY_PREDICTION]
        m = orbit.m if orbit else "m"
        st.caption(f"Prediction locked at the first step: {pred.describe(m)}. Reset to change it.")


def _buttons(orbit: lab.OrbitState | None) -> None:
    """Reset, Step, Play and Pause (Step and Play disabled without a running orbit)."""
    playing = st.session_state[KEY_PLAYING]
    done = orbit is None or orbit.closed
    cols = st.columns(4)
    cols[0].button("Reset", key="lab_reset", on_click=_on_reset)
    cols[1].button("Step", key="lab_step", on_click=_on_step, disabled=done)
    cols[2].button("Play", key="lab_play", on_click=_on_play, disabled=done or playing)
    cols[3].button("Pause", key="lab_pause", on_click=_on_pause, disabled=not playing)


def _orbit_figure(orbit: lab.OrbitState) -> go.Figure:
    """Circle of m positions with visited residues highlighted and the path in order."""
    xy = lab.circle_xy(orbit.m)
    path = list(orbit.visited) + ([0] if orbit.closed else [])
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[x for x, _ in xy],
            y=[y for _, y in xy],
            mode="markers+text" if orbit.m <= LABEL_LIMIT else "markers",
            text=[str(j) for j in range(orbit.m)],
            textposition="top center",
            marker={"size": 9, "color": "lightgrey"},
            name="residues",
            hoverinfo="text",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[xy[r][0] for r in path],
            y=[xy[r][1] for r in path],
            mode="lines+markers",
            marker={"size": 13, "color": "crimson"},
            line={"color": "crimson", "width": 2},
            name="visited (path in order)",
            hovertext=[f"step {i}: residue {r}" for i, r in enumerate(path)],
            hoverinfo="text",
        )
    )
    cx, cy = xy[orbit.current]
    fig.add_trace(
        go.Scatter(
            x=[cx],
            y=[cy],
            mode="markers",
            marker={"size": 22, "color": "rgba(0,0,0,0)", "line": {"color": "black", "width": 3}},
            name="current",
            hoverinfo="skip",
        )
    )
    fig.update_xaxes(visible=False, range=[-1.3, 1.3])
    fig.update_yaxes(visible=False, range=[-1.3, 1.3], scaleanchor="x", scaleratio=1)
    fig.update_layout(
        height=440,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": -0.02},
        title=f"0, a, 2a, ... mod {orbit.m} with a = {orbit.a}",
    )
    return fig


def _orbit_status(orbit: lab.OrbitState) -> None:
    """Step count, visited list and, once closed, the period and the verdict."""
    c_steps, c_seen = st.columns(2)
    c_steps.metric("Steps taken", orbit.steps)
    c_seen.metric("Residues visited", f"{len(orbit.visited)} of {orbit.m}")
    st.markdown("Visited in order: " + " → ".join(str(r) for r in orbit.visited))
    if not orbit.closed:
        return
    st.markdown(
        f"Closed: step {orbit.steps} returned to 0. Period = m / gcd(m, a) = "
        f"{orbit.m} / gcd({orbit.m}, {orbit.a}) = **{lab.period(orbit.m, orbit.a)}**."
    )
    prediction = st.session_state[KEY_PREDICTION]
    if prediction is None:
        return
    verdict = lab.judge(prediction, orbit)
    if lab.prediction_holds(prediction, orbit):
        st.success(verdict)
    else:
        st.warning(verdict)


def _orbit_panel() -> bool:
    """The additive-orbit exercise; returns True when Play should schedule another frame."""
    st.subheader("Additive orbit modulo m")
    orbit = _input_controls()
    if orbit is not None and st.session_state[KEY_PLAYING]:
        _advance()
        orbit = st.session_state[KEY_ORBIT]
    if orbit is None or orbit.closed:
        st.session_state[KEY_PLAYING] = False
    _prediction_controls(orbit)
    _buttons(orbit)
    if orbit is None:
        return False
    st.plotly_chart(_orbit_figure(orbit), key="lab_circle")
    _orbit_status(orbit)
    return bool(st.session_state[KEY_PLAYING])


def _round_table(exchanges: list[lab.Exchange]) -> pd.DataFrame:
    """One round as a table: rank, partner, covered ranks and their count."""
    return pd.DataFrame(
        {
            "rank": [e.rank for e in exchanges],
            "partner": [e.partner for e in exchanges],
            "covers after round": [lab.format_ranks(e.covered) for e in exchanges],
            "covered count": [len(e.covered) for e in exchanges],
        }
    )


def _protocol_panel() -> None:
    """The real recursive-doubling partner protocol for a chosen power-of-two p."""
    st.subheader("Recursive doubling: the partner protocol")
    p = st.selectbox("Ranks p (power of two)", RANK_CHOICES, key=KEY_P)
    rounds = lab.partner_rounds(p)
    st.markdown(
        f"In round k every rank r exchanges with **r XOR 2^k** and combines data, so the "
        f"set of ranks it covers doubles: after {len(rounds)} = log2 {p} rounds every rank "
        f"covers all {p}."
    )
    for k, exchanges in enumerate(rounds):
        st.markdown(f"**Round {k}**: partner = rank XOR {1 << k}; each rank covers {2 << k}.")
        st.dataframe(_round_table(exchanges), hide_index=True)


def main() -> None:
    """Render the page; while playing, sleep briefly and rerun for the next frame."""
    _init_state()
    st.title("Modular lab")
    st.info(lab.ORBIT_VS_PROTOCOL_NOTE)
    left, right = st.columns(2, gap="large")
    with left:
        keep_playing = _orbit_panel()
    with right:
        _protocol_panel()
    if keep_playing and st.session_state[KEY_AUTORERUN]:
        time.sleep(lab.play_delay(str(st.session_state[KEY_DELAY])))
        st.rerun()


main()
