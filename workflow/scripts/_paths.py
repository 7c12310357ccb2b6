"""Make the milbench library importable from a rule's script without installing it
(Snakemake puts this scripts directory on sys.path; the library lives one level up)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
