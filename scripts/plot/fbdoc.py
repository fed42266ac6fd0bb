"""fbdoc — one report, two renderings: Markdown (report.md) and self-contained HTML (report.html).

A document is a list of blocks, built by fbreport:

    Heading(level, text)           Para(text)          Bullets([text, ...])
    Table(header, align, rows)     Code(text)          Figure(name, title, image, svg, caption, code)

Text is Markdown inline markup of four kinds only: `code`, **bold**, _em_ and
[text](href).  to_markdown() writes it as is; to_html() converts it, inlines
each figure's SVG (ids prefixed per figure, so several SVGs share one page) or,
without an SVG, its PNG as a data: URI.  The page needs no network: no
scripts, no fonts, no style sheets but its own, and it fits a phone (viewport
meta, max-width, tables and code scroll sideways).

Standard library only.
"""

import base64
import html
import re
from dataclasses import dataclass, field


@dataclass
class Heading:
    level: int
    text: str


@dataclass
class Para:
    text: str


@dataclass
class Bullets:
    items: list


@dataclass
class Table:
    header: tuple
    align: tuple          # "---" left, "--:" right, one per column
    rows: list


@dataclass
class Code:
    text: str


@dataclass
class Figure:
    name: str
    title: str            # the alt text
    image: str            # file name shown in Markdown (PNG when drawn)
    svg: str = ""         # path of the SVG to inline in HTML ("" when not drawn as SVG)
    png: str = ""         # path of the PNG (the HTML fallback)
    caption: list = field(default_factory=list)     # paragraphs (inline markup)
    code: str = ""        # the commands that reproduce it


def slug(text):
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    s = re.sub(r"[^\w\- ]", "", text.lower(), flags=re.UNICODE)
    return s.replace(" ", "-")


# ---- Markdown ----

def _md_table(t):
    row = lambda cells: "| " + " | ".join(str(c) for c in cells) + " |"   # noqa: E731
    return "\n".join([row(t.header), "|" + "|".join(t.align) + "|"] + [row(r) for r in t.rows])


def _md_block(b):
    if isinstance(b, Heading):
        return "#" * b.level + " " + b.text
    if isinstance(b, Para):
        return b.text
    if isinstance(b, Bullets):
        return "\n".join("- " + i.replace("\n", "\n  ") for i in b.items)
    if isinstance(b, Table):
        return _md_table(b)
    if isinstance(b, Code):
        return "```sh\n" + b.text + "\n```"
    if isinstance(b, Figure):
        parts = [f"![{b.title}]({b.image})"] + b.caption
        if b.code:
            parts.append("```sh\n" + b.code + "\n```")
        return "\n\n".join(parts)
    raise TypeError(f"not a block: {b!r}")


def to_markdown(blocks):
    return "\n\n".join(_md_block(b) for b in blocks) + "\n"


# ---- HTML ----

_INLINE = re.compile(r"\*\*(.+?)\*\*|\[([^\]]+)\]\(([^)\s]+)\)|(?<![\w])_(.+?)_(?![\w])")


def _inline_plain(text):
    """Escape text and convert **bold**, [text](href) and _em_ (not code spans)."""
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(html.escape(text[pos:m.start()], quote=False))
        if m.group(1) is not None:
            out.append(f"<strong>{_inline_plain(m.group(1))}</strong>")
        elif m.group(2) is not None:
            out.append(f'<a href="{html.escape(m.group(3))}">{_inline_plain(m.group(2))}</a>')
        else:
            out.append(f"<em>{_inline_plain(m.group(4))}</em>")
        pos = m.end()
    out.append(html.escape(text[pos:], quote=False))
    return "".join(out)


def inline(text):
    """Markdown inline markup as HTML: code spans first, the rest by _inline_plain."""
    parts = text.split("`")
    if len(parts) % 2 == 0:                  # an unpaired backtick: no code spans
        return _inline_plain(text)
    return "".join(f"<code>{html.escape(p, quote=False)}</code>" if i % 2 else _inline_plain(p)
                   for i, p in enumerate(parts))


def _svg_inline(path, prefix, title):
    """The SVG at path as an inline element: prolog and metadata dropped, fixed size dropped
    (the viewBox scales it), every id prefixed so several figures share one document."""
    with open(path, "r", encoding="utf-8") as f:
        svg = f.read()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)     # RDF about the file: not needed
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    if ids:
        pat = re.compile(r'(\bid="|#)(' + "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
                         + r')(?=[")])')
        svg = pat.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", svg)
    head_end = svg.index(">")
    head = re.sub(r'\s(width|height)="[^"]*"', "", svg[:head_end])
    head += f' role="img" aria-label="{html.escape(title)}"'
    return head + svg[head_end:]


def _png_inline(path, title):
    with open(path, "rb") as f:
        data = base64.b64encode(f.read()).decode("ascii")
    return f'<img alt="{html.escape(title)}" src="data:image/png;base64,{data}">'


def _html_table(t):
    right = [a.endswith(":") for a in t.align]
    head = "".join(f"<th>{inline(str(h))}</th>" for h in t.header)
    rows = "".join("<tr>" + "".join(f'<td{" class=r" if right[i] else ""}>{inline(str(c))}</td>'
                                    for i, c in enumerate(r)) + "</tr>\n" for r in t.rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead>\n<tbody>\n{rows}</tbody></table></div>'


def _html_block(b):
    if isinstance(b, Heading):
        return f'<h{b.level} id="{slug(b.text)}">{inline(b.text)}</h{b.level}>'
    if isinstance(b, Para):
        return f"<p>{inline(b.text)}</p>"
    if isinstance(b, Bullets):
        return "<ul>\n" + "".join(f"<li>{inline(i)}</li>\n" for i in b.items) + "</ul>"
    if isinstance(b, Table):
        return _html_table(b)
    if isinstance(b, Code):
        return f"<pre><code>{html.escape(b.text, quote=False)}</code></pre>"
    if isinstance(b, Figure):
        img = _svg_inline(b.svg, b.name, b.title) if b.svg else _png_inline(b.png, b.title)
        cap = "".join(f"<p>{inline(c)}</p>" for c in b.caption)
        code = f"<pre><code>{html.escape(b.code, quote=False)}</code></pre>" if b.code else ""
        return f'<figure id="fig-{b.name}">{img}<figcaption>{cap}{code}</figcaption></figure>'
    raise TypeError(f"not a block: {b!r}")


STYLE = """\
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
 max-width:62rem;margin:0 auto;padding:0 1rem 3rem;line-height:1.45;color:#1a1a1a;background:#fff}
h1{font-size:1.5rem}h2{font-size:1.25rem;border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
h3{font-size:1.05rem}
.scroll{overflow-x:auto;margin:.5rem 0}
table{border-collapse:collapse;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.2rem .45rem;vertical-align:top}th{background:#f3f3f3}
td.r{text-align:right;white-space:nowrap}
figure{margin:1rem 0 2rem}figure svg,figure img{display:block;width:100%;height:auto;max-width:100%}
figcaption{font-size:.92rem}
pre{overflow-x:auto;background:#f6f6f6;padding:.5rem .7rem;font-size:.8rem;border-radius:3px}
code{font-size:.9em;background:#f3f3f3;padding:0 .15rem;border-radius:2px}pre code{background:none;padding:0}
"""


def to_html(blocks, title):
    body = "\n".join(_html_block(b) for b in blocks)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n"
            f"{body}\n</body>\n</html>\n")
