"""Rule webkb_synthetic: a SYNTHETIC hyperlinked site in WebKB's layout (offline quickstart)."""
import _paths  # noqa: F401 - puts workflow/ on sys.path

from milbench.chains.synthetic_site import make_site
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
p = dict(snakemake.params.cfg)
site = make_site(snakemake.output[0], sizes=p["sizes"], seed=p["seed"])
log.info("SYNTHETIC WebKB-layout site written to %s (%s)", site, p)
