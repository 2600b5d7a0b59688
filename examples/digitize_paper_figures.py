"""Digitize the RWN paper's comparison figures from the stored PNG outputs of its notebook (issue #27).

The notebook is ``Experiments/SDC Comparison (bodyfat).ipynb`` of noah-perry/RWN-privacy. Its cells 15,
19, 23, 27 and 31 hold R base-graphics plots (x = tuning parameter index 1..15, xlim c(1, 15)) of three
series: RWN (black "#000000", pch 15 square), rank swapping (red "#DF536B", pch 17 triangle) and
microaggregation (green "#61D04F", pch 19 circle), each joined by 1-px lines of its colour.

Per panel: the plot box is the black rectangle whose edges are runs of black pixels spanning most of the
image; the axis maps are least-squares fits of the outward tick marks (x ticks 2, 4, ..., 14; y ticks as
R's pretty() of ylim) and are checked against the box (R's default xaxs/yaxs "r": box = lim -+ 4 %).
Markers are found by colour: each colour's legend marker (the legend's three markers, one per colour
stacked at one x, found after a 3x3 opening removes the 1-px lines) gives a template of its shape; a data
marker is the template placement near its index's column covering the most pixels of its colour while
lying on non-white pixels, and its point is the template centroid (R's point for all three shapes). A
marker partly covered by a later-drawn one (draw order black, red, green) gets the same fit near the
estimate from its series' own line segments; a marker fully covered is read off those segments, traced
from the neighbouring markers.

Run from the project root:
    python examples/digitize_paper_figures.py "/tmp/sdc.ipynb" [--out examples/data/rwn_paper_figures.csv]
        [--overlay-dir /tmp]
Only numpy is needed (the PNGs are decoded with zlib).
"""
from __future__ import annotations

import argparse
import base64
import csv
import json
import struct
import zlib
from pathlib import Path

import numpy as np

COLOURS = {"rwn": (0, 0, 0), "rank_swap": (223, 83, 107), "mdav": (97, 208, 79)}  # draw order
PARAMS = {"rwn": [round(0.25 + 0.05 * i, 2) for i in range(15)],
          "rank_swap": [12 + 3 * i for i in range(15)],
          "mdav": list(range(2, 17))}
# cell -> panels (left to right): (measure, ylim, y tick values)
PANELS = {
    15: [("dcr_mean_raw", (0, 16), [0, 5, 10, 15])],
    19: [("sdid", (0, 1), [0, .2, .4, .6, .8, 1]), ("rmdid", (0, 1), [0, .2, .4, .6, .8, 1])],
    23: [("corr_mad", (0, .5), [0, .1, .2, .3, .4, .5])],
    27: [("pc1_loading_mad", (0, .3), [0, .05, .1, .15, .2, .25, .3]),
         ("pc2_loading_mad", (0, .3), [0, .05, .1, .15, .2, .25, .3])],
    31: [("reg_coef_mad", (0, 1.8), [0, .5, 1, 1.5]), ("r2", (0, 1), [0, .2, .4, .6, .8, 1])],
}
X_TICKS = [2, 4, 6, 8, 10, 12, 14]
XLIM = (1, 15)
HALF = 8  # half-width (px) of the window searched around a marker's expected column


