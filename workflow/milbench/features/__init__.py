"""Feature chains that turn raw multi-view sources into bags.

* :mod:`milbench.features.images`  – Corel-style photos -> regions (superpixel bipartite-graph
  segmentation) -> HSV / dense-HOG / LBP codebook histograms (3 views, cvfs-mil.txt §4.2).
* :mod:`milbench.features.reddit`  – SNAP web-Reddit submissions -> bags per image_id with a
  title TF-IDF view and a 55-factor view (cvfs-mil.txt §4.3).
* :mod:`milbench.features.synthetic_scenes` / :mod:`milbench.features.synthetic_reddit` –
  offline stand-ins in the same raw layouts, labelled synthetic everywhere they are used.

Nothing heavy is imported here; each module imports OpenCV / scikit-image lazily.
"""
