"""Reporting over finished runs (layer 5, the top: may import every layer below).

:mod:`.stats` (Friedman / Iman–Davenport, Nemenyi and Wilcoxon tests), :mod:`.plots`
(figures), :mod:`.reproduction` (paper targets vs ours), :mod:`.reproduction_archive` (finished
runs kept in ``resources/reproductions/``), :mod:`.reproduction_docs` (the generated
``docs/reproduction/`` pages), :mod:`.coverage` (feature coverage of a selector),
:mod:`.reference` (the generated method reference, ``docs/methods.md``).
"""
