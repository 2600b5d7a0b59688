"""The tuning report of a sweep (rwn_sql.evaluation.tune.sweep): a self-contained HTML page with
what the sweep shows in words (summary_lines: every setting's risk and utility, which settings
no other beats on both, the Pareto frontier), the paper's Figure 1 (distance to the closest
record against neighbourhood size, one panel per eps, on a log axis when the sizes span more
than a decade), a risk-against-utility plot (axes chosen among tune.MEASURES, each point
labelled with its parameter, error bars of one standard deviation) and the table of every
setting. matplotlib (the `report` extra) is imported only to draw the plots.
"""
from __future__ import annotations

import base64
import html
import io
import json
import math

from ..errors import RWNError
from .tune import HIGHER_IS_BETTER, MEASURES, SweepResult, _atomic_write, check_axes

def _png(fig) -> str:
    buf = io.BytesIO()
    # no bbox_inches="tight": it draws the figure once more to measure it (every figure drawn
    # twice); the figures' margins are fixed (subplots_adjust) and hold the labels
    fig.savefig(buf, format="png", dpi=110)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def figure1_data(result: SweepResult) -> dict:
    return {repr(e): v for e, v in result.figure1.items()}


def tradeoff_data(result: SweepResult, utility: str = "corr_mad", risk: str = "sdid") -> list[dict]:
    """One point per setting: its means of `utility` and `risk`, their standard deviations over
    the releases (None for one release) and the point's label (eps=0.3, P=12, k=4)."""
    return [{"label": s.label(), "method": s.method, "point": f"{s.parameter}={s.value:g}",
             "utility_loss": s.measures[utility][0], "utility_sd": s.measures[utility][1],
             "risk": s.measures[risk][0], "risk_sd": s.measures[risk][1]} for s in result.settings]


def _better(measure: str, a: float, b: float) -> bool:
    """a is strictly better than b on `measure` (lower risk or loss, unless HIGHER_IS_BETTER)."""
    return a > b if measure in HIGHER_IS_BETTER else a < b


def _value(s, measure: str) -> str:
    mean, sd = s.measures[measure]
    if mean is None:
        return f"{measure} -"
    return f"{measure} {mean:.4g}" + (f" (sd {sd:.2g})" if sd is not None else "")


def summary_lines(result: SweepResult, utility: str = "corr_mad", risk: str = "sdid") -> list[str]:
    """What the sweep shows, in words (the report's first section; the CLI prints it): every
    setting's `risk`, linkage rate and `utility` (mean and sd over its releases); the settings
    no other beats on both `risk` and `utility` (the Pareto frontier of the means) and, for each
    other setting, one that beats it on both; the lowest risk and the best utility reached."""
    check_axes(risk, utility)
    shown = [m for m in dict.fromkeys((risk, "linkage_rate", utility))]
    done = [s for s in result.settings if s.measures[risk][0] is not None and s.measures[utility][0] is not None]
    lines = [f"{len(result.settings)} settings; risk {risk} ({'higher is safer' if risk in HIGHER_IS_BETTER else 'lower is safer'}), "
             f"utility {utility} ({'higher is better' if utility in HIGHER_IS_BETTER else 'lower loses less'}); "
             "means over each setting's releases:"]
    lines += [f"  {s.label()}: " + ", ".join(_value(s, m) for m in shown) for s in result.settings]
    if not done:
        return lines + [f"no setting has both {risk} and {utility}"]

    def beats(a, b):
        ra, rb, ua, ub = a.measures[risk][0], b.measures[risk][0], a.measures[utility][0], b.measures[utility][0]
        return (not _better(risk, rb, ra) and not _better(utility, ub, ua)
                and (_better(risk, ra, rb) or _better(utility, ua, ub)))
    frontier = [s for s in done if not any(beats(o, s) for o in done)]
    lines.append(f"no other setting has both a safer {risk} and a better {utility} than: "
                 + "; ".join(s.label() for s in frontier) + " (the Pareto frontier)")
    for s in done:
        if s not in frontier:
            by = next(o for o in frontier if beats(o, s))
            safer = _better(risk, by.measures[risk][0], s.measures[risk][0])
            useful = _better(utility, by.measures[utility][0], s.measures[utility][0])
            how = ("safer and more useful" if safer and useful else "safer, as useful" if safer
                   else "as safe, more useful")
            lines.append(f"  {s.label()}: {by.label()} is {how} ({_value(by, risk)}, {_value(by, utility)})")
    safest = min(done, key=lambda s: -s.measures[risk][0] if risk in HIGHER_IS_BETTER else s.measures[risk][0])
    best = min(done, key=lambda s: -s.measures[utility][0] if utility in HIGHER_IS_BETTER else s.measures[utility][0])
    lines.append(f"safest {risk}: {safest.label()} ({_value(safest, risk)}), at {_value(safest, utility)}")
    lines.append(f"best {utility}: {best.label()} ({_value(best, utility)}), at {_value(best, risk)}")
    return lines


