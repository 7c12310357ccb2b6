"""WebKB chain (milbench.chains.webkb): header stripping, decoding, markup removal, stemming,
passages, href resolution, TF-IDF, task datasets with bag / instance edges, and real data."""
import io
import json
import tarfile

import numpy as np
import pytest

from milbench.chains import webkb as W
from milbench.chains.synthetic_site import make_site


# ----------------------------------------------------------------------------- text
def test_mime_header_stripped_and_body_kept():
    raw = (b"MIME-Version: 1.0\r\nServer: CERN/3.0\r\nContent-Type: text/html\r\n\r\n"
           b"<html><body>Hello</body></html>")
    assert W.page_body(raw) == b"<html><body>Hello</body></html>"
    assert W.page_body(b"WWW Alert:  Redirection\n\n<p>x</p>") == b"<p>x</p>"
    no_header = b"<HTML><TITLE>t</TITLE>\n\n<p>body</p>"
    assert W.page_body(no_header) == no_header
    assert W.page_body(b"Date: Sunday\r\nno blank line ever") == b""


def test_decode_falls_back_for_invalid_utf8():
    assert W.decode_body("caf\u00e9".encode("utf-8")) == "caf\u00e9"
    assert W.decode_body(b"it\x92s") == "it\u2019s"           # cp1252 apostrophe
    assert W.decode_body(b"\x81\x8d\x8f") == "\x81\x8d\x8f"    # undefined in cp1252: latin-1


def test_analyse_stop_words_and_porter_stems():
    toks = W.analyse("The Students are RUNNING the generalization courses, 1996 and C++ a b")
    # stop words (the, are, and) dropped, single letters and pure numbers dropped, Porter stems
    assert toks == ["student", "run", "gener", "cours"]


def test_parse_html_strips_markup_scripts_comments_and_finds_anchors():
    html = ("<html><head><title>Course Page</title><script>var hidden = 'scripted';</script>"
            "<style>p {color: red}</style></head><body><!-- commented words -->"
            "<p>Homework &amp; lectures</p><a HREF='hw1.html'>First homework</a>"
            "<base href='http://h.edu/x/'><area href='map.html'></body></html>")
    toks, anchors, base = W.parse_html(html)
    assert toks == ["cours", "page", "homework", "lectur", "homework"]
    assert anchors == [("hw1.html", 4), ("map.html", 5)]
    assert base == "http://h.edu/x/"


def test_passage_windows_and_link_positions():
    assert W.passage_starts(0).tolist() == [0]
    assert W.passage_starts(50).tolist() == [0]
    assert W.passage_starts(51).tolist() == [0, 50]
    assert W.passage_starts(120, 50, 50).tolist() == [0, 50, 100]
    assert W.passage_starts(120, 50, 25).tolist() == [0, 25, 50, 75]
    toks = [f"t{i}" for i in range(120)]
    ps = W.split_passages(toks, 50, 25)
    assert [len(p) for p in ps] == [50, 50, 50, 45] and ps[-1][-1] == "t119"
    # the passage holding a link = first window containing the anchor's token position
    assert W.passage_of([0, 49, 50, 119, 500], 120, 50, 50).tolist() == [0, 0, 1, 2, 2]
    assert W.passage_of([0, 30, 60, 119], 120, 50, 25).tolist() == [0, 0, 1, 3]
    assert W.passage_of([0], 0, 50, 50).tolist() == [0]


# ----------------------------------------------------------------------------- URLs
PAGES = [
    "http://www.cs.wisc.edu/~bob/",                      # 0 directory page
    "http://www.cs.wisc.edu/~bob/papers.html",           # 1
    "http://www.cs.wisc.edu/courses/cs302/index.html",   # 2 stored with index.html
    "http://www.cs.wisc.edu/courses/cs302/hw1.html",     # 3
    "http://cs.cornell.edu/Info/People/alice",           # 4 directory page stored w/o slash
    "http://cs.cornell.edu/Info/People/alice/cv.html",   # 5
    "http://www.eecs.tulane.edu:80/www/Pilman/",         # 6 explicit default port
    "http://cs.cornell.edu/Info/Courses/CS414.html",     # 7 upper-case path
]
HREFS = [  # (page it is on, href, <base href> or None, expected target page or -1)
    (0, "papers.html", None, 1),
    (0, "./papers.html#sec2", None, 1),
    (0, "../courses/cs302/", None, 2),
    (0, "/courses/cs302/index.html", None, 2),
    (0, "/courses/cs302", None, 2),
    (0, "http://WWW.CS.WISC.EDU:80/courses/cs302/hw1.html", None, 3),
    (3, "index.html", None, 2),
    (3, "../../~bob", None, 0),
    (3, "../../%7Ebob/papers.html", None, 1),
    (3, "http:../../~bob/", None, 0),
    (3, "//www.cs.wisc.edu/~bob/papers.html", None, 1),
    (1, "#top", None, -1),
    (1, "mailto:bob@cs.wisc.edu", None, -1),
    (1, "http://www.elsewhere.org/", None, -1),
    (4, "cv.html", None, 5),                               # retried against alice/ + cv.html
    (5, "../alice/", None, 4),
    (1, "Pilman/", "http://www.eecs.tulane.edu/www/", 6),   # <base href>, default port
    (1, "http://cs.cornell.edu/info/courses/cs414.html", None, 7),   # case-insensitive fallback
    (1, "  papers.html  ", None, 1),
]


