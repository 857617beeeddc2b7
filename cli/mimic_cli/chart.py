"""A self-contained SVG bar chart (no script, no fonts to fetch), for `mimic what-if`."""
import html

from .common import format_ns

WIDTH, LABEL_W, VALUE_W, BAR_H, GAP, TOP = 760, 260, 150, 22, 8, 40


def render(title, bars):
    """bars: (label, nanoseconds); each bar's length is its time, its note the speed-up against
    the first bar."""
    longest = max(ns for _, ns in bars) or 1
    reference = bars[0][1]
    scale = (WIDTH - LABEL_W - VALUE_W) / longest
    height = TOP + len(bars) * (BAR_H + GAP) + GAP
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="10" y="22" font-size="15" font-weight="bold">{html.escape(title)}</text>']
    for index, (label, ns) in enumerate(bars):
        y = TOP + index * (BAR_H + GAP)
        length = max(1.0, ns * scale)
        speedup = f"{reference / ns:.2f}x" if ns else "-"
        parts += [f'<text x="{LABEL_W - 8}" y="{y + BAR_H - 6}" text-anchor="end">'
                  f'{html.escape(label)}</text>',
                  f'<rect x="{LABEL_W}" y="{y}" width="{length:.1f}" height="{BAR_H}" '
                  f'fill="{"#7f7f7f" if index == 0 else "#1f77b4"}">'
                  f'<title>{html.escape(label)}: {format_ns(ns)}</title></rect>',
                  f'<text x="{LABEL_W + length + 6:.1f}" y="{y + BAR_H - 6}">'
                  f'{format_ns(ns)} ({speedup})</text>']
    parts.append("</svg>\n")
    return "\n".join(parts)


def save_bar_chart(path, title, bars):
    with open(path, "w", encoding="utf-8") as out:
        out.write(render(title, bars))
    return path