def figure1_xscale(result: SweepResult) -> str:
    """Figure 1's x axis: "log" when the neighbourhood sizes span more than a decade (the largest
    over 10 times the smallest), "symlog" (linear below 1) when some are 0 and the largest is
    over 10, else "linear"."""
    sizes = [v for d in result.figure1.values() for v in d["size"]]
    if not sizes or max(sizes) <= 10 * max(min(sizes), 1):
        return "linear"
    return "log" if min(sizes) > 0 else "symlog"


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RWNError('the report needs matplotlib: pip install "rwn_sql[report]"') from None
    return plt


def figure1_figure(result: SweepResult):
    """The paper's Figure 1, a matplotlib figure: per eps, each record's distance to the closest
    record against its neighbourhood size, lines at eps and k; x on figure1_xscale."""
    plt = _pyplot()
    from matplotlib.ticker import NullFormatter, ScalarFormatter
    eps_list = sorted(result.figure1)
    cols = min(4, len(eps_list))
    rows = math.ceil(len(eps_list) / cols)
    xscale = figure1_xscale(result)
    # on a log axis every panel spans the sizes of the whole grid, so the panels compare
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.8 * rows), squeeze=False, sharey=True,
                             sharex=xscale != "linear")
    for ax, eps in zip(axes.flat, eps_list):
        d = result.figure1[eps]
        ax.scatter(d["size"], d["dcr"], s=6, alpha=0.6)
        ax.axhline(eps, color="red", lw=0.8, label="eps")
        ax.axvline(result.k, color="green", lw=0.8, label="k")
        if xscale != "linear":
            ax.set_xscale(xscale, **({"linthresh": 1} if xscale == "symlog" else {}))
            ax.xaxis.set_major_formatter(ScalarFormatter())      # 10, 100 rather than 10^1, 10^2
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.tick_params(axis="x", labelbottom=True)          # shared, yet labelled in every panel
        # y given: matplotlib then skips moving the title clear of top ticks (there are none):
        # the same image (checked byte for byte), with less drawing
        ax.set_title(f"eps = {eps:g}", fontsize=9, y=1.0)
        ax.set_xlabel("neighbourhood size |S_i|" + ("" if xscale == "linear" else " (log scale)"), fontsize=8)
        ax.set_ylabel("distance to closest record", fontsize=8)
    for ax in list(axes.flat)[len(eps_list):]:
        ax.axis("off")
    # fixed spacing (tight_layout costs a draw of every panel), with room for the last row's labels
    fig.subplots_adjust(wspace=0.3, hspace=0.55, bottom=min(0.6 / (2.8 * rows), 0.3))
    return fig


