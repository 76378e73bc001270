"""The store's forward migrations from version 10 on (runners.store.migrations lists them all,
in order): released entries are never edited; a new one is appended here."""

from __future__ import annotations

# Schema 10: workloads (issue 31). The workload each report priced (its JSON, so readers need
# no file), each policy's job total against the default, each call's part of it, and the
# replayed job times. And a run's name and tags (issue 32; runners.domain.sweep.run_labels).
_V10 = [
    "ALTER TABLE runs ADD COLUMN name VARCHAR",
    "ALTER TABLE runs ADD COLUMN tags JSON",
    """CREATE TABLE workloads (
        run_id VARCHAR NOT NULL,
        workload VARCHAR NOT NULL,
        body JSON NOT NULL,
        notes JSON,
        reported_at TIMESTAMP
    )""",
    """CREATE TABLE workload_policies (
        run_id VARCHAR NOT NULL,
        workload VARCHAR NOT NULL,
        policy VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        library VARCHAR,
        total_s DOUBLE,
        interval_low_s DOUBLE,
        interval_high_s DOUBLE,
        points_sum_s DOUBLE,
        default_total_s DOUBLE,
        predicted_s DOUBLE,
        covered_calls INTEGER,
        priced_calls INTEGER,
        faster_calls INTEGER,
        slower_calls INTEGER,
        gain_s DOUBLE,
        loss_s DOUBLE,
        gain_share DOUBLE,
        loss_share DOUBLE,
        ratio DOUBLE,
        ratio_low DOUBLE,
        ratio_high DOUBLE,
        verdict VARCHAR
    )""",
    """CREATE TABLE workload_calls (
        run_id VARCHAR NOT NULL,
        workload VARCHAR NOT NULL,
        policy VARCHAR NOT NULL,
        call_index INTEGER NOT NULL,
        collective VARCHAR NOT NULL,
        bytes BIGINT NOT NULL,
        dtype VARCHAR NOT NULL,
        op VARCHAR NOT NULL,
        ranks INTEGER NOT NULL,
        calls BIGINT NOT NULL,
        algorithm VARCHAR NOT NULL,
        own BOOLEAN,
        median_s DOUBLE,
        time_s DOUBLE,
        default_time_s DOUBLE,
        delta_s DOUBLE,
        share_of_default DOUBLE,
        ratio DOUBLE,
        ratio_low DOUBLE,
        ratio_high DOUBLE,
        verdict VARCHAR
    )""",
    """CREATE TABLE replays (
        run_id VARCHAR NOT NULL,
        workload VARCHAR NOT NULL,
        replay_id VARCHAR,
        policy VARCHAR NOT NULL,
        ranks INTEGER NOT NULL,
        launch INTEGER NOT NULL,
        repetition INTEGER NOT NULL,
        replayed_s DOUBLE NOT NULL,
        sequenced_s DOUBLE,
        isolated_s DOUBLE,
        library VARCHAR,
        replayed_at TIMESTAMP
    )""",
    # Intervals that hold over time (issue 33): each point keeps the interval its launches
    # gave, and its stored interval is at least as wide as the host's run-to-run history
    # (runners.domain.verdict.history); the run records the floor it used per group size.
    "ALTER TABLE points ADD COLUMN launch_low_s DOUBLE",
    "ALTER TABLE points ADD COLUMN launch_high_s DOUBLE",
    "ALTER TABLE runs ADD COLUMN interval_history JSON",
]

# One speed-up (issue 45): each winners row holds the cell's library default and the winner's
# speed-up over it, paired over launches, with its interval (runners.domain.verdict.speedup);
# rows analysed before have NULLs until the run is analysed again.
_V11 = [
    "ALTER TABLE winners ADD COLUMN default_algorithm VARCHAR",
    "ALTER TABLE winners ADD COLUMN speedup DOUBLE",
    "ALTER TABLE winners ADD COLUMN speedup_low DOUBLE",
    "ALTER TABLE winners ADD COLUMN speedup_high DOUBLE",
    "ALTER TABLE winners ADD COLUMN speedup_verdict VARCHAR",
]

# Emulated nodes (issue 47): each point records how many ranks shared a node's memory, each
# probe the node every rank was on as the library saw it and the bytes the network carried.
_V12 = [
    "ALTER TABLE points ADD COLUMN ranks_per_node INTEGER",
    "ALTER TABLE probes ADD COLUMN node_map VARCHAR",
    "ALTER TABLE probes ADD COLUMN network_bytes BIGINT",
]

# Ranks per node in the analysis (issue 47): every table keyed by a group of points says how
# many of its ranks shared a node, as its points do, so rows of runs on several placements can
# be set side by side in SQL; rows before read 0 until their run is analysed again.
NODE_TABLES = (
    "winners", "crossovers", "best_choices", "agreement", "against_default", "model_accuracy",
)  # fmt: skip
_V13 = [f"ALTER TABLE {table} ADD COLUMN ranks_per_node INTEGER DEFAULT 0" for table in NODE_TABLES]

# The adaptive sweep (issue 49): every cell an adaptive run left unmeasured, its winner inferred
# from its measured neighbours and the model, with the reason (runners.domain.adaptive), and
# the run's rounds as they ended (how many, why they stopped, what they spent).
_V14 = [
    """CREATE TABLE cell_inferences (
        run_id VARCHAR NOT NULL,
        collective VARCHAR NOT NULL,
        ranks INTEGER NOT NULL,
        dtype VARCHAR NOT NULL,
        op VARCHAR NOT NULL,
        bytes BIGINT NOT NULL,
        winner VARCHAR NOT NULL,
        runner_up VARCHAR,
        settled BOOLEAN NOT NULL,
        reason VARCHAR NOT NULL,
        below_bytes BIGINT,
        above_bytes BIGINT,
        ranks_per_node INTEGER DEFAULT 0
    )""",
    "ALTER TABLE runs ADD COLUMN adaptive JSON",
]
