#!/usr/bin/env python
"""Curated domain mutants as a standing check of the test suite (issue 28). Run on demand, not
part of pytest:

    python benchmarks/mutants.py              # every mutant, one at a time
    python benchmarks/mutants.py --jobs 2     # two at a time
    python benchmarks/mutants.py --list       # the list, nothing run
    python benchmarks/mutants.py -k tie -k margin    # the mutants whose name contains either

Each mutant is a one-line bug in the code that matters for exactness or privacy: a file, an
original text that must occur exactly once in it, its replacement, the tests that must kill it
(pytest node ids, files, or "-k" and an expression) and what it breaks. For each mutant the
repository is copied to a temporary directory, the mutant applied there (never in the working
tree) and the listed tests run with `python -m pytest -x -q` under a per-mutant timeout.
The mutant is killed when they fail (a timeout counts as killed, and is shown), survived when
they pass. Before the mutants, the union of their tests runs once on the unmutated copy
(--skip-baseline leaves it out): a test failing there would make every kill meaningless.

Exit status: 0 when every selected mutant is killed; 1 when one survives or an original text
does not occur exactly once (checked for every mutant of the list, selected or not, so the list
cannot rot silently); 2 when a mutant's test selection is broken (pytest found no such test) or
the baseline fails. A survivor is a defect of the suite to fix, not a number to report.

The copy imports its own rwn_sql: the copy is first on PYTHONPATH, and a sitecustomize.py there
removes the editable install's import hook, which would otherwise serve rwn_sql.sql (the SQL
templates) from the installed working tree; a sanity check refuses to run when the copy's code
is not the one imported.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str                   # relative to the repository root
    original: str               # must occur exactly once in the file
    replacement: str
    tests: tuple[str, ...]      # pytest arguments
    breaks: str


M = Mutant
MUTANTS = [
    # --- the table -------------------------------------------------------------------------
    M("cert-margin-subtracted", "rwn_sql/rp/core/privacy.py",
      "need = pp.delta + cert_margin(n)", "need = pp.delta - cert_margin(n)",
      ("tests/rp/test_enforcement.py::test_certification_margin_is_added_to_delta",),
      "a design up to 1e-9 below delta is certified"),
    M("sdid-population-sd", "rwn_sql/evaluation/evaluate.py",
      "sd = xo.std(axis=0, ddof=1) if numeric", "sd = xo.std(axis=0, ddof=0) if numeric",
      ("tests/evaluation/test_evaluate.py::test_sdid_uses_the_sample_standard_deviation",),
      "SDID's interval is the population sd, narrower than documented"),
    M("predicate-whitelist-cast", "rwn_sql/rp/release/analyst.py",
      'exp.Neg: {"this"}, exp.Null: set()', 'exp.Neg: {"this"}, exp.Cast: {"this", "to"}, exp.Null: set()',
      ("tests/rp/test_query.py::test_node_whitelists_equal_the_pinned_sets",),
      "the predicate net lets casts through (only refuse_cast stands in the way)"),
    M("query-whitelist-subquery", "rwn_sql/rp/release/analyst.py",
      'exp.Limit: {"expression"},', 'exp.Limit: {"expression"}, exp.Subquery: {"this"},',
      ("tests/rp/test_query.py", "-k", "whitelist"),
      "the query net lets subqueries through (only parse's check stands in the way)"),
    M("check-nodes-ignores-arguments", "rwn_sql/rp/release/analyst.py",
      "        if extra:\n            raise refuse(f\"{kind.__name__} with", "        if False:\n            raise refuse(f\"{kind.__name__} with",
      ("tests/rp/test_query.py::test_predicate_whitelist_refuses_each_forbidden_kind",),
      "the net checks node types only: a column with catalog and schema (a.b.c.d) passes"),
    M("tie-tolerance-zero", "rwn_sql/rwn/geometry.py",
      "return 4.0 * (terms + 4) * UNIT_ROUNDOFF", "return 0.0 * (terms + 4) * UNIT_ROUNDOFF",
      ("tests/rwn/test_ties.py::test_pythagorean_ties_that_rounding_breaks_are_kept",),
      "exact ties at the k-th radius broken by rounding leave S_i"),
    M("rwn-release-in-input-order", "rwn_sql/rwn/sqlgen.py",
      'if order == "keyed" and reps is None:', "if False:",
      ("tests/rwn/test_perturb.py::test_release_is_written_in_the_keyed_order",),
      "the RWN release row order reveals the input order"),
    M("release-comment-dropped", "rwn_sql/rp/release/release_db.py",
      "comment(\"TABLE\", METADATA_TABLE, text, column)", "pass",
      ("tests/rp/test_release_db.py::test_every_object_and_column_is_commented_plain_duckdb",),
      "the metadata table's columns carry no comment for BI users"),
    M("in-list-b-of-one-value", "rwn_sql/rp/core/sqlgen.py",
      "{len(values)} AS set_size, count(*) AS group_size", "1 AS set_size, count(*) AS group_size",
      ("tests/rp/test_rp.py::test_multi_value_in_estimate_is_unbiased",),
      "SA IN (...) estimated with one value's b: biased by (|V| - 1)(1-p) N / (m p)"),
    # --- the "also found": tolerances and the interrupt ---------------------------------
    M("se-three-percent-large", "sql/rp_estimates.sql",
      "/ __rwn_p AS std_error", "/ __rwn_p * 1.03 AS std_error",
      ("tests/rp/test_rp.py::test_estimator_unbiased_with_the_stated_variance",),
      "standard errors 3 % too large (intervals too wide); the old 10 % tolerance let it pass"),
    M("se-block-hypergeometric", "rwn_sql/rp/core/sqlgen.py",
      '"        coalesce(sum(CASE WHEN n > 1 THEN (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1)\\n"',
      '"        coalesce(sum(CASE WHEN n > 1 THEN (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / n\\n"',
      ("tests/rp/test_rp.py::test_block_aware_standard_error_equals_the_exact_variance",),
      "the block-aware variance uses h = (n - s) / n, not (n - s) / (n - 1)"),
    M("se-block-sizes-swapped", "rwn_sql/rp/core/sqlgen.py",
      '"        coalesce(sum(r * (q + 1) * (q + 1) + (t - r) * q * q), 0) AS ss,\\n"',
      '"        coalesce(sum(r * q * q + (t - r) * (q + 1) * (q + 1)), 0) AS ss,\\n"',
      ("tests/rp/test_rp.py::test_standard_errors_account_for_blocks",),
      "the r blocks of size q + 1 are taken as the t - r ones in SS: block-aware errors 7 % too large"),
    M("weight-check-inverted", "rwn_sql/rwn/spec.py",
      "if self.weight <= 0:", "if self.weight > 0:",
      ("tests/rwn/test_bad_input.py::test_interrupted_run_leaves_no_table",),
      "every run is refused at once (the interrupt test must not take that for the interrupt)"),
    # --- neighbourhoods: inclusion rule, radius, grid ------------------------------------------
    M("members-strict-radius", "rwn_sql/rwn/search_sql.py",
      'f"e.d2 <= ({radius2}) * {tie_factor(spec)}"', 'f"e.d2 < ({radius2})"',
      ("tests/rwn/test_ties.py::test_issue_reproducer_every_interior_point_has_both_neighbours",),
      "strict inclusion: the k-th nearest and the records tied with it or at eps leave S_i"),
    M("radius-least-not-greatest", "rwn_sql/rwn/search_sql.py",
      'f"greatest({eps2}, {dialect.list_element(found, str(spec.k))}.d2)"',
      'f"least({eps2}, {dialect.list_element(found, str(spec.k))}.d2)"',
      ("tests/rwn/test_neighborhoods.py::test_bodyfat_all_columns_equals_brute_force",),
      "S_i is the smaller of the k-NN and eps balls, not the larger"),
    M("grid-margin-one-cell-long", "rwn_sql/rwn/search_sql.py",
      'return f"s * (1 + least({edges}) {sign} {allowance} * (1 + greatest({far})))"',
      'return f"s * (2 + least({edges}) {sign} {allowance} * (1 + greatest({far})))"',
      ("tests/rwn/test_neighborhoods.py::test_bodyfat_all_columns_equals_brute_force",),
      "the margin claims one cell more than the 3^G block holds: records finish with members unseen"),
    M("far-cell-skip-wrong-face", "rwn_sql/rwn/search_sql.py",
      'f"CASE o.o_{d} WHEN 1 THEN (1 - p.f_{d}) * (1 - p.f_{d}) WHEN -1 THEN p.f_{d} * p.f_{d} ELSE 0.0 END"',
      'f"CASE o.o_{d} WHEN -1 THEN (1 - p.f_{d}) * (1 - p.f_{d}) WHEN 1 THEN p.f_{d} * p.f_{d} ELSE 0.0 END"',
      ("tests/rwn/test_grid_dims.py::test_far_cells_are_skipped_and_neighbourhoods_stay_exact",),
      "a neighbour cell is skipped by its far face: members within reach are lost"),
    M("gram-bound-one", "rwn_sql/rwn/geometry.py",
      "return max(1.0, max(rows)) * (1 + 1e-9)", "return 1.0",
      ("tests/rwn/test_grid_dims.py::test_gram_bound_bounds_the_projection",),
      "the far-cell skip on non-orthogonal axes assumes |U^T v| <= |v|"),
    M("strata-not-joined", "rwn_sql/rwn/search_sql.py",
      'exact_keys = [f"k_{i}" for i in range(1, len(grid.spec.strata) + 1)] + [f"ck_{i}" for i in range(1, grid.C + 1)]',
      'exact_keys = [f"ck_{i}" for i in range(1, grid.C + 1)]',
      ("tests/rwn/test_neighborhoods.py::test_strata_equal_brute_force",),
      "neighbours are taken across strata"),
    M("categorical-weight-not-squared", "rwn_sql/rwn/search_sql.py",
      'terms += [f"CASE WHEN a.c_{i} = b.c_{i} THEN 0.0 ELSE {w2} END" for i in range(1, grid.C + 1)]',
      'terms += [f"CASE WHEN a.c_{i} = b.c_{i} THEN 0.0 ELSE {float_literal(grid.spec.weight)} END" for i in range(1, grid.C + 1)]',
      ("tests/rwn/test_neighborhoods.py::test_categorical_distance_equals_brute_force",),
      "a categorical mismatch adds w, not w^2, to the squared distance"),
    M("minmax-scale-by-max", "rwn_sql/rwn/stats_sql.py",
      'off, sc = f"lo_{i}", f"hi_{i} - lo_{i}"', 'off, sc = f"lo_{i}", f"hi_{i}"',
      ("tests/rwn/test_neighborhoods.py::test_bodyfat_all_columns_equals_brute_force",),
      "min-max scaling divides by the maximum, not the range"),
    M("zscore-population-sd", "rwn_sql/rwn/stats_sql.py",
      'f"stddev_samp({v}) {finite} AS sd_{i}"', 'f"stddev_pop({v}) {finite} AS sd_{i}"',
      ("tests/rwn/test_neighborhoods.py::test_zscore_scales_by_the_sample_standard_deviation",),
      "z-score scaling by the population sd (documented: the sample sd)"),
    M("on-missing-drop-keeps-nan", "rwn_sql/rwn/stats_sql.py",
      "conds = [f\"{quote_ident(c)} IS NOT NULL AND {dialect.is_finite(f'CAST({quote_ident(c)} AS DOUBLE)')}\"",
      "conds = [f\"{quote_ident(c)} IS NOT NULL AND true\"",
      ("tests/rwn/test_perturb.py::test_row_counts_tell_how_many_rows_were_dropped",),
      "on_missing='drop' keeps NaN and infinite values, which fail every distance comparison"),
    # --- cell draw, keyed hash, keyed order, key derivation -------------------------------------
    M("cell-draw-keep-inverted", "rwn_sql/rwn/sqlgen.py",
      'return f"{keep_bits} < {threshold}", index', 'return f"{keep_bits} >= {threshold}", index',
      ("tests/rwn/test_perturb.py::test_donors_match_python_mirror_of_the_definition",),
      "cells are replaced with probability 1 - q"),
    M("cell-draw-never-last-member", "rwn_sql/rwn/sqlgen.py",
      "1 + CAST(floor({dialect.unit_fraction(pick_bits)} * {size}) AS BIGINT))",
      "1 + CAST(floor({dialect.unit_fraction(pick_bits)} * ({size} - 1)) AS BIGINT))",
      ("tests/rwn/test_perturb.py::test_donors_match_python_mirror_of_the_definition",),
      "the donor is not uniform over S_i (its last member is never drawn)"),
    M("hash-bit-slice-overlap", "rwn_sql/randomness.py",
      "return dialect.uint128_bits(hash_expr, 76 - 52 * part, 52)",
      "return dialect.uint128_bits(hash_expr, 76 - 26 * part, 52)",
      ("tests/rwn/test_perturb.py::test_donors_match_python_mirror_of_the_definition",),
      "the coin and the pick share 26 bits: correlated draws"),
    M("order-key-bits", "rwn_sql/randomness.py",
      'return dialect.uint128_bits(hash_sql(key_sql, purpose, record_sql, "", dialect), 0, 62)',
      'return dialect.uint128_bits(hash_sql(key_sql, purpose, record_sql, "", dialect), 0, 8)',
      ("tests/rwn/test_perturb.py::test_release_is_written_in_the_keyed_order",),
      "the order key has 8 bits: ties fall back to the input position"),
    M("order-purpose-is-perturb", "rwn_sql/rwn/sqlgen.py",
      'ORDER_PURPOSE = "rwn.order"', 'ORDER_PURPOSE = "rwn.perturb"',
      ("tests/rwn/test_perturb.py::test_release_is_written_in_the_keyed_order",),
      "the release order is drawn from the perturbation's hashes (one purpose for two draws)"),
    M("subkey-without-purpose", "rwn_sql/randomness.py",
      "suffix = quote_literal('|' + purpose + '|' + column)",
      "suffix = quote_literal('|' + column)",
      ("tests/rwn/test_perturb.py::test_donors_match_python_mirror_of_the_definition",),
      "the subkey ignores the purpose: different draws reuse the same randomness"),
    # --- evaluate's pairing: the true pairing, or a refusal (issue 23) ------------------------------
    M("evaluate-unknown-order-paired-by-position", "rwn_sql/evaluation/evaluate.py",
      'if by_key or order == "input" or recorded == "input":',
      'if by_key or order == "input" or recorded != "keyed":',
      ("tests/evaluation/test_evaluate_pairing.py::test_release_not_known_to_be_in_input_order_is_refused",),
      "a CSV, query or plain table of unknown order is paired by position without a word"),
    M("evaluate-keyed-paired-by-position", "rwn_sql/evaluation/evaluate.py",
      'if by_key or order == "input" or recorded == "input":', "if True:",
      ("tests/evaluation/test_evaluate_pairing.py::test_keyed_release_paired_by_its_key_has_the_risk_of_its_input_order_twin",),
      "a keyed release is paired by position: the risk understated (linkage 0.004 for 0.100)"),
    M("evaluate-key-pairing-not-inverted", "rwn_sql/evaluation/evaluate.py",
      "return keep_o[released_rows], released_rows", "return keep_o[released_rows], np.arange(len(keep_o))",
      ("tests/evaluation/test_evaluate_pairing.py::test_keyed_release_paired_by_its_key_has_the_risk_of_its_input_order_twin",),
      "key pairing matches the sorted originals with the releases in keyed order: a wrong pairing"),
    M("keyed-positions-numbered-before-the-drop", "rwn_sql/rwn/sqlgen.py",
      "row_number() OVER (ORDER BY __rwn_position) AS __rwn_rid", "__rwn_position AS __rwn_rid",
      ("tests/evaluation/test_evaluate_pairing.py::test_release_with_dropped_records_evaluates_by_key_and_by_id",),
      "key pairing of a release with dropped records hashes the wrong record numbers"),
    M("evaluate-drop-filter-ignored", "rwn_sql/evaluation/evaluate.py",
      'on_missing="drop" if n_r < n else "error"', 'on_missing="error"',
      ("tests/evaluation/test_evaluate_pairing.py::test_release_with_dropped_records_evaluates_by_key_and_by_id",),
      "a release with dropped records cannot be paired by its key"),
    M("release-recorded-as-input-order", "rwn_sql/rwn/run.py",
      'prepared.row_order = order if reps is None else "input"', 'prepared.row_order = "input"',
      ("tests/evaluation/test_evaluate_pairing.py::test_keyed_release_paired_by_its_key_has_the_risk_of_its_input_order_twin",),
      "a keyed release records input order: evaluate pairs it by position"),
    M("parquet-row-order-not-recorded", "rwn_sql/engines/outputs.py",
      "out = {ROW_ORDER_METADATA: row_order} if row_order is not None else {}", "out = {}",
      ("tests/evaluation/test_evaluate_pairing.py::test_cli_pairs_by_key_file_refuses_unknown_order_and_reads_recorded_order",),
      "a --keep-order Parquet release records no order: evaluate refuses it without a flag"),
    # --- uniform perturbation and its estimates ------------------------------------------------
    M("rp-keep-inverted", "rwn_sql/rp/core/sqlgen.py",
      "WHEN {keep_test('__rwn_h', spec.p, dialect)} THEN {s}", "WHEN NOT {keep_test('__rwn_h', spec.p, dialect)} THEN {s}",
      ("tests/rp/test_rp.py::test_randomize_draws_equal_the_python_mirror", "tests/rp/test_rp.py::test_randomize_release_shape_and_rates"),
      "values are kept with probability 1 - p"),
    M("rp-replacement-not-uniform", "rwn_sql/rp/core/sqlgen.py",
      "f'1 + CAST(floor({dialect.unit_fraction(pick)} * {m}) AS BIGINT)'",
      "f'1 + CAST(floor({dialect.unit_fraction(pick)} * ({m} - 1)) AS BIGINT)'",
      ("tests/rp/test_rp.py::test_randomize_draws_equal_the_python_mirror",),
      "the replacement value is never the domain's last value"),
    M("estimate-divides-by-a", "sql/rp_estimates.sql",
      "coalesce((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p * group_size, 0.0) AS estimate",
      "coalesce((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_a * group_size, 0.0) AS estimate",
      ("tests/rp/test_rp.py::test_multi_value_in_estimate_is_unbiased",),
      "the estimate divides by a = p + b instead of p: biased"),
    M("estimate-b-of-all-values", "sql/rp_estimates.sql",
      "(1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_b",
      "(1 - params.__rwn_p) / params.__rwn_m AS __rwn_b",
      ("tests/rp/test_rp.py::test_multi_value_in_estimate_is_unbiased",),
      "b ignores the size of the value set"),
    M("se-linear-term", "sql/rp_estimates.sql",
      "(sh - 2 * __rwn_v * ss)", "(sh - __rwn_v * ss)",
      ("tests/rp/test_rp.py::test_estimator_unbiased_with_the_stated_variance",),
      "the standard error's linear term is off (by a few percent at small f)"),
    M("se-blocks-ignored", "rwn_sql/rp/core/sqlgen.py",
      '"        coalesce(sum(r * (q + 1) * (q + 1) + (t - r) * q * q), 0) AS ss,\\n"',
      '"        coalesce(sum(r * (q + 1) + (t - r) * q), 0) AS ss,\\n"',
      ("tests/rp/test_rp.py::test_block_aware_standard_error_equals_the_exact_variance",
       "tests/rp/test_rp.py::test_standard_errors_account_for_blocks"),
      "the count standard errors of an enforced release treat records as independent"),
    M("sum-se-blocks-ignored", "rwn_sql/rp/core/sqlgen.py",
      'units = (f"{r} * ({q} + 1) * ({q} + 1) + ({t} - {r}) * {q} * {q} AS __rwn_ss,\\n"',
      'units = (f"{r} * ({q} + 1) + ({t} - {r}) * {q} AS __rwn_ss,\\n"',
      ("tests/rp/test_query_measures.py", "-k", "against_numpy and enforced"),
      "the SUM / AVG standard errors of an enforced release treat records as independent"),
    # --- audit and enforcement ----------------------------------------------------------------
    M("chernoff-upper-exponent", "rwn_sql/rp/core/privacy.py",
      "log_u = theta - (1 + theta) * np.log1p(theta)", "log_u = theta - theta * np.log1p(theta)",
      ("tests/rp/test_rp.py::test_chernoff_bounds_equal_the_closed_form",),
      "the Chernoff test's upper bound (and the search's group-size limit) is not the bound"),
    M("audit-chernoff-upper-exponent", "sql/rp_audit.sql",
      "exp(mu * (theta - (1 + theta) * ln(1 + theta))) AS chernoff_upper",
      "exp(mu * (theta - theta * ln(1 + theta))) AS chernoff_upper",
      ("tests/rp/test_rp.py::test_audit_equals_hand_computation",),
      "the audit reports a wrong Chernoff upper bound"),
    M("exact-tail-threshold", "rwn_sql/rp/core/privacy.py",
      "out = np.floor(t + REL_TOL * np.maximum(1.0, np.abs(t))).astype(np.int64) + 1",
      "out = np.floor(t + REL_TOL * np.maximum(1.0, np.abs(t))).astype(np.int64) + 2",
      ("tests/rp/test_rp.py::test_tail_functions_equal_enumeration", "tests/rp/test_rp.py::test_audit_equals_hand_computation"),
      "the upper tail starts one count late: tails too small"),
    M("block-sizes-off-by-one", "rwn_sql/rp/core/sqlgen.py",
      "SELECT 'g' || __rwn_gid || 'b' || ((__rwn_pos - 1) % __rwn_trials) AS __rwn_unit,",
      "SELECT 'g' || __rwn_gid || 'b' || ((__rwn_pos - 1) % (__rwn_trials + 1)) AS __rwn_unit,",
      ("tests/rp/test_enforcement.py::test_release_blocks_have_the_certified_sizes",),
      "a group is split into t + 1 blocks, not the certified t"),
    M("suppress-small-inverted", "rwn_sql/rp/core/sqlgen.py",
      'f" WHERE __rwn_g.__rwn_gsize NOT IN (', 'f" WHERE __rwn_g.__rwn_gsize IN (',
      ("tests/rp/test_enforcement.py::test_suppress_small_leaves_failing_groups_out",),
      "suppress_small releases exactly the groups that fail and drops the others"),
    M("stop-after-one", "rwn_sql/rp/core/privacy.py",
      "if candidates and failed == _STOP_AFTER:", "if candidates and failed == _STOP_AFTER - 2:",
      ("tests/rp/test_enforcement.py",),
      "the search for the number of blocks gives up after one failing t"),
    # --- analyst queries ---------------------------------------------------------------------------
    M("sa-inside-or-accepted", "rwn_sql/rp/release/analyst.py",
      "if isinstance(node, (exp.Or, exp.Not, exp.Xor)):", "if isinstance(node, (exp.Not, exp.Xor)):",
      ("tests/rp/test_query.py::test_refusals_say_what_is_supported",),
      "an SA condition inside OR is judged as if it were separable"),
    M("refuse-cast-off", "rwn_sql/rp/release/analyst.py",
      "if isinstance(node, exp.Cast):          # TryCast", "if False:          # TryCast",
      ("tests/rp/test_query_fuzz.py::test_r1_reproducer_without_stacking_is_refused",),
      "casts in the WHERE are not refused by name (the net still refuses them)"),
    # --- bounded inputs and untrusted release files (issue 22) ----------------------------------------
    M("into-qualified-ignored", "rwn_sql/engines/outputs.py",
      '    if "." not in into:', '    if True:',
      ("tests/cli/test_bounded_inputs.py::test_into_qualified_name_writes_there",),
      "into='other.t' silently creates memory.main.\"other.t\" instead of writing into other"),
    M("measure-overflow-unbounded", "rwn_sql/rp/core/checks.py",
      "top * max(records, 1) > MEASURE_BOUND", 'top * max(records, 1) > float("inf")',
      ("tests/cli/test_bounded_inputs.py", "-k", "non_finite_public_measures"),
      "a public measure whose sums overflow (1e308) is released and SUM/AVG estimates turn inf"),
    M("key-file-any-kind", "rwn_sql/small_files.py",
      "        if not stat.S_ISREG(mode):", "        if False:",
      ("tests/cli/test_bounded_inputs.py::test_key_file_must_be_a_small_regular_file",),
      "a key file may be /dev/zero or a FIFO: an endless read"),
    M("release-read-before-lock", "rwn_sql/rp/release/query_run.py",
      "        lock(iso)\n        try:\n            iso.execute(f\"ATTACH", "        pass\n        try:\n            iso.execute(f\"ATTACH",
      ("tests/rp/test_untrusted_release.py::test_access_is_off_before_the_file_is_read",),
      "a crafted release file's views read the analyst's local files"),
    M("in-list-limit-off-by-one", "rwn_sql/rp/release/analyst.py",
      "if frame[1] > MAX_IN_LIST:", "if frame[1] > MAX_IN_LIST + 1:",
      ("tests/rp/test_query_fuzz.py", "-k", "just_under_and_just_over and in_list"),
      "IN lists one value over the stated limit are accepted"),
    M("release-view-accepted", "rwn_sql/rp/release/release_db.py",
      'if found[0] != "table":', 'if found[0] == "index":',
      ("tests/rp/test_untrusted_release.py", "-k", "metadata_view_f1"),
      "a release whose metadata is a view (the F1 file) is read"),
    # --- signals, memory estimates and keys out of plans (issue 22) ------------------------------------
    M("table-commit-after-signal", "rwn_sql/engines/outputs.py",
      "            if files._ending:", "            if False:",
      ("tests/cli/test_faults.py", "-k", "signal_between_statements_stops_the_publish and have"),
      "a table in an existing database is committed and reported written after a signal"),
    M("listed-pairs-budget-100x", "rwn_sql/rwn/run.py",
      "    if need <= limit:", "    if need <= 100 * limit:",
      ("tests/rwn/test_guards.py::test_tune_refuses_listed_pairs_beyond_the_limit_before_the_sweep",),
      "tune lists pairs 100 times beyond the memory limit instead of refusing before the sweep"),
    M("listed-pairs-estimate-unscaled", "rwn_sql/rwn/sqlgen.py",
      "avg(greatest(c * (t.n - 1) / greatest(m.m - 1, 1), ", "avg(greatest(c, ",
      ("tests/rwn/test_guards.py::test_listed_pairs_estimate_matches_the_count",),
      "the sampled pair count is not scaled to the whole input: the estimate is far too low"),
    M("key-row-kept", "rwn_sql/engines/duckdb_backend.py",
      'self.con.execute(f"DELETE FROM {KEY_TABLE} WHERE id IN ({listed})").fetchall()', "pass",
      ("tests/properties/test_key_secrecy.py::test_keys_are_gone_after_eager_calls",),
      "the key stays in the session after into=, release, rank swap and tune"),
    M("key-kept-after-interrupt", "rwn_sql/randomness.py",
      "if scope.made and not (lasting and done):", "if scope.made and not lasting:",
      ("tests/properties/test_key_secrecy.py::test_keys_are_gone_after_an_interrupt",),
      "an interrupted lazy call leaves its key in the session"),
    M("macro-token-literal", "rwn_sql/macros.py",
      'KeySQL("rwn_key_of(__rwn_token)", ', 'KeySQL(f"rwn_key_of({quote_literal(token)})", ',
      ("tests/properties/test_key_secrecy.py::test_no_plan_of_a_macro_shows_the_key_or_a_subkey",),
      "the macros' key is a constant: EXPLAIN and profiles show the subkeys"),
    M("seed-text-accepted-as-key", "rwn_sql/randomness.py",
      "        if isinstance(key, SeedKey):", "        if True:",
      ("tests/cli/test_bounded_inputs.py::test_seed_keys_stay_allowed_only_as_seeds",),
      "a key file holding `seed:1` (6 guessable characters) passes for a secret key"),
    M("file-input-view-read", "rwn_sql/engines/sources.py",
      "        require_base_table(con, alias, db[0], table, schema)", "        pass",
      ("tests/rp/test_untrusted_inputs.py", "-k", "cli_refuses_a_view_given_as_file_duckdb_table and audit"),
      "a file.duckdb:table input that is a view runs it (it may read local files)"),
    M("estimates-view-three-part-name", "rwn_sql/rp/release/release_source.py",
      "                if vdb.lower() in foreign:", "                if vdb.lower() in foreign and len(parts) == 1:",
      ("tests/rp/test_untrusted_inputs.py", "-k", "any_spelling and rel.main.people_randomized"),
      "estimates over db.schema.view of an attached file run the file's view"),
    M("estimates-view-two-part-name", "rwn_sql/rp/release/release_source.py",
      'wanted = [(db.lower(), parts[0]), (parts[0], "main")]', "wanted = [(db.lower(), parts[0])]",
      ("tests/rp/test_untrusted_inputs.py", "-k", "any_spelling and nometa and estimates"),
      "estimates over db.view of an attached file with no metadata run the file's view"),
    M("metadata-value-cap-1000x", "rwn_sql/rp/release/release_limits.py",
      "MAX_TEXT_BYTES = 4_096 ", "MAX_TEXT_BYTES = 4_096_000 ",
      ("tests/rp/test_untrusted_release.py", "-k", "metadata_bomb_is_refused_by_every_reader and query_file"),
      "a release whose metadata holds megabyte domain values is read (a memory bomb)"),
    M("query-ignores-memory-limit", "rwn_sql/rp/release/query_run.py",
      "iso = attached(path, settings)", "iso = attached(path, {})",
      ("tests/rp/test_untrusted_release.py::test_released_table_runs_within_the_callers_memory_limit",),
      "the analyst query runs past the caller's memory limit"),
    M("metadata-probe-unbounded", "rwn_sql/rp/release/query_run.py",
      'probe = attached(path, {"memory_limit": METADATA_MEMORY_LIMIT, "threads": "1"})',
      'probe = attached(path, {"threads": "1"})',
      ("tests/rp/test_untrusted_release.py::test_metadata_scan_is_limited_when_statistics_lie",),
      "a release's metadata is read without the 64 MiB limit"),
    M("metadata-statistics-unchecked", "rwn_sql/rp/release/release_db.py",
      '    check_stored_text_size(con, md, f"metadata table {METADATA_TABLE!r}")\n', "",
      ("tests/rp/test_untrusted_release.py", "-k", "metadata_bomb_is_refused_with_bounded_memory and python"),
      "a metadata bomb's values are scanned (decompressed past the 64 MiB limit) before its statistics refuse it"),
    M("metadata-statistics-skip-list-values", "rwn_sql/rp/release/release_db.py",
      "WHERE segment_type = 'VARCHAR' ", "WHERE segment_type = 'VARCHAR[]' ",
      ("tests/rp/test_untrusted_release.py", "-k", "metadata_bomb_is_refused_with_bounded_memory and python"),
      "the statistics check misses the domain list's values, so a bomb's values are scanned"),
    # --- the release layout and the recorded design (issue 23 point 3) ----------------------------
    M("nonnegative-no-clamp", "rwn_sql/rp/core/sqlgen.py",
      "greatest(estimate - __rwn_tau, 0.0) AS nonnegative_estimate", "estimate - __rwn_tau AS nonnegative_estimate",
      ("tests/rp/test_release_layout.py", "-k", "projection"),
      "the non-negative estimate goes negative (no clamp at 0)"),
    M("nonnegative-step-largest-j", "rwn_sql/rp/core/sqlgen.py",
      "max(CASE WHEN estimate - (__rwn_cs - group_size) / __rwn_j > 0 THEN __rwn_j END)",
      "max(CASE WHEN estimate - (__rwn_cs - group_size) / __rwn_j >= -1e300 THEN __rwn_j END)",
      ("tests/rp/test_release_layout.py", "-k", "projection"),
      "the projection's shift uses every value (the estimates themselves, negative ones kept at 0: totals off)"),
    M("recorded-design-ignored", "rwn_sql/rp/release/release_source.py",
      "            recorded = recorded_elsewhere(be.con, release)", "            recorded = None",
      ("tests/rp/test_release_layout.py", "-k", "recorded or forged"),
      "estimates ignore the design randomize(into=) recorded (refuse or, with enforce=None, narrow errors)"),
    M("cli-design-not-recorded", "rwn_sql/cli/commands.py",
      "design=rp_plan.plan_design(plan))", "design=None)",
      ("tests/cli/test_cli.py", "-k", "records_its_design"),
      "rwn-sql randomize writes Parquet / file.duckdb:table without the design (estimates refuse it)"),
    M("db-table-design-comment-dropped", "rwn_sql/engines/outputs.py",
      "for statement in row_order_comment(target, row_order, design):",
      "for statement in row_order_comment(target, row_order, None):",
      ("tests/cli/test_cli.py", "-k", "records_its_design"),
      "a new file.duckdb:table output of rwn-sql randomize has no design COMMENT"),
    M("parquet-parts-unchecked", "rwn_sql/rp/release/design_record.py",
      "    if len(texts) > 1 or len(sizes) != parts:", "    if len(texts) > 1:",
      ("tests/cli/test_cli.py", "-k", "every_part"),
      "a folder whose parts do not all record the design is read as recording the one some parts hold"),
    M("recorded-blocks-unchecked", "rwn_sql/rp/api.py",
      "        if wrong:\n            raise RWNError(f\"{label} records {kept.get(wrong[0])} blocks",
      "        if False:\n            raise RWNError(f\"{label} records {kept.get(wrong[0])} blocks",
      ("tests/rp/test_release_layout.py", "-k", "forged"),
      "a record whose blocks do not match the table's group sizes is used"),
    M("unrecorded-enforce-defaults-to-none", "rwn_sql/rp/release/release_source.py",
      "        if isinstance(enforce, str) and enforce == RECORDED:\n            raise RWNError(f\"{label} records no design",
      "        if False:\n            raise RWNError(f\"{label} records no design",
      ("tests/rp/test_release_layout.py", "-k", "refuse_without"),
      "a table without a recorded design silently gets independent-trial errors"),
    # --- attribute disclosure: l-diversity, proxies, the default refusal -------------------------
    M("l-violation-strict", "rwn_sql/rp/core/sqlgen.py",
      'return f"({size} >= 2 AND {distinct} < {int(l_diversity)})"',
      'return f"({size} >= 2 AND {distinct} <= {int(l_diversity)})"',
      ("tests/rp/test_attribute_disclosure.py::test_l_diversity_matches_brute_force",),
      "groups holding exactly L distinct values are counted as violating l"),
    M("l-violation-counts-singletons", "rwn_sql/rp/core/sqlgen.py",
      'return f"({size} >= 2 AND {distinct}', 'return f"({size} >= 1 AND {distinct}',
      ("tests/rp/test_attribute_disclosure.py::test_l_diversity_matches_brute_force",),
      "single records (the (eps, delta) audit's alone) count as violating l"),
    M("l-entropy-by-values", "rwn_sql/rp/core/sqlgen.py",
      'f"exp(ln(sum({c})) - sum({c} * ln({c})) / sum({c})) AS l_entropy, "',
      'f"exp(ln(sum({c})) - sum({c} * ln({c})) / count(*)) AS l_entropy, "',
      ("tests/rp/test_attribute_disclosure.py::test_l_diversity_matches_brute_force",),
      "entropy l-diversity averaged over values instead of records"),
    M("proxy-share-90", "rwn_sql/rp/core/sqlgen.py",
      "PROXY_SHARE = (19, 20) ", "PROXY_SHARE = (9, 10) ",
      ("tests/rp/test_attribute_disclosure.py::test_near_proxy_and_pair_proxy_are_flagged",),
      "a column giving the value for 90 % of a class counts as determining it"),
    M("proxy-needs-all-records", "rwn_sql/rp/core/disclosure.py",
      "if n and 2 * e >= n)", "if n and e >= n)",
      ("tests/rp/test_attribute_disclosure.py::test_near_proxy_and_pair_proxy_are_flagged",),
      "a proxy must expose every record of its classes: a 98 % proxy is missed"),
    M("proxy-ignores-concentration", "rwn_sql/rp/core/disclosure.py",
      "concentrated, sizes = bool(row[0]), dict(zip(public, row[1:]))",
      "concentrated, sizes = False, dict(zip(public, row[1:]))",
      ("tests/rp/test_attribute_disclosure.py::test_near_proxy_and_pair_proxy_are_flagged",),
      "every column is blamed when the sensitive attribute is one value almost everywhere"),
    M("audit-ok-ignores-proxies", "rwn_sql/rp/core/disclosure.py",
      "return self.l_diversity <= 1 or (self.failing_records == 0 and not self.proxies)",
      "return self.l_diversity <= 1 or self.failing_records == 0",
      ("tests/rp/test_attribute_disclosure.py::test_near_proxy_and_pair_proxy_are_flagged",),
      "an l-diverse release with a public proxy passes the audit"),
    M("audit-exit-ignores-disclosure", "rwn_sql/cli/commands.py",
      "failing = not result.ok", "failing = result.failing_groups",
      ("tests/rp/test_attribute_disclosure.py::test_proxy_code_is_flagged_by_default_and_refused",),
      "rwn-sql audit exits 0 on a release a public code discloses"),
    M("enforce-skips-l-rule", "rwn_sql/rp/core/checks.py",
      "if l_diversity is None and (params.threshold is not None or always):",
      "if l_diversity is None and always:",
      ("tests/rp/test_attribute_disclosure.py::test_proxy_code_is_flagged_by_default_and_refused",),
      "randomize --enforce certifies the proxy release again"),
    M("metadata-l-diversity-constant", "rwn_sql/rp/release/release_db.py",
      "meta.suppressed_records, meta.name, meta.l_diversity, meta.max_top_share,",
      "meta.suppressed_records, meta.name, 2, meta.max_top_share,",
      ("tests/rp/test_attribute_disclosure.py::test_proxy_code_is_flagged_by_default_and_refused",),
      "a release made with the check turned off does not say so"),
    M("float-sensitive-allowed", "rwn_sql/rp/core/checks.py",
      "    if FLOAT_TYPES.match(type_sql.strip()):\n        raise RWNError(FLOAT_SENSITIVE",
      "    if False:\n        raise RWNError(FLOAT_SENSITIVE",
      ("tests/rp/test_attribute_disclosure.py::test_float_or_large_domain_sensitive_is_refused",),
      "a floating-point measurement is randomized as if it were categories"),
    M("inferred-domain-limit-1024", "rwn_sql/rp/core/sqlgen.py",
      "MAX_INFERRED_DOMAIN = 256 ", "MAX_INFERRED_DOMAIN = 1024 ",
      ("tests/rp/test_attribute_disclosure.py::test_float_or_large_domain_sensitive_is_refused",),
      "a sensitive column of 601 values gets a domain read from the data"),
    # --- the same rules, run by the statement over a TEMP source (rp.temp_source)
    M("temp-planner-not-awaited", "rwn_sql/rp/temp_source.py",
      "WHERE {_answer('m')} IS NOT NULL)\"", "WHERE true)\"",
      ("tests/macros/test_macros_temp.py", "-k", "refuses_bad_input"),
      "a statement over a TEMP source reads it without waiting for the planner: duplicate ids are released"),
    M("temp-l-diversity-not-asked", "rwn_sql/rp/temp_source.py",
      "domain=domain, nulls=nulls, id=id_column, l_diversity=l_diversity,",
      "domain=domain, nulls=nulls, id=id_column, l_diversity=1,",
      ("tests/macros/test_macros_temp.py", "-k", "attribute_disclosure_rules"),
      "rwn_randomize over a TEMP table releases groups violating l and proxies"),
    M("temp-l-not-default-when-enforced", "rwn_sql/rp/core/checks.py",
      "if l_diversity is None and (params.threshold is not None or always):",
      "if l_diversity is None and (params.threshold is None or always):",
      ("tests/macros/test_macros_temp.py", "-k", "attribute_disclosure_rules"),
      "an enforced rwn_randomize over a TEMP table does not apply L = 2 by default"),
    M("temp-blocks-not-answered", "rwn_sql/rp/temp_source.py",
      "    blocks = sorted((blocks or {}).items())", "    blocks = []",
      ("tests/macros/test_macros_temp.py", "-k", "same_release"),
      "an enforced rwn_randomize over a TEMP table has no blocks to split its personal groups into"),
]


def check_list(mutants) -> list[str]:
    """Problems of the list: an original text not occurring exactly once, a no-op mutant, or a test
    file that no longer exists (tests moved without the list)."""
    problems, names = [], set()
    for m in mutants:
        if m.name in names:
            problems.append(f"{m.name}: duplicate name")
        names.add(m.name)
        path = ROOT / m.path
        if not path.is_file():
            problems.append(f"{m.name}: {m.path} does not exist")
            continue
        count = path.read_text(encoding="utf-8").count(m.original)
        if count != 1:
            problems.append(f"{m.name}: the original text occurs {count} times in {m.path} (must be once): "
                            f"{m.original!r}")
        if m.original == m.replacement:
            problems.append(f"{m.name}: the replacement equals the original")
        if not m.tests:
            problems.append(f"{m.name}: no tests")
        named = [t for i, t in enumerate(m.tests) if not t.startswith("-") and (i == 0 or m.tests[i - 1] != "-k")]
        gone = [t for t in named if not (ROOT / t.split("::")[0]).is_file()]
        if gone:
            problems.append(f"{m.name}: its test files no longer exist: {' '.join(gone)}")
    return problems


def repository_files() -> list[str]:
    """The files a copy needs: git's tracked and untracked-but-not-ignored files (the working
    tree as it is), else every file outside caches."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, check=True).stdout.decode()
        return [f for f in out.split("\0") if f and (ROOT / f).is_file()]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", "__pycache__", ".pytest_cache"}
        return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                if p.is_file() and not skip & set(p.parts) and not any(x.endswith(".egg-info") for x in p.parts)]