def tradeoff_figure(result: SweepResult, utility: str = "corr_mad", risk: str = "sdid"):
    """Risk against utility, a matplotlib figure: one point per setting (the means over its
    releases) labelled with its parameter, error bars of one standard deviation each way, one
    line per method."""
    check_axes(risk, utility)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.8))
    points = tradeoff_data(result, utility, risk)
    for method in dict.fromkeys(p["method"] for p in points):
        pts = [p for p in points if p["method"] == method and p["utility_loss"] is not None and p["risk"] is not None]
        if not pts:
            continue
        x, y = [p["utility_loss"] for p in pts], [p["risk"] for p in pts]
        bars = ax.errorbar(x, y, xerr=[p["utility_sd"] or 0.0 for p in pts], yerr=[p["risk_sd"] or 0.0 for p in pts],
                           fmt="o-", ms=4, lw=1, elinewidth=0.7, capsize=2, label=method)
        for i, p in enumerate(pts):      # above and below in turn: neighbouring labels do not overlap
            ax.annotate(p["point"], (p["utility_loss"], p["risk"]), xytext=(3, 3 if i % 2 == 0 else -9),
                        textcoords="offset points", fontsize=6, color=bars.lines[0].get_color())
    ax.set_xlabel(f"utility: {utility} (higher is better)" if utility in HIGHER_IS_BETTER
                  else f"utility loss: {utility}")
    ax.set_ylabel(f"risk: {risk} (higher is safer)" if risk in HIGHER_IS_BETTER else f"risk: {risk}")
    ax.set_title("mean over the releases of each setting; bars: one standard deviation", fontsize=9)
    ax.legend()
    return fig


def report_html(result: SweepResult, path, utility: str = "corr_mad", risk: str = "sdid") -> None:
    """Write the self-contained HTML report (plots embedded as PNG; the numbers behind every
    plot embedded as JSON; every table cell carries its exact value). Written atomically."""
    check_axes(risk, utility)
    plt = _pyplot()
    strata = f"; strata: {html.escape(', '.join(result.strata))}" if result.strata else ""
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>rwn_sql tuning report</title>"
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}pre{white-space:pre-wrap}</style></head><body>",
             f"<h1>RWN tuning report</h1><p>Data: {html.escape(result.source)}; columns: "
             f"{html.escape(', '.join(result.columns))}{strata}; k = {result.k}, q = {result.q:g}.</p>"]
    parts += [f"<p class='note'>Note: {html.escape(note)}.</p>" for note in result.notes]
    parts.append("<h2>What the sweep shows</h2><pre id='summary'>"
                 + html.escape("\n".join(summary_lines(result, utility, risk))) + "</pre>")
    if result.figure1:
        fig = figure1_figure(result)
        parts.append("<h2>Closest-record distance against neighbourhood size (the paper's Figure 1)</h2>"
                     f"<img id='plot-figure1' data-xscale='{figure1_xscale(result)}' "
                     f"src='data:image/png;base64,{_png(fig)}'>"
                     f"<script type='application/json' id='data-figure1'>{json.dumps(figure1_data(result))}</script>")
        plt.close(fig)
    fig = tradeoff_figure(result, utility, risk)
    parts.append(f"<h2>Risk ({html.escape(risk)}) against utility ({html.escape(utility)}), one point per "
                 f"setting</h2><img id='plot-tradeoff' src='data:image/png;base64,{_png(fig)}'>"
                 f"<script type='application/json' id='data-tradeoff'>"
                 f"{json.dumps(tradeoff_data(result, utility, risk))}</script>")
    plt.close(fig)
    parts.append(_settings_table(result))
    parts.append("</body></html>")
    _atomic_write(path, lambda fh: fh.write("\n".join(parts)))


def _settings_table(result: SweepResult) -> str:
    def cell(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "<td data-value=''>-</td>"
        return f"<td data-value='{float(v)!r}'>{float(v):.4g}</td>"
    head = "".join(f"<th>{m} mean</th><th>{m} sd</th>" for m in MEASURES)
    rows = ["<h2>Every setting (mean and standard deviation over releases)</h2><table id='settings'>"
            f"<tr><th>method</th><th>parameter</th><th>value</th><th>reps</th><th>size max</th>"
            f"<th>share at k</th>{head}</tr>"]
    for s in result.settings:
        cells = "".join(cell(s.measures[m][0]) + cell(s.measures[m][1]) for m in MEASURES)
        rows.append(f"<tr><td>{s.method}</td><td>{s.parameter}</td>{cell(s.value)}<td>{s.reps}</td>"
                    f"{cell(s.sizes.get('size_max'))}{cell(s.sizes.get('share_at_k'))}{cells}</tr>")
    return "\n".join(rows) + "</table>"
