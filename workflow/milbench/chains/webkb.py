"""WebKB 4-universities crawl -> MIL bags with a hyperlink graph (Zhang et al. 2011, NIPS, §3.1).

The chain, stage by stage (each a pure function so tests can drive it on fixed snippets):

1. ``read_site(root)``: walk ``webkb/<class>/<university>/<URL with '/' as '^'>`` (an
   extracted archive; :func:`extract_archive` calls :func:`milbench.data.sources.safe_extract`).
2. ``page_body`` strips the HTTP/MIME header (everything up to the first blank line when the
   file starts with ``Key: value`` / ``HTTP/`` / ``WWW Alert:`` lines) and ``decode_body``
   decodes robustly: UTF-8 when valid, else Windows-1252, else Latin-1 (never fails; 46 files
   of the shared copy are not valid UTF-8).
3. ``parse_html`` removes markup (``script``/``style`` content and comments dropped, entities
   decoded) and records every ``<a href>`` with the position of the token stream where the
   anchor starts, plus ``<base href>``.
4. ``analyse`` tokenises (``[a-z][a-z0-9]+`` after lower-casing, so single letters and pure
   numbers are dropped), removes English stop words (scikit-learn's list of 318) and stems
   with snowballstemmer's ``"porter"`` algorithm (the original Porter stemmer, as the paper).
5. **Passage rule**: the page's stemmed token stream (title included, stop words already
   removed) is cut into windows of ``passage_words`` = 50 tokens with stride ``passage_stride``
   (default 50, i.e. non-overlapping; Andrews et al. [milsd ref 1] used overlapping windows of
   at most 50 words — set the stride to 25 for that).  A page with at most 50 tokens is one
   passage; a page with no token at all is one empty passage (a zero instance).  The passage
   "holding" a link is the first window containing the anchor's token position.
6. ``canonical_url`` / ``resolve_href``: hrefs are joined with ``<base href>`` or the page URL
   (``urllib.parse.urljoin``: relative paths, ``..``, ``./``, ``http:foo`` without slashes),
   then normalised: scheme and host lower-cased, default port (:80 for http) dropped, fragment
   dropped, ``%7E`` and other percent-escapes of unreserved characters decoded, dot segments
   removed, repeated slashes collapsed, a trailing ``index.html``/``index.htm``/
   ``index.shtml`` dropped and the trailing slash dropped.  A link that misses is retried
   (a) against ``page URL + '/'`` (the crawler stored directory pages like ``/~bob`` without
   the slash, so their relative links resolve one level too high) and (b) case-insensitively
   when that identifies exactly one page.  Links to the page itself are not edges.
7. ``tfidf``: vocabulary of the ``max_features`` terms with the largest document frequency
   (document = passage; ``min_df`` passages at least), weight = raw term count x
   ``log(N / df)`` (the paper's "normalised tf and log idf"), each passage L2-normalised.
8. Datasets ``webkb-<task>`` (course, faculty, student): all kept pages of the class vs an
   equal seeded sample of kept pages of the other six classes; bag-level edges = distinct
   hyperlinks page -> page among the dataset's pages (weight 1); instance-level edges =
   passage holding the link -> every passage of the target page (global instance rows).

URLs stored in two class folders (7 in the shared copy) are one node; the page is positive
for a task when any of its folders is the task class and never drawn as a negative for it.
"""
from __future__ import annotations

import json
import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit, urlunsplit

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.sparse as sp
import snowballstemmer

from milbench.data.bags import Bags
from milbench.data.sources import safe_extract
from milbench.utils.hashing import sha256_bytes

CLASSES = ("course", "department", "faculty", "other", "project", "staff", "student")
TASKS = ("course", "faculty", "student")
INDEX_FILES = ("index.html", "index.htm", "index.shtml")
DEFAULT_PORTS = {"http": "80", "https": "443", "ftp": "21", "gopher": "70"}
SKIP_SCHEMES = ("mailto:", "news:", "javascript:", "telnet:", "nntp:", "wais:", "rlogin:")