@pytest.mark.parametrize("page,href,base,want", HREFS)
def test_resolve_href_table(page, href, base, want):
    index = W.UrlIndex(PAGES)
    got, how = W.resolve_href(href, PAGES[page], index, base)
    assert got == want, (href, how)


def test_canonical_url_forms():
    c = W.canonical_url
    assert c("HTTP://WWW.CS.WISC.EDU:80/~bob/index.html#x") == "http://www.cs.wisc.edu/~bob"
    assert c("http://www.cs.wisc.edu/%7Ebob/") == "http://www.cs.wisc.edu/~bob"
    assert c("http://a.edu/x//y/./z/../w.html") == "http://a.edu/x/y/w.html"
    assert c("http://a.edu:8080/") == "http://a.edu:8080"
    assert c("http://a.edu/q.cgi?a=1#f") == "http://a.edu/q.cgi?a=1"
    assert c("http://a.edu/a%20b.html") == "http://a.edu/a%20b.html"
    assert W.url_from_filename("http:^^a.edu^~x^p.html") == "http://a.edu/~x/p.html"


# ----------------------------------------------------------------------------- TF-IDF
def test_tfidf_weights_and_vocabulary_bound():
    passages = [["a", "b", "b"], ["a", "c"], ["d"], []]
    vocab, idf = W.fit_vocabulary(passages, max_features=2, min_df=1)
    assert list(vocab) == ["a", "b"]                        # top-2 by df (a: 2; b, c, d: 1)
    assert np.allclose(idf, np.log(4 / np.array([2, 1])))
    X = W.tfidf(passages, vocab, idf)
    assert X.dtype == np.float32 and X.shape == (4, 2)
    row = np.array([1 * np.log(2), 2 * np.log(4)])
    assert np.allclose(X[0], row / np.linalg.norm(row), atol=1e-6)
    assert np.allclose(X[1], [1, 0]) and np.allclose(X[2:], 0)


# ----------------------------------------------------------------------------- synthetic site
@pytest.fixture(scope="module")
def site_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("synthetic-webkb")
    make_site(root, seed=3)
    return root


def test_synthetic_site_links_all_recovered(site_dir):
    site = W.read_site(site_dir)
    truth = json.loads((site_dir / "truth.json").read_text())
    got = {(site.urls[a], site.urls[b]) for a, b, _ in site.links}
    want = {(W.canonical_url(a), W.canonical_url(b)) for a, b in truth["links"]}
    assert got == want
    assert site.stats["not_utf8"] > 0
    linked = set(W.linked_nodes(site).tolist())
    iso = {site.urls.index(W.canonical_url(u)) for u in truth["isolated"]}
    assert iso and not (iso & linked) and len(linked) == len(site.urls) - len(iso)
    assert not any("ignor" in t or "comment" in t for toks in site.tokens for t in toks)