# ----------------------------------------------------------------------------------------------- PNG I/O
def _unfilter(raw: bytes, h: int, stride: int, bpp: int) -> np.ndarray:
    out = np.zeros((h, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    for y in range(h):
        f = raw[y * (stride + 1)]
        cur = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int32)
        if f == 2:
            cur = (cur + prev) & 255
        elif f in (1, 3, 4):
            cur = cur.copy()
            for x in range(stride):
                a = int(cur[x - bpp]) if x >= bpp else 0
                b = int(prev[x])
                c = int(prev[x - bpp]) if x >= bpp else 0
                if f == 1:
                    pred = a
                elif f == 3:
                    pred = (a + b) >> 1
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if (pa <= pb and pa <= pc) else (b if pb <= pc else c)
                cur[x] = (cur[x] + pred) & 255
        out[y] = cur
        prev = cur
    return out


def read_png(data: bytes) -> np.ndarray:
    """Decode an 8-bit non-interlaced PNG (palette, grey, RGB or RGBA) to an (h, w, 3) uint8 array."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, plte = 8, [], None
    w = h = ct = 0
    while pos < len(data):
        n, = struct.unpack(">I", data[pos:pos + 4])
        typ, chunk = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if typ == b"IHDR":
            w, h, depth, ct, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and interlace == 0, "only 8-bit non-interlaced PNGs"
        elif typ == b"PLTE":
            plte = np.frombuffer(chunk, np.uint8).reshape(-1, 3)
        elif typ == b"IDAT":
            idat.append(chunk)
    bpp = {0: 1, 2: 3, 3: 1, 6: 4}[ct]
    pix = _unfilter(zlib.decompress(b"".join(idat)), h, w * bpp, bpp)
    if ct == 3:
        return plte[pix]
    if ct == 0:
        return np.repeat(pix[..., None], 3, axis=2)
    return pix.reshape(h, w, bpp)[..., :3].copy()


def write_png(path: Path, img: np.ndarray) -> None:
    h, w, _ = img.shape
    raw = b"".join(b"\x00" + img[y].astype(np.uint8).tobytes() for y in range(h))

    def chunk(typ: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + typ + body + struct.pack(">I", zlib.crc32(typ + body) & 0xFFFFFFFF)

    Path(path).write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                           + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def notebook_pngs(path: Path) -> dict[int, bytes]:
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    out = {}
    for i in PANELS:
        for o in cells[i].get("outputs", []):
            if "image/png" in o.get("data", {}):
                out[i] = base64.b64decode(o["data"]["image/png"])
    return out


# ------------------------------------------------------------------------------------ binary morphology
def _shift_and(m: np.ndarray) -> np.ndarray:
    p = np.pad(m, 1)
    out = np.ones_like(m)
    for dy in range(3):
        for dx in range(3):
            out &= p[dy:dy + m.shape[0], dx:dx + m.shape[1]]
    return out


def _shift_or(m: np.ndarray) -> np.ndarray:
    p = np.pad(m, 1)
    out = np.zeros_like(m)
    for dy in range(3):
        for dx in range(3):
            out |= p[dy:dy + m.shape[0], dx:dx + m.shape[1]]
    return out


def blobs_mask(m: np.ndarray) -> np.ndarray:
    """Closing (fills 1-px lines drawn across a marker) then opening (drops the 1-px lines), 3x3."""
    closed = _shift_and(_shift_or(m))
    return _shift_or(_shift_and(closed)) & m


def components(m: np.ndarray) -> list[np.ndarray]:
    """8-connected components of a boolean mask, each as an (n, 2) array of (y, x)."""
    seen = np.zeros_like(m)
    comps = []
    for y0, x0 in zip(*np.nonzero(m)):
        if seen[y0, x0]:
            continue
        stack, pts = [(y0, x0)], []
        seen[y0, x0] = True
        while stack:
            y, x = stack.pop()
            pts.append((y, x))
            for yy in range(max(y - 1, 0), min(y + 2, m.shape[0])):
                for xx in range(max(x - 1, 0), min(x + 2, m.shape[1])):
                    if m[yy, xx] and not seen[yy, xx]:
                        seen[yy, xx] = True
                        stack.append((yy, xx))
        comps.append(np.array(pts))
    return comps


# ------------------------------------------------------------------------------------------- axes
def _runs(line: np.ndarray) -> int:
    best = cur = 0
    for v in line:
        cur = cur + 1 if v else 0
        best = max(best, cur)
    return best


def find_boxes(black: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Plot boxes (left, right, top, bottom) from long vertical and horizontal runs of black."""
    h, w = black.shape
    cols = [x for x in range(w) if _runs(black[:, x]) > 0.5 * h]
    rows = [y for y in range(h) if _runs(black[y]) > 0.3 * w]
    assert len(rows) == 2 and len(cols) % 2 == 0, (rows, cols)
    return [(cols[i], cols[i + 1], rows[0], rows[1]) for i in range(0, len(cols), 2)]


def _fit(pix: list[float], vals: list[float]) -> tuple[float, float, float]:
    b, a = np.polyfit(pix, vals, 1)
    resid = np.asarray(vals) - (a + b * np.asarray(pix))
    return a, b, float(np.abs(resid).max() / abs(b))


def axis_maps(black: np.ndarray, box: tuple[int, int, int, int], yticks: list[float], ylim) -> dict:
    """Pixel -> data maps from the tick marks; the box check (usr = lim -+ 4 %) is kept in the result."""
    left, right, top, bottom = box
    xt = [x for x in range(left, right + 1) if black[bottom + 2:bottom + 6, x].all()]
    yt = [y for y in range(top, bottom + 1) if black[y, left - 5:left - 1].all()]
    assert len(xt) == len(X_TICKS) and len(yt) == len(yticks), (xt, yt)
    ax, bx, rx = _fit(xt, X_TICKS)
    ay, by, ry = _fit(yt, sorted(yticks, reverse=True))
    d = 0.04 * (XLIM[1] - XLIM[0])
    e = 0.04 * (ylim[1] - ylim[0])
    box_err = max(abs(ax + bx * left - (XLIM[0] - d)), abs(ax + bx * right - (XLIM[1] + d))) / abs(bx), \
        max(abs(ay + by * bottom - (ylim[0] - e)), abs(ay + by * top - (ylim[1] + e))) / abs(by)
    return {"ax": ax, "bx": bx, "ay": ay, "by": by, "tick_resid_px": (rx, ry), "box_err_px": box_err,
            "px_per_unit_y": 1 / abs(by)}


# ------------------------------------------------------------------------------------------- markers
def colour_masks(img: np.ndarray) -> dict[str, np.ndarray]:
    return {s: np.all(img == np.array(c, np.uint8), axis=2) for s, c in COLOURS.items()}


def _centroid(pts: np.ndarray) -> np.ndarray:
    return pts.mean(axis=0)


def find_legend(blobs: dict[str, list[np.ndarray]]) -> dict[str, np.ndarray]:
    """The legend's three markers: one blob per colour at one x, stacked black-red-green evenly."""
    best = None
    for b0 in blobs["rwn"]:
        c0 = _centroid(b0)
        for b1 in blobs["rank_swap"]:
            c1 = _centroid(b1)
            if abs(c1[1] - c0[1]) > 1.5 or not 10 < c1[0] - c0[0] < 60:
                continue
            for b2 in blobs["mdav"]:
                c2 = _centroid(b2)
                gap = abs((c2[0] - c1[0]) - (c1[0] - c0[0]))
                if abs(c2[1] - c0[1]) <= 1.5 and gap < 3 and (best is None or gap < best[0]):
                    best = (gap, {"rwn": b0, "rank_swap": b1, "mdav": b2})
    assert best is not None, "legend not found"
    return best[1]


def template(blob: np.ndarray) -> np.ndarray:
    """The legend marker's core pixels (opened, legend line trimmed, rim dropped), as integer (y, x) offsets
    from their rounded centroid.

    The centroid is R's point for all three shapes (the triangle is drawn around its area centroid);
    the opening trims at most the triangle's apex pixels. place() adds the centroid's fraction back.
    """
    keep = np.ones(len(blob), bool)
    for y in np.unique(blob[:, 0]):  # drop what the legend line leaves beyond the rows above and below
        nb = blob[np.abs(blob[:, 0] - y) == 1, 1]
        row = blob[:, 0] == y
        if len(nb):
            keep &= ~row | ((blob[:, 1] >= nb.min()) & (blob[:, 1] <= nb.max()))
    blob = blob[keep]
    have = {tuple(p) for p in blob}  # the core: rasterisation varies by a pixel at the rim
    core = np.array([p for p in blob if all((p[0] + a, p[1] + b) in have
                                            for a, b in ((1, 0), (-1, 0), (0, 1), (0, -1)))])
    return core - np.round(core.mean(axis=0)).astype(int)


def score_map(tmpl: np.ndarray, hit: np.ndarray, covered: np.ndarray, x: float, ys: np.ndarray):
    """For placements (y in ys, x + dx, dx in -3..3): template pixels on `hit` (-1 where more than 2 of
    the template's pixels are white: rasterisation differs by a pixel or two between placements)."""
    dxs = np.arange(-3, 4)
    score = np.zeros((len(ys), len(dxs)), int)
    bare = np.zeros((len(ys), len(dxs)), int)
    for ty, tx in tmpl:
        for k, dx in enumerate(dxs):
            yy, xx = ys + ty, int(round(x)) + dx + tx
            score[:, k] += hit[yy, xx]
            bare[:, k] += ~covered[yy, xx]
    return np.where(bare <= 2, score, -1), dxs


def place(tmpl: np.ndarray, hit: np.ndarray, covered: np.ndarray, x: float, ys: np.ndarray):
    """Best template placement: mean (y, x) of those within 2 px of the top count, half-range, count."""
    score, dxs = score_map(tmpl, hit, covered, x, ys)
    best = score.max()
    iy, ix = np.nonzero(score >= best - 2)
    pos = np.column_stack([ys[iy], int(round(x)) + dxs[ix]]) + tmpl.mean(axis=0)
    return pos.mean(axis=0), (pos.max(axis=0) - pos.min(axis=0)) / 2, int(best)


def _trace_line(raw: np.ndarray, start: np.ndarray, x_end: int, step: int) -> list[tuple[float, float]]:
    """Follow a 1-px line of one colour from a marker edge toward x_end; (x, mean y) per column."""
    y = start[0]
    pts = []
    for x in range(int(round(start[1])) + step * (HALF - 1), x_end, step):
        ys = np.nonzero(raw[:, x])[0]
        ys = ys[np.abs(ys - y) <= 6]
        if len(ys) == 0:
            continue
        y = ys.mean()
        pts.append((x, y))
    return pts


def _series_blobs(masks: dict[str, np.ndarray], box) -> dict[str, list[np.ndarray]]:
    """Marker-sized blobs per colour. Lines of later-drawn colours crossing a marker count as its colour."""
    left, right, top, bottom = box
    inner = np.zeros_like(masks["rwn"])
    inner[top + 2:bottom - 1, left + 2:right - 1] = True
    opened = {s: blobs_mask(m & inner) for s, m in masks.items()}
    out = {}
    for s, m in masks.items():
        later = np.zeros_like(m)
        for t in _occluders(s):
            later |= masks[t] & ~opened[t]
        out[s] = [c for c in components(blobs_mask((m | later) & inner)) if len(c) >= 12]
    return out


def _occluders(series: str) -> list[str]:
    order = list(COLOURS)
    return order[order.index(series) + 1:]


def locate_marker(s: str, i: int, ctx: dict) -> dict | None:
    """Marker i (1-based) of series s when fully visible (>= 90 % of its template's pixels), else None."""
    x_exp = (i - ctx["ax"]) / ctx["bx"]
    tmpl = ctx["tmpl"][s]
    c, spread, best = place(tmpl, ctx["hit"][s], ctx["covered"], x_exp, ctx["ys"])
    if best < 0.9 * len(tmpl):
        return None
    return {"y": c[0], "x": c[1], "how": "marker", "err_px": 0.5 + float(spread[0])}


def _from_lines(s: str, i: int, ctx: dict, found: dict) -> tuple[float, float, int]:
    """Marker i read off the traced line segments from its neighbours: (y, half-disagreement, count)."""
    x_exp = (i - ctx["ax"]) / ctx["bx"]
    ests = []
    for j, step in ((i - 1, 1), (i + 1, -1)):
        nb = found.get(j)
        if nb is None:
            continue
        pts = _trace_line(ctx["raw"][s], np.array([nb["y"], nb["x"]]), int(round(x_exp)) - step * HALF, step)
        if len(pts) >= 5:
            xs, ys = np.array(pts).T
            b, a = np.polyfit(xs, ys, 1)
            ests.append(a + b * x_exp)
    if not ests:
        raise RuntimeError(f"{s} index {i}: marker hidden and no line segment to read")
    return float(np.mean(ests)), float(np.ptp(ests) / 2), len(ests)


def locate_covered(s: str, i: int, ctx: dict, found: dict) -> dict:
    """A marker partly or wholly under later-drawn ones: template fit near the line-segment estimate."""
    x_exp = (i - ctx["ax"]) / ctx["bx"]
    y_line, dis, n = _from_lines(s, i, ctx, found)
    tmpl = ctx["tmpl"][s]
    ys = np.arange(int(y_line) - 15, int(y_line) + 16)
    c, spread, best = place(tmpl, ctx["hit"][s], ctx["covered"], x_exp, ys)
    if best >= 0.2 * len(tmpl):
        return {"y": c[0], "x": c[1], "err_px": 0.5 + float(spread[0]), "line_y": y_line,
                "how": f"partly hidden ({best}/{len(tmpl)} px visible): template fit"}
    return {"y": y_line, "x": x_exp, "err_px": 1.0 + dis + (1.0 if n == 1 else 0.0), "line_y": y_line,
            "how": f"hidden: from {n} line segment(s)"}


def _context(img: np.ndarray, box, yticks, ylim) -> dict:
    masks = colour_masks(img)
    ctx = axis_maps(masks["rwn"], box, yticks, ylim)
    legend = find_legend(_series_blobs(masks, box))
    left, right, top, bottom = box
    hit = {}
    for s, m in masks.items():  # own pixels and thin lines of later colours, legend markers blanked
        later = np.zeros_like(m)
        for t in _occluders(s):
            later |= masks[t] & ~blobs_mask(masks[t])
        hit[s] = m | later
    for b in legend.values():
        (y0, x0), (y1, x1) = b.min(axis=0), b.max(axis=0)
        for h in hit.values():
            h[y0 - 2:y1 + 3, x0 - 2:x1 + 3] = False
    ctx.update(raw=masks, hit=hit, covered=img.sum(axis=2) < 600, ys=np.arange(top + 8, bottom - 7),
               tmpl={s: template(legend[s]) for s in COLOURS})
    return ctx


def digitize_panel(img: np.ndarray, box, measure: str, ylim, yticks) -> tuple[list[dict], dict]:
    ctx = _context(img, box, yticks, ylim)
    rows = []
    for s in COLOURS:
        found = {i: locate_marker(s, i, ctx) for i in range(1, 16)}
        found = {i: f for i, f in found.items() if f is not None}
        for i in range(1, 16):
            if i not in found:
                found[i] = locate_covered(s, i, ctx, found)
        for i, f in sorted(found.items()):
            rows.append({"measure": measure, "method": s, "index": i, "parameter": PARAMS[s][i - 1],
                         "value": ctx["ay"] + ctx["by"] * f["y"], "px": (f["x"], f["y"]),
                         "err": f["err_px"] * abs(ctx["by"]), "how": f["how"]})
    return rows, ctx


# ------------------------------------------------------------------------------------------- output
def draw_overlay(img: np.ndarray, rows: list[dict]) -> np.ndarray:
    """Extracted centres as blue crosses (5 px arms) on a copy of the figure."""
    out = img.copy()
    for r in rows:
        x, y = int(round(r["px"][0])), int(round(r["px"][1]))
        colour = (0, 90, 255) if r["how"] == "marker" else (255, 140, 0)
        for d in range(-5, 6):
            out[y, x + d] = colour
            out[y + d, x] = colour
    return out


def digitize(notebook: Path, overlay_dir: Path | None = None) -> tuple[list[dict], list[dict]]:
    rows, checks = [], []
    for cell, data in notebook_pngs(notebook).items():
        img = read_png(data)
        boxes = find_boxes(colour_masks(img)["rwn"])
        assert len(boxes) == len(PANELS[cell]), (cell, boxes)
        cell_rows = []
        for box, (measure, ylim, yticks) in zip(boxes, PANELS[cell]):
            try:
                r, ctx = digitize_panel(img, box, measure, ylim, yticks)
            except Exception as e:
                raise RuntimeError(f"cell {cell} {measure}: {e}") from e
            cell_rows += r
            checks.append({"cell": cell, "measure": measure, "box": box, "px_per_unit_y": ctx["px_per_unit_y"],
                           "tick_resid_px": ctx["tick_resid_px"], "box_err_px": ctx["box_err_px"]})
        rows += cell_rows
        if overlay_dir is not None:
            write_png(Path(overlay_dir) / f"overlay_cell{cell}.png", draw_overlay(img, cell_rows))
    return rows, checks


def write_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["measure", "method", "index", "parameter", "value"])
        for r in rows:
            w.writerow([r["measure"], r["method"], r["index"], r["parameter"], f"{r['value']:.3f}"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("notebook", type=Path, help="SDC Comparison (bodyfat).ipynb")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "data" / "rwn_paper_figures.csv")
    p.add_argument("--overlay-dir", type=Path, default=None, help="write overlay_cell<N>.png here")
    args = p.parse_args()
    rows, checks = digitize(args.notebook, args.overlay_dir)
    for c in checks:
        print(f"cell {c['cell']} {c['measure']:16s} box {c['box']} {c['px_per_unit_y']:.1f} px/unit, "
              f"tick fit max resid {c['tick_resid_px'][0]:.2f}/{c['tick_resid_px'][1]:.2f} px, "
              f"box vs lim+-4% {c['box_err_px'][0]:.2f}/{c['box_err_px'][1]:.2f} px")
    for r in rows:
        if r["how"] != "marker":
            print(f"  {r['measure']} {r['method']} idx {r['index']}: {r['how']} "
                  f"(value {r['value']:.3f} +- {r['err']:.3f})")
    write_csv(rows, args.out)
    print(f"{len(rows)} values -> {args.out}")


if __name__ == "__main__":
    main()