_HEADER_LINE = re.compile(rb"^(HTTP/\d|[A-Za-z][A-Za-z0-9 _-]{0,40}:)")
_BLANK = re.compile(rb"\r?\n[ \t]*\r?\n")
_TOKEN = re.compile(r"[a-z][a-z0-9]+")
_UNRESERVED = re.compile(r"%([0-9A-Fa-f]{2})")


# ------------------------------------------------------------------------- raw page -> text
def page_body(raw: bytes) -> bytes:
    """Strip the MIME/HTTP header stored before the HTML (up to the first blank line)."""
    if not _HEADER_LINE.match(raw.lstrip(b"\r\n")[:64]):
        return raw
    m = _BLANK.search(raw)
    return raw[m.end():] if m else b""


def decode_body(body: bytes) -> str:
    """UTF-8 when valid, else cp1252, else Latin-1 (which decodes every byte string)."""
    for enc in ("utf-8", "cp1252"):
        try:
            return body.decode(enc)
        except UnicodeDecodeError:
            continue
    return body.decode("latin-1")


class _Extractor(HTMLParser):
    """Collect visible text chunks and ``<a href>`` with the text position where they start."""

    def __init__(self, analyse_fn):
        super().__init__(convert_charrefs=True)
        self.analyse_fn = analyse_fn
        self.tokens: list[str] = []
        self.anchors: list[tuple[str, int]] = []
        self.base = None
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        elif tag in ("a", "area", "frame", "iframe"):
            key = "src" if tag in ("frame", "iframe") else "href"
            for k, v in attrs:
                if k == key and v:
                    self.anchors.append((v, len(self.tokens)))
                    break
        elif tag == "base" and self.base is None:
            for k, v in attrs:
                if k == "href" and v:
                    self.base = v.strip()

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.tokens.extend(self.analyse_fn(data))


_STEMMER = None
_STEM_CACHE: dict[str, str] = {}


def stop_words():
    # scikit-learn's list; imported here: imports the other WebKB steps need not pay
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    return ENGLISH_STOP_WORDS


def analyse(text: str) -> list[str]:
    """Lower-case, tokenise ``[a-z][a-z0-9]+``, drop English stop words, Porter-stem."""
    global _STEMMER
    if _STEMMER is None:
        _STEMMER = snowballstemmer.stemmer("porter")
    stops = stop_words()
    out = []
    for t in _TOKEN.findall(text.lower()):
        if t in stops:
            continue
        s = _STEM_CACHE.get(t)
        if s is None:
            s = _STEM_CACHE[t] = _STEMMER.stemWord(t)
        out.append(s)
    return out


def parse_html(text: str):
    """HTML text -> (stemmed tokens, [(href, token position)], base href or None).

    ``html.parser`` is lenient; on the rare exception the markup is stripped by regex and the
    anchors found so far are kept.
    """
    p = _Extractor(analyse)
    try:
        p.feed(text)
        p.close()
    except Exception:  # pragma: no cover - html.parser rarely raises
        stripped = re.sub(r"<[^>]*>", " ", text)
        p.tokens = analyse(stripped)
    return p.tokens, p.anchors, p.base


