"""Graph feature chains: WebKB pages -> bags + hyperlink graph, protein bags +
similarity / kNN graph, and a synthetic hyperlinked site in WebKB's layout. The edges they build
live in ``Bags.edges`` (layout and helpers: :mod:`milbench.edges`).

Modules: :mod:`.webkb` (crawl -> bags), :mod:`.protein` (similarity / kNN graph),
:mod:`.synthetic_site` (SYNTHETIC site in WebKB's layout).
"""
