"""rwn_sql.report: a self-contained HTML page describing a release database, for the data
steward and the analysts: the published parameters, an audit summary, and per low-cardinality
public column (those with a one-way view) the estimates by sensitive value with 95% intervals,
as tables and as inline SVG plots. It reads the release file only (never raw data), loads
nothing from the network and runs no script."""
from __future__ import annotations

import datetime as _dt
import html
import math
import os
import secrets

from ...engines import files
from ..core import privacy
from .query_run import ISOLATED_RELEASE, isolated_connection
from ...errors import OutputExists, RWNError
from ...identifiers import quote_ident, quote_literal
from .release_db import METADATA_TABLE, TRIALS_TABLE, NoReleaseMetadata, ReleaseMeta, cells_view_name, view_name

__all__ = ["report", "render"]

ESTIMATE_FIELDS = ("group_size", "estimate", "std_error", "ci_low", "ci_high")
VIEW_COLUMNS = ("value", "released_count") + ESTIMATE_FIELDS      # after the by-column, as release_db makes them
                                                                  # (the first: the sensitive attribute's name)
LABEL_CHARS = 16           # longer labels are shortened in plots (the tooltip and the table keep them whole)
CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em 2em;color:#222;max-width:1400px}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:2em}h3{font-size:1.05em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;vertical-align:top}
th{background:#f2f2f2}td.text,th.text{text-align:left}
.note{color:#555;max-width:60em}.warn{color:#a00}
svg.plot{display:block;margin:.5em 0}svg text{font-family:system-ui,sans-serif;font-size:10px;fill:#333}
svg .panel-title{font-size:11px;font-weight:600}svg .axis{stroke:#999;stroke-width:1}
svg .zero{stroke:#999;stroke-dasharray:3 3}svg .interval{stroke:#1f5fa8;stroke-width:1.5}
svg .estimate{fill:#1f5fa8}
"""


def report(release_path, output_path, overwrite: bool = False) -> str:
    """Write the HTML report of the release database `release_path` to `output_path`
    atomically (built in the run's private folder beside it, then published whole).
    An existing output is refused unless `overwrite`. Returns `output_path`."""
    release_path, output_path = os.fspath(release_path), os.fspath(output_path)
    if not os.path.isfile(release_path):
        raise RWNError(f"release database {release_path!r} does not exist")
    if os.path.isdir(output_path):
        raise RWNError(f"output {output_path!r} is a folder")
    if os.path.exists(output_path) and os.path.samefile(output_path, release_path):
        raise RWNError(f"output {output_path!r} is the release database; rwn_sql never modifies its input")
    if os.path.lexists(output_path) and not overwrite:
        raise OutputExists(f"output file {output_path!r} already exists (use --overwrite to replace it)")
    folder = files.output_folder(output_path)
    page = render(release_path)
    with files.scratch_dir(folder) as scratch:
        tmp = os.path.join(scratch, f"report-{secrets.token_hex(4)}.html")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(page)
        files.publish(tmp, output_path, overwrite)
    return output_path


def render(release_path: str) -> str:
    """The report's HTML text. The release is opened read-only on an isolated connection."""
    try:
        con, meta, release_sql = isolated_connection(None, os.path.abspath(release_path), None, None)
    except NoReleaseMetadata as exc:
        raise RWNError(str(exc)) from None
    except RWNError as exc:
        raise RWNError(f"{release_path!r} is not a release database ({exc})") from None
    try:
        parts = [_header(release_path, meta), _parameters(con, meta), _audit(con, meta, release_sql),
                 _estimates_intro(meta)]
        views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE database_name = ?",
                                           [ISOLATED_RELEASE]).fetchall()}
        overall = _rows(con, view_name(meta.name), meta, by=False)
        parts.append(_section(meta, None, overall, view_name(meta.name), 0))
        figure = 1
        for column in meta.public:
            name = view_name(meta.name, column)
            if name in views:
                parts.append(_section(meta, column, _rows(con, name, meta, by=True), name, figure))
                figure += 1
            else:
                parts.append(f"<h3>By {_e(column)}</h3><p class='note'>More than 100 distinct values: no one-way "
                             f"view; aggregate <code>{_e(cells_view_name(meta.name))}</code> over slices of "
                             f"{_e(column)} instead.</p>")
    finally:
        con.close()
    title = f"Release report: {meta.name}"
    return ("<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{_e(title)}</title><style>{CSS}</style></head>\n<body>\n" + "\n".join(parts)
            + "\n</body></html>\n")


def _e(value) -> str:
    """Text for HTML and inline SVG, in element content and quoted attributes alike."""
    return html.escape("NULL" if value is None else str(value), quote=True)


def _number(value, digits: int = 1) -> str:
    """A table cell: the exact value in data-value, rounded for reading."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "<td data-value=''>-</td>"
    shown = f"{value:,}" if isinstance(value, int) else f"{value:,.{digits}f}"
    return f"<td data-value='{float(value)!r}'>{shown}</td>"


def _header(release_path: str, meta: ReleaseMeta) -> str:
    return (f"<h1>Release report: {_e(meta.name)}</h1>"
            f"<p class='note'>Release database <code>{_e(os.path.basename(release_path))}</code>, read on "
            f"{_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC. Everything here comes from the release "
            f"itself (its published parameters and randomized table), never from the original data. "
            f"Counts of <code>{_e(meta.rows_sql.split('.', 1)[-1] if meta.rows_sql else meta.table_name)}</code> by {_e(meta.sensitive)} are biased by the "
            f"randomization: use the estimates below, the views <code>{_e(view_name(meta.name))}*</code> or "
            f"<code>SUM(estimate)</code> of <code>{_e(cells_view_name(meta.name))}</code>.</p>")


def _parameters(con, meta: ReleaseMeta) -> str:
    md = f"{ISOLATED_RELEASE}.{METADATA_TABLE}"
    cursor = con.execute(f"SELECT * FROM {md} WHERE table_name = ?", [meta.table_name])
    names = [d[0] for d in cursor.description]
    values = cursor.fetchall()[0]
    comments = dict(con.execute("SELECT column_name, comment FROM duckdb_columns() WHERE database_name = ? "
                                "AND table_name = ?", [ISOLATED_RELEASE, METADATA_TABLE]).fetchall())
    rows = []
    for name, value in zip(names, values):
        shown = (", ".join(quote_literal(str(v)) for v in value) if isinstance(value, list)   # values may hold ", "
                 else str(value).lower() if isinstance(value, bool) else value)
        rows.append(f"<tr><th class='text'>{_e(name)}</th><td class='text' data-name='{_e(name)}'>{_e(shown)}</td>"
                    f"<td class='text note'>{_e(comments.get(name) or '')}</td></tr>")
    return ("<h2>Published parameters</h2><p class='note'>The release's <code>rwn_release_metadata</code> row "
            "(never the key or raw data).</p><table id='parameters'><tr><th class='text'>parameter</th>"
            "<th class='text'>value</th><th class='text'>meaning</th></tr>" + "".join(rows) + "</table>")


def _audit(con, meta: ReleaseMeta, release_sql: str) -> str:
    """Personal groups as released and, for an enforced release, each block design with its
    worst exact tail over every count, recomputed from the published parameters."""
    public = ", ".join(quote_ident(c) for c in meta.public)
    sizes = con.execute(f"SELECT count(*) AS n FROM {release_sql}" + (f" GROUP BY {public}" if public else "")
                        ).fetchall()
    sizes = sorted(n for n, in sizes)
    records = sum(sizes)
    summary = [("personal groups (combinations of the public columns)", f"{len(sizes):,}"),
               ("records released", f"{records:,}"),
               ("group size: smallest, median, largest",
                f"{sizes[0]:,}, {sizes[len(sizes) // 2]:,}, {sizes[-1]:,}" if sizes else "-"),
               ("groups of one record", f"{sum(1 for n in sizes if n == 1):,}")]
    md = con.execute(f"SELECT suppressed_records FROM {ISOLATED_RELEASE}.{METADATA_TABLE} WHERE table_name = ?",
                     [meta.table_name]).fetchall()
    suppressed = md[0][0] if md else None
    summary.append(("records suppressed (groups without a design)", f"{suppressed or 0:,}"))
    designs = ""
    if meta.enforced:
        trials = dict(con.execute(f"SELECT size, t FROM {ISOLATED_RELEASE}.{TRIALS_TABLE}").fetchall())
        pp = privacy.PrivacyParams(p=meta.p, m=meta.m, eps=meta.epsilon, delta=meta.delta, test=meta.test)
        per_size: dict[int, int] = {}
        for n in sizes:
            per_size[n] = per_size.get(n, 0) + 1
        rows, below = [], 0
        for n in sorted(per_size):
            t = trials.get(n)
            worst = privacy.design_worst_tail(n, t, pp) if t else None
            below += per_size[n] if worst is None or worst < meta.delta else 0
            rows.append(f"<tr>{_number(n)}{_number(per_size[n])}{_number(t)}{_number(worst, 4)}</tr>")
        verdict = (f"{below:,} of {len(sizes):,} personal groups have a design whose worst exact tail is below "
                   f"delta = {meta.delta}" if below else
                   f"every personal group's design keeps both exact tails at or above delta = {meta.delta} "
                   f"at every count")
        summary.append((f"({meta.epsilon}, {meta.delta})-reconstruction privacy, enforced with the {meta.test} "
                        "test, rechecked here", verdict))
        designs = ("<details><summary>Block designs per group size</summary><table id='designs'><tr>"
                   "<th>group size</th><th>groups</th><th>blocks t</th><th>worst exact tail</th></tr>"
                   + "".join(rows) + "</table></details>")
    else:
        summary.append(("reconstruction privacy", "not enforced: no (epsilon, delta) guarantee holds for personal "
                        "groups; the data steward's audit (rwn-sql audit) needs the original data and is not "
                        "part of the release"))
    body = "".join(f"<tr><th class='text'>{_e(k)}</th><td class='text'>{_e(v)}</td></tr>" for k, v in summary)
    return f"<h2>Audit summary</h2><table id='audit'>{body}</table>{designs}"


def _estimates_intro(meta: ReleaseMeta) -> str:
    lumpy = (" The error of an enforced release is lumpy (records move in blocks), so its intervals are "
             "rougher approximations." if meta.enforced else "")
    return (f"<h2>Estimates</h2><p class='note'>Unbiased estimates of the number of records holding each "
            f"{_e(meta.sensitive)} value (p = {meta.p}, {meta.m} published values), from the release's views. "
            f"95% interval: estimate &plusmn; 1.96 &times; standard error (normal approximation), not clipped: a "
            f"bound, or the estimate itself, may fall below 0 or above the group size.{lumpy}</p>")


def _rows(con, name: str, meta: ReleaseMeta, by: bool) -> list[tuple]:
    """(by value or None, sensitive value, group_size, estimate, std_error, ci_low, ci_high) of a
    view; its sensitive column is named after the attribute (or `value`, in a release written
    before the views used the attribute's name)."""
    cursor = con.execute(f"SELECT * FROM {ISOLATED_RELEASE}.{quote_ident(name)} ORDER BY ALL")
    columns = tuple(d[0] for d in cursor.description)[1 if by else 0:]
    if columns[:1] not in ((meta.sensitive,), ("value",)) or columns[1:len(VIEW_COLUMNS)] != VIEW_COLUMNS[1:]:
        raise RWNError(f"view {name!r} of the release has columns {columns}, not those of a release's "
                       f"estimates view")
    offset = 1 if by else 0
    keep = [offset + VIEW_COLUMNS.index(c) for c in ("value",) + ESTIMATE_FIELDS]
    return [((r[0] if by else None),) + tuple(r[i] for i in keep) for r in cursor.fetchall()]


def _section(meta: ReleaseMeta, column: str | None, rows: list[tuple], view: str, figure: int) -> str:
    sa = meta.sensitive
    if not rows:
        return f"<h3>{_e(view)}</h3><p class='note'>The view has no rows (an empty release).</p>"
    if column is None:
        heading = f"All records, by {_e(sa)}"
        panels = [(None, [str(r[1]) for r in rows], rows)]
    else:
        heading = f"By {_e(column)} and {_e(sa)}"
        values = list(dict.fromkeys(r[1] for r in rows))
        panels = [(_label(v), [_label(r[0]) for r in rows if r[1] == v], [r for r in rows if r[1] == v])
                  for v in values]
    head = ("" if column is None else f"<th class='text'>{_e(column)}</th>") + (
        f"<th class='text'>{_e(sa)}</th><th>group size</th><th>estimate</th><th>std. error</th>"
        "<th>95% low</th><th>95% high</th>")
    body = []
    for r in rows:
        by = "" if column is None else f"<td class='text'>{_e(r[0])}</td>"
        body.append(f"<tr>{by}<td class='text'>{_e(r[1])}</td>{_number(r[2])}"
                    + "".join(_number(v) for v in r[3:]) + "</tr>")
    column_attr = "" if column is None else f" data-column='{_e(column)}'"
    table = (f"<details{' open' if len(rows) <= 40 else ''}><summary>Table ({len(rows)} rows, view "
             f"<code>{_e(view)}</code>)</summary><table class='estimates' id='table-{figure}'{column_attr}>"
             f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></details>")
    return f"<h3>{heading}</h3>" + _figure(panels, figure, column, sa) + table


def _label(value) -> str:
    return "NULL" if value is None else str(value)


def _figure(panels, figure: int, column: str | None, sa: str) -> str:
    """Small multiples in one inline SVG: per panel, a dot (estimate) and a vertical line
    (95% interval) for each label, on the panel's own y scale."""
    labels = max(len(p[1]) for p in panels)
    plot_w = min(max(labels * 18, 120), 480)
    plot_h, left, top, bottom = 130, 64, 20, 74         # left: room for ticks and the first rotated label
    panel_w, panel_h = left + plot_w + 12, top + plot_h + bottom
    per_row = max(1, 1200 // panel_w)
    rows = math.ceil(len(panels) / per_row)
    width, height = panel_w * min(per_row, len(panels)), panel_h * rows
    what = f"estimates of {sa}" + (f" per {column}" if column is not None else "") + " with 95% intervals"
    out = [f"<svg class='plot' id='plot-{figure}' xmlns='http://www.w3.org/2000/svg' width='{width}' "
           f"height='{height}' viewBox='0 0 {width} {height}' role='img' aria-label='{_e(what)}'>"]
    for i, (title, names, rows_) in enumerate(panels):
        x0, y0 = (i % per_row) * panel_w + left, (i // per_row) * panel_h + top
        out.append(_panel(title, names, rows_, x0, y0, plot_w, plot_h, column, sa))
    out.append("</svg>")
    return "".join(out)


def _panel(title, names, rows, x0, y0, plot_w, plot_h, column, sa) -> str:
    lows, highs = [r[5] for r in rows], [r[6] for r in rows]
    ticks = nice_ticks(min([0.0] + lows), max([1.0] + highs))
    lo, hi = ticks[0], ticks[-1]

    def y(v):
        return y0 + plot_h - (v - lo) / (hi - lo) * plot_h

    step = plot_w / len(names)
    every = math.ceil(len(names) / 24)          # at most 24 labels per panel: readable at 18 px
    out = ["<g class='panel'>"]
    if title is not None:
        fits = int((plot_w + 40) / 6.5)           # characters of the title's 11 px font over the panel
        full = f"{sa} = {title}"
        out.append(f"<text class='panel-title' x='{x0 - 40}' y='{y0 - 7}'><title>{_e(full)}</title>"
                   f"{_e(_short(full, fits))}</text>")
    out.append(f"<line class='axis' x1='{x0}' y1='{y0}' x2='{x0}' y2='{y0 + plot_h}'/>"
               f"<line class='axis' x1='{x0}' y1='{y0 + plot_h}' x2='{x0 + plot_w}' y2='{y0 + plot_h}'/>")
    for t in ticks:
        out.append(f"<text x='{x0 - 4}' y='{y(t) + 3:.1f}' text-anchor='end'>{t:g}</text>")
    if lo < 0:
        out.append(f"<line class='zero' x1='{x0}' y1='{y(0):.1f}' x2='{x0 + plot_w}' y2='{y(0):.1f}'/>")
    for j, (name, r) in enumerate(zip(names, rows)):
        x = x0 + (j + 0.5) * step
        what = (f"{column} = {name}, {sa} = {r[1]}" if column is not None else f"{sa} = {r[1]}")
        tip = f"{what}: estimate {r[3]:.1f}, 95% interval [{r[5]:.1f}, {r[6]:.1f}], group size {r[2]}"
        out.append(f"<g class='mark'><title>{_e(tip)}</title>"
                   f"<line class='interval' x1='{x:.1f}' y1='{y(r[5]):.1f}' x2='{x:.1f}' y2='{y(r[6]):.1f}'/>"
                   f"<circle class='estimate' cx='{x:.1f}' cy='{y(r[3]):.1f}' r='2.5'/></g>")
        if j % every == 0:
            ly = y0 + plot_h + 10
            out.append(f"<text x='{x:.1f}' y='{ly}' text-anchor='end' transform='rotate(-45 {x:.1f} {ly})'>"
                       f"{_e(_short(name, LABEL_CHARS))}</text>")
    out.append("</g>")
    return "".join(out)


def _short(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars - 1] + "\u2026"


def nice_ticks(low: float, high: float, count: int = 4) -> list[float]:
    """Round tick values covering [low, high]: steps of 1, 2 or 5 times a power of ten."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        high = low + 1.0
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(s * power for s in (1, 2, 5, 10) if s * power >= raw)
    start = math.floor(low / step) * step
    ticks = [start]
    while ticks[-1] < high:
        ticks.append(ticks[-1] + step)
    return [round(t, 12) for t in ticks]