# ------------------------------------------------------------------------- passages
def passage_starts(n_tokens: int, width: int = 50, stride: int = 50) -> np.ndarray:
    """Start offsets of the windows ``[s, s + width)`` for s = 0, stride, 2*stride, ... up to
    the first window that reaches the last token (always at least one window)."""
    if width < 1 or stride < 1:
        raise ValueError("passage width and stride must be >= 1")
    if n_tokens <= width:
        return np.zeros(1, dtype=np.int64)
    n_win = -(-(n_tokens - width) // stride) + 1          # ceil((n - width) / stride) + 1
    return np.arange(n_win, dtype=np.int64) * stride


def split_passages(tokens, width: int = 50, stride: int = 50):
    """Token list -> list of passages (token lists), following the module's passage rule."""
    starts = passage_starts(len(tokens), width, stride)
    return [tokens[s:s + width] for s in starts]


def passage_of(position, n_tokens, width: int = 50, stride: int = 50) -> np.ndarray:
    """Index of the first window containing token ``position`` (vectorised over positions)."""
    starts = passage_starts(n_tokens, width, stride)
    pos = np.minimum(np.asarray(position, dtype=np.int64), max(n_tokens - 1, 0))
    # first window whose end is beyond pos: windows are sorted by start and by end
    return np.searchsorted(starts + width, pos, side="right").clip(0, len(starts) - 1)


# ------------------------------------------------------------------------- URLs
def _decode_unreserved(s: str) -> str:
    def repl(m):
        ch = chr(int(m.group(1), 16))
        return ch if (ch.isalnum() or ch in "-._~") else m.group(0).upper()
    return _UNRESERVED.sub(repl, s)


def canonical_url(url: str) -> str:
    """Normal form used to match links to pages (see module docstring, step 6)."""
    url = url.strip().replace("\\", "/")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    try:
        port = parts.port
    except ValueError:  # "host:" or a non-numeric port
        port = None
    port = "" if port is None or str(port) == DEFAULT_PORTS.get(scheme) else f":{port}"
    path = _decode_unreserved(parts.path)
    path = re.sub(r"/{2,}", "/", path)
    if path:
        trailing = path.endswith("/")
        path = posixpath.normpath("/" + path.lstrip("/"))
        path = "" if path in ("/", ".") else path
        if trailing and path:
            path += "/"
    base = path.rsplit("/", 1)[-1]
    if base.lower() in INDEX_FILES:
        path = path[: -len(base)]
    path = path.rstrip("/")
    return urlunsplit((scheme, host + port, path, parts.query, ""))


def url_from_filename(name: str) -> str:
    """WebKB file name (URL with '/' written as '^') -> URL."""
    return name.replace("^", "/")


def _href_candidates(href: str, page_url: str, base: str | None):
    href = href.strip().strip("'\"").strip()
    if not href or href.startswith("#") or href.lower().startswith(SKIP_SCHEMES):
        return []
    root = base or page_url
    try:
        out = [urljoin(root, href)]
        if base is None and not page_url.endswith("/") and not _has_scheme(href):
            out.append(urljoin(page_url + "/", href))  # directory page stored without '/'
    except ValueError:
        return []
    return out


def _has_scheme(href):
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", href) is not None


class UrlIndex:
    """Canonical URL -> page number, with a case-insensitive fallback when unique."""

    def __init__(self, urls):
        self.exact: dict[str, int] = {}
        folded: dict[str, list[int]] = {}
        for i, u in enumerate(urls):
            c = canonical_url(u)
            self.exact.setdefault(c, i)
            folded.setdefault(c.lower(), []).append(i)
        self.folded = {k: v[0] for k, v in folded.items() if len(set(v)) == 1}

    def lookup(self, url):
        """(page number or -1, how): how is 'exact', 'case' or ''."""
        try:
            c = canonical_url(url)
        except ValueError:
            return -1, ""
        if c in self.exact:
            return self.exact[c], "exact"
        i = self.folded.get(c.lower())
        return (i, "case") if i is not None else (-1, "")


def resolve_href(href: str, page_url: str, index: UrlIndex, base: str | None = None):
    """Page number a link points to (or -1) and how it matched ('exact', 'slash', 'case')."""
    cands = _href_candidates(href, page_url, base)
    for k, cand in enumerate(cands):
        i, how = index.lookup(cand)
        if i >= 0 and how == "exact":
            return i, ("exact" if k == 0 else "slash")
    for cand in cands:
        i, how = index.lookup(cand)
        if i >= 0:
            return i, how
    return -1, ""


# ------------------------------------------------------------------------- the site
@dataclass
class Site:
    """Parsed crawl: one row per distinct URL (node)."""

    urls: list                      # canonical URL per node
    classes: list                   # list of class-name tuples per node (folder classes)
    universities: list
    files: list                     # relative file path(s) per node (first one)
    tokens: list                    # stemmed token list per node
    links: np.ndarray               # (n_links, 3) int64: src node, dst node, src token position
    stats: dict = field(default_factory=dict)
    sha256: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)   # provenance (source, synthetic) from save_site