def test_task_bags_edges_and_store_roundtrip(site_dir, tmp_path):
    from milbench.data.store import read_bags, write_bags

    site = W.read_site(site_dir)
    bags, vocab, idf = W.build_task_bags(site, "course", max_features=300, synthetic=True, seed=1)
    n_pos = int(bags.labels.sum())
    assert n_pos == len(bags) // 2 and n_pos == sum("course" in c for c in site.classes)
    assert bags.n_features == len(vocab) <= 300 and bags.instances.dtype == np.float32
    norms = np.linalg.norm(bags.instances, axis=1)
    assert np.allclose(norms[norms > 0], 1, atol=1e-5)
    assert bags.meta["synthetic"] is True
    e = bags.edges
    be, ie = e[e.level == "bag"], e[e.level == "instance"]
    ids = set(bags.bag_ids)
    assert len(be) > 0 and set(be.src) <= ids and set(be.dst) <= ids
    assert not (be.src == be.dst).any() and not be.duplicated(["src", "dst"]).any()
    # every instance edge goes from a passage of p to a passage of q for a bag edge p -> q
    bag_of = bags.bag_index
    s, d = ie.src.astype(int).to_numpy(), ie.dst.astype(int).to_numpy()
    pairs = set(zip(be.src, be.dst))
    assert all((bags.bag_ids[bag_of[a]], bags.bag_ids[bag_of[b]]) in pairs for a, b in zip(s, d))
    # ... and reaches every passage of the target
    for (p, q) in list(pairs)[:10]:
        qi = int(np.flatnonzero(bags.bag_ids == q)[0])
        pi = int(np.flatnonzero(bags.bag_ids == p)[0])
        rows = set(range(bags.offsets[qi], bags.offsets[qi + 1]))
        src_rows = set(range(bags.offsets[pi], bags.offsets[pi + 1]))
        hit = {b for a, b in zip(s, d) if a in src_rows}
        assert rows <= hit
    write_bags(bags, tmp_path / "webkb-course")
    back = read_bags(tmp_path / "webkb-course")
    assert np.array_equal(back.instances, bags.instances)
    assert back.edges.reset_index(drop=True).equals(bags.edges.reset_index(drop=True))
    # same seed, same data
    again, _, _ = W.build_task_bags(site, "course", max_features=300, synthetic=True, seed=1)
    assert np.array_equal(again.bag_ids, bags.bag_ids)
    # subset keeps the edges among the kept bags, instance rows renumbered
    sub = bags.subset(np.arange(0, len(bags), 2))
    se = sub.edges
    assert set(se[se.level == "bag"].src) <= set(sub.bag_ids)
    si = se[se.level == "instance"]
    assert (si.src.astype(int) < len(sub.instances)).all()
    if len(si):
        r = int(si.src.iloc[0])
        assert np.array_equal(sub.instances[r], bags.instances[np.flatnonzero(
            np.isin(bags.bag_index, np.arange(0, len(bags), 2)))[r]])


def test_save_load_site_roundtrip(site_dir, tmp_path):
    site = W.read_site(site_dir)
    W.save_site(site, tmp_path / "chain", extra={"synthetic": True})
    back = W.load_site(tmp_path / "chain")
    assert back.urls == site.urls and back.tokens == site.tokens
    assert np.array_equal(back.links, site.links) and back.extra["synthetic"] is True


def test_extract_archive_uses_safe_extract(tmp_path):
    archive = make_site(tmp_path / "src", seed=0, archive=True)
    out = W.extract_archive(archive, tmp_path / "site")
    assert W.find_root(out).name == "webkb"
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as t:
        info = tarfile.TarInfo("../escape.html")
        data = b"<p>x</p>"
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    with pytest.raises(Exception, match="unsafe"):
        W.extract_archive(evil, tmp_path / "evil")
    assert not (tmp_path / "escape.html").exists()


# ----------------------------------------------------------------------------- real data
@pytest.fixture(scope="module")
def real_site_dir(tmp_path_factory, shared_data):
    return W.extract_archive(shared_data / "webkb" / "webkb-data.tar.gz", tmp_path_factory.mktemp("webkb") / "site")


@pytest.fixture(scope="module")
def cornell_dir(tmp_path_factory, shared_data):
    """The real archive's Cornell pages, repacked and extracted through safe_extract."""
    tmp = tmp_path_factory.mktemp("webkb-cornell")
    sub = tmp / "cornell.tar"
    with tarfile.open(shared_data / "webkb" / "webkb-data.tar.gz") as src, tarfile.open(sub, "w") as dst:
        for m in src:
            parts = m.name.split("/")
            if len(parts) >= 3 and parts[2] == "cornell" or m.isdir() and len(parts) <= 2:
                dst.addfile(m, src.extractfile(m) if m.isfile() else None)
    return W.extract_archive(sub, tmp / "site")


def test_real_webkb_one_university(cornell_dir):
    site = W.read_site(cornell_dir)
    assert site.stats["files"] == 867
    assert site.stats["links_resolved"] > 1000
    # headers are gone: no page starts with the header's words
    assert not any(t[:2] == ["mime", "version"] for t in site.tokens)
    assert site.stats["not_utf8"] >= 1
    bags, _, _ = W.build_task_bags(site, "course", max_features=500)
    assert len(bags) == 2 * int(bags.labels.sum()) and bags.meta["n_bag_edges"] > 0


@pytest.mark.slow
def test_real_webkb_full_counts(real_site_dir):
    """Full crawl: 8,282 files -> 8,250 distinct canonical URLs -> 7,316 linked pages
    (paper: 6,883 of 8,280), 15,902 distinct page -> page links."""
    site = W.read_site(real_site_dir)
    assert site.stats["files"] == 8282
    assert len(site.urls) == 8250
    assert len(W.linked_nodes(site)) == 7316
    assert site.stats["distinct_page_pairs"] == 15902
