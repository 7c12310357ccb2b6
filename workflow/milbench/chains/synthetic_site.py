"""SYNTHETIC hyperlinked site in WebKB's layout (for the offline quickstart and tests).

``make_site(root, ...)`` writes ``root/webkb/<class>/<university>/<URL with '/' as '^'>`` files:
raw HTML behind an HTTP/MIME header (some files have none, as in the real crawl), with
class-specific words in one or two paragraphs of an otherwise generic page (so the positive
"instance" is a passage), and hyperlinks written in all the forms the resolver must handle:
absolute URLs with upper-case hosts and ``:80``, relative paths with ``..``, ``./``,
fragments, ``index.html`` vs trailing slash, directory pages stored without their trailing
slash, links to pages outside the collection, ``mailto:`` links, and a few pages with no link
at all (dropped by the chain).  Some files contain Windows-1252 bytes (not valid UTF-8).

The link pattern mimics WebKB's (mostly *between* classes: students -> advisors and courses,
faculty -> courses, students and projects, courses -> instructors).  Everything is seeded.
``truth.json`` beside ``webkb/`` lists every intended in-collection link (src URL, dst URL)
for tests.  Outputs built from this site carry ``synthetic: true``.
"""
from __future__ import annotations

import json
import posixpath
import tarfile
from pathlib import Path

import numpy as np

UNIVERSITIES = ("cornell", "texas", "washington", "wisconsin", "misc")
DEFAULT_SIZES = {"course": 24, "faculty": 18, "student": 30, "project": 8, "department": 3,
                 "staff": 5, "other": 40}
CLASS_WORDS = {
    "course": "homework lecture syllabus exam assignment grading textbook midterm solutions "
              "quiz tutorial semester".split(),
    "faculty": "professor research publications interests teaching tenure grant journal "
               "conference sabbatical laboratory colloquium".split(),
    "student": "graduate advisor hobbies resume thesis friends music degree candidate "
               "roommate summer internship".split(),
    "project": "project members software prototype release funding architecture toolkit "
               "milestone demo".split(),
    "department": "department admissions undergraduate program chair deadlines".split(),
    "staff": "administrator office support manager hours payroll".split(),
    "other": "welcome weather recipes sports photos travel movies garden".split(),
}
LINK_PATTERN = {        # class -> [(target class, expected number of links)]
    "student": [("faculty", 1.2), ("course", 1.5), ("student", 0.6), ("other", 0.8),
                ("project", 0.3)],
    "faculty": [("course", 1.5), ("student", 1.5), ("project", 0.8), ("faculty", 0.4),
                ("department", 0.3)],
    "course": [("faculty", 1.0), ("course", 0.6), ("other", 0.5)],
    "project": [("faculty", 1.0), ("student", 1.0), ("project", 0.3)],
    "department": [("faculty", 3.0), ("course", 2.0), ("staff", 1.0)],
    "staff": [("department", 0.8)],
    "other": [("other", 0.6), ("student", 0.3), ("course", 0.2)],
}


def _syllable_words(rng, n):
    cons, vow = "bdfgklmnprstvz", "aeiou"
    words = set()
    while len(words) < n:
        k = rng.integers(2, 4)
        words.add("".join(rng.choice(list(cons)) + rng.choice(list(vow)) for _ in range(k)))
    return sorted(words)


def _page_path(cls, i, rng):
    """A URL path for page i of a class (some directory pages, some files)."""
    name = f"{cls[:3]}{i:03d}"
    options = {
        "student": [f"/~{name}/", f"/~{name}/index.html", f"/homes/{name}/home.html"],
        "faculty": [f"/~{name}/", f"/people/faculty/{name}.html"],
        "course": [f"/education/courses/cs{100 + i}/", f"/courses/cs{100 + i}/index.html"],
        "project": [f"/research/projects/{name}/", f"/projects/{name}.html"],
        "department": ["/", f"/dept{i}/"],
        "staff": [f"/staff/{name}.html"],
        "other": [f"/misc/{name}.html", f"/~{name}/links/", f"/pub/{name}/notes.html"],
    }[cls]
    return options[int(rng.integers(0, len(options)))]


def _href(src_url, dst_url, rng):
    """One of several spellings of a link from src_url to dst_url."""
    sh, sp = src_url.split("/", 3)[2], "/" + src_url.split("/", 3)[3]
    dh, dp = dst_url.split("/", 3)[2], "/" + dst_url.split("/", 3)[3]
    kind = rng.integers(0, 6)
    frag = "#top" if rng.random() < 0.2 else ""
    if dp.endswith("/") and rng.random() < 0.3:
        dp = dp + "index.html"
    elif dp.endswith("/index.html") and rng.random() < 0.3:
        dp = dp[: -len("index.html")]
    if sh != dh or kind == 0:
        return f"http://{dh}{dp}{frag}"
    if kind == 1:
        return f"http://{dh.upper()}:80{dp}{frag}"
    if kind == 2:
        return dp + frag
    base = sp if sp.endswith("/") else posixpath.dirname(sp) + "/"
    rel = posixpath.relpath(dp, base)
    if dp.endswith("/") and not rel.endswith("/"):
        rel += "/"
    if kind == 3 and not rel.startswith(".."):
        rel = "./" + rel
    return rel + frag