def extract_archive(archive, dest):
    """Extract the WebKB tarball safely (no absolute paths, '..', or links out of ``dest``)."""
    return safe_extract(archive, dest)


def find_root(directory) -> Path:
    """The folder holding the class folders (``webkb/`` inside an extracted archive)."""
    d = Path(directory)
    for cand in (d, d / "webkb"):
        if cand.is_dir() and any((cand / c).is_dir() for c in CLASSES):
            return cand
    raise FileNotFoundError(f"{directory}: no webkb/<class>/<university>/ folders found")


def read_site(directory, hash_files: bool = False, universities=None, classes=None) -> Site:
    """Parse every page under an extracted crawl; merge duplicate URLs; resolve hyperlinks.

    ``universities`` / ``classes`` restrict the pages read (links then resolve within them).
    """
    root = find_root(directory)
    files = sorted(p for p in root.glob("*/*/*") if p.is_file()
                   and (universities is None or p.parent.name in universities)
                   and (classes is None or p.parent.parent.name in classes))
    node_of: dict[str, int] = {}
    urls, classes, univs, paths, tokens, anchors, bases, raw_urls = [], [], [], [], [], [], [], []
    stats = {"files": len(files), "not_utf8": 0, "duplicate_urls": 0}
    sha = {}
    for f in files:
        cls, univ = f.parent.parent.name, f.parent.name
        raw = f.read_bytes()
        if hash_files:
            sha[str(f.relative_to(root))] = sha256_bytes(raw)
        url = url_from_filename(f.name)
        key = canonical_url(url)
        if key in node_of:                      # same URL stored under two classes
            i = node_of[key]
            stats["duplicate_urls"] += 1
            if cls not in classes[i]:
                classes[i] = tuple(sorted(classes[i] + (cls,)))
            continue
        body = page_body(raw)
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            stats["not_utf8"] += 1
        toks, anc, base = parse_html(decode_body(body))
        node_of[key] = len(urls)
        urls.append(key)
        raw_urls.append(url)
        classes.append((cls,))
        univs.append(univ)
        paths.append(str(f.relative_to(root)))
        tokens.append(toks)
        anchors.append(anc)
        bases.append(base)
    index = UrlIndex(raw_urls)
    rows = []
    how_counts = {"exact": 0, "slash": 0, "case": 0}
    n_href = n_self = 0
    for src, (url, anc, base) in enumerate(zip(raw_urls, anchors, bases)):
        for href, pos in anc:
            n_href += 1
            dst, how = resolve_href(href, url, index, base)
            if dst < 0:
                continue
            if dst == src:
                n_self += 1
                continue
            how_counts[how] += 1
            rows.append((src, dst, pos))
    links = np.asarray(rows, dtype=np.int64).reshape(-1, 3)
    stats.update(pages=len(urls), hrefs=n_href, links_resolved=len(links), self_links=n_self,
                 resolved_by=how_counts,
                 distinct_page_pairs=int(len({(int(a), int(b)) for a, b, _ in links})))
    return Site(urls, classes, univs, paths, tokens, links, stats, sha)


def linked_nodes(site: Site) -> np.ndarray:
    """Nodes with at least one in- or out-link to another page of the collection."""
    keep = np.zeros(len(site.urls), dtype=bool)
    keep[site.links[:, 0]] = True
    keep[site.links[:, 1]] = True
    return np.flatnonzero(keep)