SITECUSTOMIZE = '''\
# Written by benchmarks/mutants.py: drop the editable install's import hook, so that this copy's
# rwn_sql and its sql/ templates are the ones imported.
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__name__", type(f).__name__).lower()]
'''


def make_copy(base: Path, name: str, files: list[str]) -> Path:
    dest = base / name
    for f in files:
        target = dest / f
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, target)
    site = dest / ".mutants_site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return dest


def environment(copy: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(copy / ".mutants_site"), str(copy)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def sanity_check(copy: Path) -> None:
    """The copy imports its own code and templates, or nothing is run."""
    probe = ("import importlib.util, rwn_sql, rwn_sql.rwn.sqlgen as g; print(rwn_sql.__file__); "
             "print(importlib.util.find_spec('rwn_sql.sql') is None)")
    out = subprocess.run([sys.executable, "-c", probe], cwd=copy, env=environment(copy), capture_output=True, text=True)
    lines = out.stdout.split()
    if out.returncode != 0 or len(lines) != 2 or not lines[0].startswith(str(copy)) or lines[1] != "True":
        sys.exit(f"mutants: the copy does not import its own rwn_sql (got {out.stdout!r} {out.stderr[-500:]!r}); "
                 "nothing run")


def pytest_args(tests, basetemp: Path) -> list[str]:
    # Each run its own --basetemp: pytest removes old numbered temporary folders, and runs side
    # by side (--jobs) would otherwise remove each other's, failing a test for no fault of the code.
    # -n 0: one process per mutant (pyproject's addopts start two xdist workers; --jobs already runs
    # mutants side by side). The test files are named, so their heavy tests run too.
    return [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider", f"--basetemp={basetemp}",
            *tests]


def run_tests(copy: Path, tests, timeout: float) -> tuple[str, float, str]:
    """('pass' | 'fail' | 'timeout' | 'selection', seconds, last output lines)."""
    started = time.monotonic()
    try:
        out = subprocess.run(pytest_args(tests, copy / ".pytest-tmp"), cwd=copy, env=environment(copy),
                             capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - started, ""
    lines = (out.stdout + out.stderr).strip().splitlines()
    # the failures' own lines (pytest's "E " lines) and its summary: what the baseline shows
    tail = "\n".join([x for x in lines if x.startswith("E ")][:20] + lines[-3:])
    status = {0: "pass", 4: "selection", 5: "selection"}.get(out.returncode, "fail")
    return status, time.monotonic() - started, tail


def run_mutant(m: Mutant, base: Path, files, timeout: float, keep: bool) -> tuple[str, float, str]:
    copy = make_copy(base, m.name, files)
    try:
        path = copy / m.path
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(m.original, m.replacement, 1), encoding="utf-8")
        status, seconds, tail = run_tests(copy, m.tests, timeout)
    finally:
        if not keep:
            shutil.rmtree(copy, ignore_errors=True)
    verdict = {"pass": "SURVIVED", "fail": "killed", "timeout": "killed (timeout)",
               "selection": "BROKEN (no such test)"}[status]
    return verdict, seconds, tail


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Apply each curated mutant in a copy of the repository and run "
                                             "the tests that must kill it.")
    ap.add_argument("--list", action="store_true", help="print the mutants and exit")
    ap.add_argument("-k", action="append", default=[], metavar="NAME",
                    help="run only the mutants whose name contains NAME (repeatable)")
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant's tests (default 600)")
    ap.add_argument("--skip-baseline", action="store_true", help="do not run the tests on the unmutated copy first")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copies")
    args = ap.parse_args(argv)

    problems = check_list(MUTANTS)
    selected = [m for m in MUTANTS if not args.k or any(k in m.name for k in args.k)]
    if args.list:
        for m in MUTANTS:
            print(f"{m.name}\n    {m.path}: {m.original!r}\n    -> {m.replacement!r}\n"
                  f"    breaks: {m.breaks}\n    tests: {' '.join(m.tests)}")
    for p in problems:
        print(f"LIST PROBLEM: {p}")
    if args.list or problems:
        return 1 if problems else 0
    if not selected:
        print(f"no mutant matches {args.k}")
        return 1

    files = repository_files()
    base = Path(tempfile.mkdtemp(prefix="rwn-mutants-"))
    try:
        baseline = make_copy(base, "_baseline", files)
        sanity_check(baseline)
        if not args.skip_baseline:
            union = []
            for m in selected:          # files and node ids once each; -k selections as they are
                i = 0
                while i < len(m.tests):
                    if m.tests[i] == "-k":
                        union.append(m.tests[i: i + 2])
                        i += 2
                    else:
                        union.append((m.tests[i],))
                        i += 1
            runs = list(dict.fromkeys(tuple(u) for u in union))
            plain = [u[0] for u in runs if len(u) == 1]
            groups = [list(u) for u in runs if len(u) != 1]
            # a -k selection that only narrows a file also listed plainly is covered by that file
            groups = [g for g in groups if not any(x in plain for x in g if not x.startswith("-"))]
            for tests in ([plain] if plain else []) + groups:
                status, seconds, tail = run_tests(baseline, tests, args.timeout * 4)
                print(f"baseline ({len(tests)} arguments): {status} in {seconds:.0f} s", flush=True)
                if status != "pass":
                    print(tail)
                    print("mutants: the tests fail (or are missing) without any mutant; fix that first")
                    return 2
        shutil.rmtree(baseline, ignore_errors=True)

        results = {}

        def one(m):
            results[m.name] = run_mutant(m, base, files, args.timeout, args.keep)
            verdict, seconds, tail = results[m.name]
            print(f"{verdict:<22} {m.name:<34} {seconds:6.1f} s   {m.breaks}", flush=True)
            if verdict in ("SURVIVED", "BROKEN (no such test)"):
                print("    " + tail.replace("\n", "\n    "), flush=True)

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            list(pool.map(one, selected))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)

    killed = sum(1 for m in selected if results[m.name][0].startswith("killed"))
    broken = [m.name for m in selected if results[m.name][0].startswith("BROKEN")]
    survived = [m.name for m in selected if results[m.name][0] == "SURVIVED"]
    print(f"\nmutation score: {killed}/{len(selected)} killed ({100.0 * killed / len(selected):.0f} %)"
          + (f"; survived: {', '.join(survived)}" if survived else "")
          + (f"; broken test selection: {', '.join(broken)}" if broken else ""))
    return 2 if broken else 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
