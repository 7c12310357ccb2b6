"""Feature chains: raw multi-view sources -> bags (layer 2: may import ``milbench.data`` and
``milbench.utils``; never an estimator or the experiment machinery).

* :mod:`.images` – Corel-style photos -> regions (superpixel bipartite-graph segmentation) ->
  HSV / dense-HOG / LBP codebook histograms (3 views; CVFS-MIL, Wu et al. 2014, §4.2).
* :mod:`.reddit` – SNAP web-Reddit submissions -> bags per image_id with a title TF-IDF view and
  a 55-factor view (Wu et al. 2014, §4.3).
* :mod:`.webkb` – WebKB pages -> bags + hyperlink graph; :mod:`.protein` – protein bags +
  similarity / kNN graph (the edges live in ``Bags.edges``, see :mod:`milbench.data.edges`).
* :mod:`.synthetic_scenes`, :mod:`.synthetic_reddit`, :mod:`.synthetic_site` – offline
  stand-ins in the same raw layouts, labelled synthetic everywhere they are used.

Nothing heavy is imported here; each module imports OpenCV / scikit-image lazily.
"""