def make_site(root, sizes=None, seed=0, paragraphs=(3, 7), words_per_paragraph=(15, 40),
              isolated=3, archive=False):
    """Write the synthetic crawl under ``root``; returns its ``webkb`` folder (or the .tar.gz
    path with ``archive=True``).  ``sizes``: {class: number of pages}."""
    rng = np.random.default_rng(seed)
    sizes = {**DEFAULT_SIZES, **(sizes or {})}
    generic = _syllable_words(rng, 300)
    root = Path(root)
    site = root / "webkb"
    pages = []                                  # (cls, univ, url)
    seen = set()
    for cls, n in sizes.items():
        for i in range(n + (isolated if cls == "other" else 0)):
            univ = UNIVERSITIES[int(rng.integers(0, len(UNIVERSITIES)))]
            host = f"www.cs.{univ}.edu" if univ != "misc" else f"cs.school{i % 7}.edu"
            path = _page_path(cls, i, rng)
            url = f"http://{host}{path}"
            if url in seen:
                continue
            seen.add(url)
            pages.append((cls, univ, url))
    n = len(pages)
    by_class = {c: [k for k, p in enumerate(pages) if p[0] == c] for c in sizes}
    iso = set(by_class["other"][-isolated:]) if isolated else set()
    links = {k: [] for k in range(n)}
    for k, (cls, _, _) in enumerate(pages):
        if k in iso:
            continue
        for tcls, lam in LINK_PATTERN.get(cls, []):
            cands = [j for j in by_class.get(tcls, []) if j != k and j not in iso]
            if not cands:
                continue
            for j in rng.choice(cands, size=min(int(rng.poisson(lam)), len(cands)), replace=False):
                links[k].append(int(j))
    # every non-isolated page gets at least one in- or out-link
    linked = {k for k, v in links.items() if v} | {j for v in links.values() for j in v}
    for k in range(n):
        if k not in iso and k not in linked:
            j = int(rng.choice([x for x in range(n) if x != k and x not in iso]))
            links[k].append(j)
    truth = []
    for k, (cls, univ, url) in enumerate(pages):
        nparas = int(rng.integers(*paragraphs))
        key = set(rng.choice(nparas, size=min(nparas, int(rng.integers(1, 3))), replace=False))
        paras = []
        for p in range(nparas):
            m = int(rng.integers(*words_per_paragraph))
            words = list(rng.choice(generic, size=m))
            if p in key:
                for _ in range(int(rng.integers(3, 7))):
                    words.insert(int(rng.integers(0, len(words) + 1)),
                                 str(rng.choice(CLASS_WORDS[cls])))
            elif rng.random() < 0.15:           # class words leak into other pages
                other = str(rng.choice([c for c in CLASS_WORDS if c != cls]))
                words.insert(0, str(rng.choice(CLASS_WORDS[other])))
            paras.append(words)
        # attach anchors to random paragraphs
        anchors = {}
        for j in links[k]:
            href = _href(url, pages[j][2], rng)
            anchors.setdefault(int(rng.integers(0, nparas)), []).append(
                f'<a href="{href}">{" ".join(rng.choice(generic, size=2))}</a>')
            truth.append((url, pages[j][2]))
        if rng.random() < 0.5:
            anchors.setdefault(0, []).append('<a href="mailto:someone@example.edu">mail</a>')
        if rng.random() < 0.3:
            anchors.setdefault(nparas - 1, []).append(
                '<A HREF="http://www.elsewhere.org/page.html">elsewhere</A>')
        title = " ".join(rng.choice(generic, size=3))
        body = [f"<html><head><title>{title}</title>",
                "<script>var x = 'ignored words inside script';</script></head><body>",
                f"<h1>{title}</h1>"]
        for p, words in enumerate(paras):
            extra = " ".join(anchors.get(p, []))
            body.append(f"<p>{' '.join(words)} {extra}</p>")
        body.append("<!-- a comment with words that must not count --></body></html>")
        html = "\n".join(body).encode("utf-8")
        if rng.random() < 0.1:                   # Windows-1252 curly apostrophe: not UTF-8
            html = html.replace(b"<h1>", b"<h1>it\x92s ", 1)
        if rng.random() < 0.8:
            header = (b"MIME-Version: 1.0\r\nServer: CERN/3.0\r\nContent-Type: text/html\r\n"
                      b"Content-Length: " + str(len(html)).encode() + b"\r\n\r\n")
            html = header + html
        stored = url
        if cls == "student" and url.endswith("/") and rng.random() < 0.3:
            stored = url.rstrip("/")            # stored without its trailing slash
        f = site / cls / univ / stored.replace("/", "^")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(html)
    for c in ("course", "department", "faculty", "other", "project", "staff", "student"):
        (site / c).mkdir(parents=True, exist_ok=True)
    (root / "truth.json").write_text(json.dumps(
        {"synthetic": True, "seed": seed, "sizes": sizes,
         "isolated": sorted(pages[k][2] for k in iso), "links": sorted(set(truth))}, indent=1))
    if archive:
        out = root / "webkb-synthetic.tar.gz"
        with tarfile.open(out, "w:gz") as t:
            t.add(site, arcname="webkb")
        return out
    return site