# ------------------------------------------------------------------------- features
def fit_vocabulary(passages, max_features: int = 3000, min_df: int = 2):
    """(vocabulary term -> column, idf) from passages: top ``max_features`` terms by document
    frequency (ties broken alphabetically), idf = log(N / df)."""
    df = Counter()
    for p in passages:
        df.update(set(p))
    terms = sorted((t for t, c in df.items() if c >= min_df), key=lambda t: (-df[t], t))
    terms = sorted(terms[:max_features])
    vocab = {t: j for j, t in enumerate(terms)}
    idf = np.log(len(passages) / np.array([df[t] for t in terms], dtype=float))
    return vocab, idf


def tfidf(passages, vocab, idf, dtype=np.float32) -> np.ndarray:
    """Dense (n_passages, |vocab|) L2-normalised tf x idf matrix (rows of unknown words are 0)."""
    rows, cols = [], []
    for r, p in enumerate(passages):
        js = [vocab[t] for t in p if t in vocab]
        rows.extend([r] * len(js))
        cols.extend(js)
    m = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(passages), len(vocab)))
    m.sum_duplicates()
    m = m.multiply(idf[None, :]).tocsr()
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    m = sp.diags(1.0 / norms) @ m
    return m.toarray().astype(dtype)


def site_passages(site: Site, nodes, width=50, stride=50):
    """Passages of the given nodes: (list of token lists, offsets per node)."""
    passages, sizes = [], []
    for i in nodes:
        ps = split_passages(site.tokens[i], width, stride)
        passages.extend(ps)
        sizes.append(len(ps))
    return passages, np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def task_nodes(site: Site, task: str, nodes, seed: int = 0):
    """(positive nodes, sampled negative nodes) for one task among ``nodes`` (sorted)."""
    if task not in CLASSES:
        raise ValueError(f"unknown WebKB class {task!r}; known {CLASSES}")
    nodes = np.asarray(nodes)
    is_pos = np.array([task in site.classes[i] for i in nodes], dtype=bool)
    pos, neg_pool = nodes[is_pos], nodes[~is_pos]
    if len(pos) > len(neg_pool):
        raise ValueError(f"{task}: {len(pos)} positives but only {len(neg_pool)} other pages")
    rng = np.random.default_rng(seed)
    neg = np.sort(rng.choice(neg_pool, size=len(pos), replace=False))
    return pos, neg


def build_task_bags(site: Site, task: str, *, nodes=None, vocab=None, idf=None,
                    max_features: int = 3000, min_df: int = 2, width: int = 50,
                    stride: int = 50, seed: int = 0, synthetic: bool = False):
    """Bags for ``webkb-<task>`` with bag- and instance-level hyperlink edges (milsd §3.1).

    ``nodes`` are the pages to draw from (default: linked pages); ``vocab``/``idf`` default to
    a vocabulary fitted on the passages of all those pages (the task-independent extraction).
    """
    nodes = linked_nodes(site) if nodes is None else np.asarray(nodes)
    if vocab is None:
        all_passages, _ = site_passages(site, nodes, width, stride)
        vocab, idf = fit_vocabulary(all_passages, max_features, min_df)
    pos, neg = task_nodes(site, task, nodes, seed)
    chosen = np.concatenate([pos, neg])
    labels = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))]).astype(np.int8)
    passages, offsets = site_passages(site, chosen, width, stride)
    X = tfidf(passages, vocab, idf)
    ids = np.array([site.urls[i] for i in chosen])
    # bag-level edges: distinct page pairs among chosen pages
    pos_in = -np.ones(len(site.urls), dtype=np.int64)
    pos_in[chosen] = np.arange(len(chosen))
    L = site.links
    inside = (pos_in[L[:, 0]] >= 0) & (pos_in[L[:, 1]] >= 0)
    L = L[inside]
    s_bag, d_bag = pos_in[L[:, 0]], pos_in[L[:, 1]]
    pairs = np.unique(np.stack([s_bag, d_bag], 1), axis=0) if len(L) else np.zeros((0, 2), int)
    bag_edges = pd.DataFrame({"src": ids[pairs[:, 0]], "dst": ids[pairs[:, 1]],
                              "weight": np.ones(len(pairs)), "level": "bag"})
    # instance-level edges: passage holding the link -> every passage of the target page
    src_rows, dst_rows = [], []
    for (sb, db, tokpos) in zip(s_bag, d_bag, L[:, 2]):
        n_tok = len(site.tokens[chosen[sb]])
        k = int(passage_of(tokpos, n_tok, width, stride))
        s_row = offsets[sb] + k
        d = np.arange(offsets[db], offsets[db + 1])
        src_rows.append(np.full(len(d), s_row))
        dst_rows.append(d)
    if src_rows:
        inst = np.unique(np.stack([np.concatenate(src_rows), np.concatenate(dst_rows)], 1), axis=0)
    else:
        inst = np.zeros((0, 2), dtype=np.int64)
    inst_edges = pd.DataFrame({"src": inst[:, 0].astype(str), "dst": inst[:, 1].astype(str),
                               "weight": np.ones(len(inst)), "level": "instance"})
    edges = pd.concat([bag_edges, inst_edges], ignore_index=True)
    meta = {
        "dataset": f"webkb-{task}", "task": task, "synthetic": bool(synthetic),
        "source": "synthetic WebKB-layout site (milbench.chains.synthetic_site)" if synthetic
        else "WebKB 4-universities crawl (CMU layout)",
        "passage_rule": f"windows of {width} stemmed non-stop-word tokens, stride {stride}",
        "features": {"kind": "tf-idf", "max_features": int(len(vocab)), "min_df": int(min_df),
                     "stemmer": "snowballstemmer porter", "stop_words": "sklearn english"},
        "n_bag_edges": int(len(bag_edges)), "n_instance_edges": int(len(inst_edges)),
        "sample_seed": int(seed), "site_stats": site.stats,
        "instances_bytes": int(X.nbytes),
    }
    return Bags(X, offsets, labels, ids, names=np.array([site.files[i] for i in chosen]),
                edges=edges, meta=meta), vocab, idf


# ------------------------------------------------------------------------- chain storage
def save_site(site: Site, outdir, extra=None):
    """Parsed crawl -> ``pages.parquet`` (node, url, classes 'a|b', university, file, tokens),
    ``links.parquet`` (src, dst, position) and ``site.json`` (stats, sha256, extra)."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({
        "node": pa.array(np.arange(len(site.urls), dtype=np.int64)),
        "url": pa.array(site.urls), "classes": pa.array(["|".join(c) for c in site.classes]),
        "university": pa.array(site.universities), "file": pa.array(site.files),
        "tokens": pa.array(site.tokens, type=pa.list_(pa.string()))}), outdir / "pages.parquet")
    pq.write_table(pa.table({"src": site.links[:, 0], "dst": site.links[:, 1],
                             "position": site.links[:, 2]}), outdir / "links.parquet")
    (outdir / "site.json").write_text(json.dumps(
        {"stats": site.stats, "sha256": site.sha256, **(extra or {})}, indent=2, sort_keys=True))
    return outdir


def load_site(indir) -> Site:
    indir = Path(indir)
    p = pq.read_table(indir / "pages.parquet").to_pydict()
    lk = pq.read_table(indir / "links.parquet").to_pydict()
    info = json.loads((indir / "site.json").read_text())
    links = np.stack([np.asarray(lk["src"], np.int64), np.asarray(lk["dst"], np.int64),
                      np.asarray(lk["position"], np.int64)], 1).reshape(-1, 3)
    return Site(p["url"], [tuple(c.split("|")) for c in p["classes"]], p["university"],
                p["file"], [list(t) for t in p["tokens"]], links, info["stats"],
                info.get("sha256", {}),
                {k: v for k, v in info.items() if k not in ("stats", "sha256")})
