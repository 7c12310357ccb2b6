"""The plan of a config: its counts (:mod:`~milbench.experiment.plan.counting`), then draws
(:mod:`~milbench.experiment.plan.draws`) timed in forked children
(:mod:`~milbench.experiment.plan.sandbox`) within a wall budget, and the estimate.

Every family is drawn once, whatever the budget (an untuned family again while its draws total
under :data:`MIN_UNTUNED_CPU`); the draws left in the budget go to the family whose estimate
weighs most.  A draw that raises is a failure: counted per family, shown, and left out of the
estimate (a family whose every draw failed is unknown).  A family's cell is the mean of its
successful draws; an experiment adds its fold stages, a
fixed CPU a job (every method, fold-stage, folds and report job) and ``cell_overhead`` a cell.
Wall at N cores = max(total CPU / N, the longest method job's CPU / its threads): perfect
packing, so a lower bound.  Each data set's bags are checked before any draw
(:func:`data_status`): the configuration's data, a synthetic stand-in, missing, or too few for
its folds; the total names what it rests on (``caveats``), and ``strict`` refuses all but the
configuration's real data.  How it is measured and why: docs/budget.md.
"""
from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from milbench.data.folds import fold_keys, make_folds, split
from milbench.data.sources import load_builtin, load_dataset, load_manifest, read_any
from milbench.data.store import read_bags
from milbench.data.store_folders import store_folders
from milbench.experiment.config import experiment_settings, method_settings
from milbench.experiment.plan.counting import (
    count_experiment,
    families,
    fits_per_cell,
    hydr_settings,
    is_hydr,
    tune_dims,
)
from milbench.experiment.plan.draws import cell_order, design, tuned_groups
from milbench.experiment.plan.sandbox import fixed_job_cpu, run_forked

#: CPU s a method job spends per cell beyond the fit, the test bags' scoring and its one
#: interpreter start (the cell's split, scaling, scores row and file), as
#: benchmarks/workflow/bench_overhead.py measures it (docs/budget.md)
CELL_OVERHEAD = 0.015

#: an untuned family whose first draws took less CPU than this is drawn again (up to
#: ``max_draws``): one cheap cell is no sample of a family of cheap fits
MIN_UNTUNED_CPU = 1.0


def load_bags(name, cfg, data_root, bags_root):
    """(bags, where) of a data set, or (None, why) when it cannot be read here."""
    manifest = load_manifest()
    if name in manifest and manifest[name]["format"] != "archive":
        errors = []
        for root in [r for r in data_root if r]:
            try:
                return load_dataset(name, root), f"{root}"
            except Exception as e:  # noqa: BLE001 - try the next root
                errors.append(f"{root}: {e}")
        if cfg.get("offline"):
            return load_builtin(name, offline=True), "offline copy"
        return None, "raw files not found (" + "; ".join(errors)[:200] + ")"
    if name in cfg.get("datasets", {}):
        spec = cfg["datasets"][name]
        try:
            return read_any(spec["format"], spec["path"]), spec["path"]
        except Exception as e:  # noqa: BLE001
            return None, f"cannot read {spec.get('path')}: {e}"
    stores = store_folders(bags_root, name)
    real = [p for p in stores if not p.name.endswith("@synthetic")]
    if real or stores:
        p = (real or stores)[0]
        return read_bags(p), str(p)
    return None, f"chain-built, no store under {bags_root} (build it with snakemake first)"


#: how to get the real bags of a data set the planner could not time on them
GET_DATA = ("run the workflow's data rules first (`snakemake --cores N --configfile <config>` "
            "builds the bags before any fit), pass the raw-data folder with --data, or set "
            "`mirror:` in the config to a copy of the download hosts (docs/usage.md)")


def data_status(name, bags, where):
    """What the planner found for data set ``name``: {"status", "where", "bags"} with status
    "real" (the configuration's data), "synthetic" (a store named ``<name>@synthetic`` or
    whose meta marks it synthetic: a chain's generated stand-in) or "missing"."""
    if bags is None:
        return {"status": "missing", "where": where, "bags": 0}
    synthetic = bool(bags.meta.get("synthetic")) or str(where).endswith("@synthetic")
    return {"status": "synthetic" if synthetic else "real", "where": where, "bags": len(bags)}


def too_small(bags, folds, exp, inner):
    """Why ``bags`` are too few for the experiment's folds (a cell's training bags hold fewer
    of a class than its inner folds when ``inner``, else none of a class, or the outer folds
    cannot be made), or None."""
    if isinstance(folds, Exception):
        return f"its folds cannot be made ({type(folds).__name__}: {folds})"
    y = np.asarray(bags.labels).astype(int)
    need = exp["inner_folds"] if inner else 1
    for cell in fold_keys(exp["protocol"]):
        tr, _, _ = split(folds, cell[0], cell[1], bags.bag_ids)
        least = np.bincount(y[tr], minlength=2).min() if len(tr) else 0
        if least < need:
            return (f"{len(bags)} bags: cell {list(cell)} trains on {least} bags of a class, "
                    + (f"fewer than its {need} inner folds" if inner else "too few to fit"))
    return None


def warning(ds, st):
    """The WARNING line of a data set whose draws do not rest on the configuration's data."""
    what = {"missing": f"MISSING ({st['where']}); its families are not counted",
            "synthetic": f"timed on SYNTHETIC bags ({st['bags']} bags, {st['where']}), a "
                         "generated stand-in for the real data set; its estimate is not a "
                         "real run's",
            "small": f"its bags ({st['where']}) are too few for the config: {st.get('why')}; "
                     "draws may fail and its estimate is not the real run's"}[st["status"]]
    if st["status"] == "synthetic" and st.get("why"):
        what += f"; and too few for the config: {st['why']}"
    return f"WARNING data set {ds}: {what}. To time the real data: {GET_DATA}."


def caveats(out):
    """What the total rests on beyond the configuration's real data, as short phrases (empty
    when every family was timed on it)."""
    st = out.get("data_status", {})
    by = {k: sorted(d for d, v in st.items() if v["status"] == k)
          for k in ("synthetic", "small", "missing")}
    notes = []
    if by["synthetic"]:
        notes.append("rests on SYNTHETIC data for " + ", ".join(by["synthetic"]))
    if by["small"]:
        notes.append("rests on too few bags for " + ", ".join(by["small"]))
    if by["missing"]:
        notes.append(f"{len(by['missing'])} data set(s) missing (not counted): "
                     + ", ".join(by["missing"]))
    unknown = [f"{f['experiment']}/{f['dataset']}/{f['label']}"
               for e in out["experiments"] for f in e["families"]
               if f.get("unknown") and f["dataset"] not in by["missing"]]
    if unknown:
        notes.append(f"{len(unknown)} famil{'y' if len(unknown) == 1 else 'ies'} unknown, every "
                     "draw failed (not counted): " + ", ".join(unknown))
    return notes


@dataclass
class Family:
    """One family of an experiment on one data set: ``row``, its entry in the plan (what the
    JSON and CSV report), and what drawing it needs."""
    row: dict
    methods: list            # as expand_methods makes them
    exp: dict                # the experiment (defaults filled)
    cells: list              # its (repeat, fold) cells, in cell_order
    design: list             # the (method index, cell index) of each draw, in order
    staged: dict             # (selector id, classifier id) -> fold-stage id
    index: int               # its place in the plan (seeds a tuned draw's groups)


def plan_families(out, cfg, names, max_draws, rng):
    """The experiments' counts into ``out`` and their families, each with its draws chosen."""
    fams = []
    for name in names:
        exp = cfg["experiments"][name]
        counts = count_experiment(name, exp, cfg["threads"]["run"])
        e = {**{k: v for k, v in counts.items() if k not in ("staged", "stages")},
             "families": []}
        keys = fold_keys(exp["protocol"])
        for ds in exp["datasets"]:
            for key, lab, methods in families(exp):
                kind = ("hydr" if is_hydr(methods[0]) else
                        "tuned" if tune_dims(methods[0]) else "untuned")
                f, how = fits_per_cell(methods[0], exp)
                row = {"experiment": name, "dataset": ds, "label": lab, "key": list(key),
                       "methods": len(methods), "cells": len(methods) * len(keys),
                       "kind": kind, "fits_per_cell": f, "fits_how": how, "draws": [],
                       "failed": [],
                       "stage": any((m["selector_id"], m["classifier_id"]) in counts["staged"]
                                    for m in methods)}
                # untuned: the centre, then random (method, cell) pairs, all weighed alike
                # (the corners are extreme settings, no typical cell)
                chosen = design([len(methods), len(keys)], max_draws, rng,
                                n_anchors=1 if kind == "untuned" else 3)
                e["families"].append(row)
                fams.append(Family(row, methods, exp, cell_order(keys), chosen,
                                   counts["staged"], len(fams)))
        out["experiments"].append(e)
    return fams


@dataclass
class HydrCount:
    """What a HyDR-MI draw leaves for the next on the same cell and settings: the GA's
    distinct evaluations, the fitted ReliefF-MI filter, its CPU and the chromosomes drawn."""
    evaluations: int
    relieff: object
    relieff_cpu: float | None
    chromosomes: np.ndarray


@dataclass
class Sampler:
    """The draws of one plan: the data sets and folds loaded, the fold-stage CPU and states
    and the HyDR-MI counts the draws share, and the wall budget."""
    cfg: dict
    fams: list
    seconds: float
    fit_limit: float
    points: int
    seed: int
    data_root: tuple
    bags_root: str
    log: object
    start: float = field(default_factory=time.perf_counter)
    data: dict = field(default_factory=dict)          # data set -> (bags, where, load CPU)
    status: dict = field(default_factory=dict)        # data set -> data_status (+ "why")
    folds: dict = field(default_factory=dict)         # (experiment, data set) -> folds
    stage_cpu: dict = field(default_factory=dict)     # (experiment, data set, stage) -> [CPU]
    stage_states: dict = field(default_factory=dict)  # (..., stage, cell) -> state
    hydr: dict = field(default_factory=dict)          # see hydr_key -> HydrCount

    def remaining(self):
        return self.seconds - (time.perf_counter() - self.start)

    def check_data(self):
        """Load every data set and make every experiment's folds once, before any draw; a
        WARNING line for each data set that is not the configuration's real data (missing,
        synthetic, or too few bags for an experiment's folds)."""
        for fam in self.fams:
            ds, fk = fam.row["dataset"], (fam.row["experiment"], fam.row["dataset"])
            if ds not in self.data:
                t = time.process_time()
                bags, where = load_bags(ds, self.cfg, self.data_root, self.bags_root)
                self.data[ds] = (bags, where, time.process_time() - t)
                self.status[ds] = data_status(ds, bags, where)
                self.log(f"  data {ds}: " + (
                    f"{len(bags)} bags, {len(bags.instances):,} instances x {bags.n_features} "
                    f"({where})" if bags is not None else f"SKIPPED: {where}"))
                if self.status[ds]["status"] != "real":
                    self.log(warning(ds, self.status[ds]))
            bags = self.data[ds][0]
            if bags is None or fk in self.folds:
                continue
            try:
                self.folds[fk] = make_folds(bags.bag_ids, bags.labels, fam.exp["protocol"])
            except ValueError as e:
                self.folds[fk] = e
            inner = fam.exp.get("threshold") == "auto" or any(
                f.row["kind"] != "untuned" for f in self.fams if f.row["experiment"] == fk[0])
            why = too_small(bags, self.folds[fk], fam.exp, inner)
            if why and "why" not in self.status[ds]:
                self.status[ds]["why"] = f"experiment {fk[0]}: {why}"
                if self.status[ds]["status"] == "real":
                    self.status[ds]["status"] = "small"
                self.log(warning(ds, self.status[ds]))

    def context(self, fam):
        """What a draw's child reads (bags, folds, experiment), or None when the data set
        cannot be read here or its folds cannot be made."""
        ds = fam.row["dataset"]
        if ds not in self.data:
            self.check_data()
        bags, folds = self.data[ds][0], self.folds.get((fam.row["experiment"], ds))
        if bags is None or isinstance(folds, Exception):
            return None
        return {"bags": bags, "folds": folds, "exp": fam.exp,
                "experiment": fam.row["experiment"], "dataset": ds}

    def draw(self, fam, optional=False):
        """Time the family's next draw; False when it has none left, its data set is skipped,
        it failed (kept in the family's ``failed``), or (``optional``) the budget ran out."""
        row = fam.row
        i = len(row["draws"]) + len(row["failed"])
        if i >= len(fam.design):
            return False
        mi, ci = fam.design[i]
        m, exp = fam.methods[mi], fam.exp
        ctx = self.context(fam)
        if ctx is None:
            folds = self.folds.get((row["experiment"], row["dataset"]))
            row["skipped"] = (self.data[row["dataset"]][1] if not isinstance(folds, Exception)
                              else f"folds: {type(folds).__name__}: {folds}")
            return False
        ctx["settings"] = method_settings(exp, m) if row["kind"] != "hydr" \
            else experiment_settings(exp, tuned=False)
        cell = fam.cells[ci]
        sid = fam.staged.get((m["selector_id"], m["classifier_id"]))
        task = {"kind": row["kind"], "method": m, "cell": cell, "draw": i,
                "stage": sid is not None,
                "soft_cap": max(1.0, min(self.remaining(),
                                         self.seconds / max(len(self.fams), 1) * 2))}
        skey = (row["experiment"], row["dataset"], sid, tuple(cell))
        if row["kind"] == "untuned" and sid is not None:
            task["stage_state"] = self.stage_states.get(skey)
        if row["kind"] == "tuned":
            task["stage_known"] = skey[:3] in self.stage_cpu
            task.update(tuned_groups(m, self.points,
                                     np.random.default_rng([self.seed, fam.index, i]),
                                     first=(i == 0)))
        if row["kind"] == "hydr":
            hkey = hydr_key(row["dataset"], exp, m, cell)
            known = self.hydr.get(hkey)
            if known is not None:
                task.update(evaluations=known.evaluations, relieff=known.relieff,
                            relieff_cpu=known.relieff_cpu, chromosomes=known.chromosomes)
            task["max_evals"] = 20
        # a family's first draw runs to --fit-limit whatever the budget (else nothing is known
        # of it); extra draws stop when the budget is spent
        limit = min(max(self.remaining(), 1.0), self.fit_limit) if optional else self.fit_limit
        r = run_forked(ctx, task, limit)
        if "error" in r:
            row["failed"].append({"method": mi, "cell": list(cell), "error": r["error"]})
            self.log(f"  [{row['experiment']}/{row['dataset']}] {row['label']}: draw {i + 1} "
                     f"FAILED (not counted): {r['error']}")
            return False
        if "stopped" in r and optional:     # budget spent on an extra draw: not used
            fam.design = fam.design[:i]
            return False
        if "stopped" in r:
            r = {"cell_cpu": r["stopped"] * (exp["inner_folds"] if row["kind"] == "tuned"
                                             else 1), "fits": [], "lower": True}
        if row["kind"] != "untuned" and exp.get("threshold") == "auto":
            r["cell_cpu"] *= exp["inner_folds"] + 1   # timed without the threshold's folds
        if r.get("stage_cpu") is not None:
            self.stage_cpu.setdefault(skey[:3], []).append(r["stage_cpu"])
        if r.get("stage_state") is not None:
            self.stage_states[skey] = r["stage_state"]
        if row["kind"] == "hydr" and "evaluations" in r:
            self.hydr[hkey] = HydrCount(r["evaluations"], r["relieff"], r["relieff_cpu"],
                                        r["chromosomes"])
            row["fits_per_cell"], row["fits_how"] = fits_per_cell(m, exp, r["evaluations"])
        row["draws"].append({"method": mi, "cell": list(cell), "cell_cpu": r["cell_cpu"],
                             "fits": r["fits"], "lower": bool(r.get("lower")),
                             "points": r.get("points_done")})
        cpu = [f"{x:.3g}" for x in r["fits"][:6]]
        self.log(f"  [{row['experiment']}/{row['dataset']}] {row['label']}: cell "
                 f"{'>= ' if r.get('lower') else ''}{r['cell_cpu']:,.1f} s CPU"
                 + (f", fits {', '.join(cpu)} s" if cpu else " (stopped)"))
        return True

    def run(self):
        """Phase 1: one draw a family (a cheap untuned family more); phase 2: while the budget
        lasts, the family whose estimate weighs most."""
        self.check_data()
        for fam in self.fams:
            ok = self.draw(fam)
            while not ok and fam.row["failed"] and not fam.row["draws"] \
                    and len(fam.row["failed"]) < len(fam.design):     # a failed draw: the next
                ok = self.draw(fam)
            while (ok and fam.row["kind"] == "untuned"
                   and sum(d["cell_cpu"] for d in fam.row["draws"]) < MIN_UNTUNED_CPU):
                ok = self.draw(fam, optional=True)
        while self.remaining() > 0:
            live = [f for f in self.fams if f.row["draws"]
                    and len(f.row["draws"]) + len(f.row["failed"]) < len(f.design)]
            if not live:
                break
            self.draw(max(live, key=lambda f: f.row["cells"] * statistics.mean(
                d["cell_cpu"] for d in f.row["draws"]) / len(f.row["draws"])), optional=True)


def hydr_key(dataset, exp, method, cell):
    """The HyDR-MI draws that share their GA count and filter: same data set, protocol,
    scaling, cell and HyDR-MI settings (its classifier aside)."""
    p = hydr_settings(method["selector"])
    return (dataset, json.dumps(exp["protocol"], sort_keys=True), exp["scale"],
            json.dumps({k: p[k] for k in sorted(p) if k != "classifier"}, default=str),
            tuple(cell))


def plan(cfg, *, experiments=None, seconds=180.0, cores=16, points=0, max_draws=4,
         data_root=(), bags_root="results/bags", fit_limit=300.0, seed=0,
         cell_overhead=CELL_OVERHEAD, measure=True, strict=False, log=print):
    """The plan of a config (defaults filled: :func:`milbench.experiment.config.load_config`) as a dict:
    per experiment its counts, resources and families (measured unless ``measure`` is False),
    ``data_status`` per data set and the ``caveats`` its total rests on.  ``strict``: a
    ValueError, before any draw, when a data set is not the configuration's real data."""
    names = list(cfg["experiments"]) if not experiments else list(experiments)
    unknown = [n for n in names if n not in cfg["experiments"]]
    if unknown:
        raise ValueError(f"unknown experiment(s) {unknown}; known: {sorted(cfg['experiments'])}")
    out = {"experiments": [], "cores": cores, "seconds": seconds,
           "cell_overhead": cell_overhead}
    fams = plan_families(out, cfg, names, max_draws, np.random.default_rng(seed))
    if not measure:
        return finish(out, cores, cell_overhead, fixed=None, stage_cpu={})
    sampler = Sampler(cfg, fams, seconds, fit_limit, points, seed, data_root, bags_root, log)
    sampler.check_data()
    bad = {k: v for k, v in sampler.status.items() if v["status"] != "real"}
    if strict and bad:
        raise ValueError("--strict: not timing a plan on data other than the config's: "
                         + "; ".join(f"{k} is {v['status']} ({v.get('why') or v['where']})"
                                     for k, v in sorted(bad.items()))
                         + f". To time the real data: {GET_DATA}")
    fixed = fixed_job_cpu()
    sampler.run()
    for k, v in sampler.stage_cpu.items():
        out.setdefault("stage_cpu", {})["/".join(map(str, k))] = statistics.mean(v)
    out["data"] = {k: v[1] for k, v in sampler.data.items()}
    out["data_status"] = sampler.status
    out["measure_wall"] = time.perf_counter() - sampler.start
    return finish(out, cores, cell_overhead, fixed=fixed, stage_cpu=sampler.stage_cpu)


def finish(out, cores, cell_overhead, fixed, stage_cpu):
    """Totals: per family, experiment and config (``stage_cpu``: the fold stages' CPU timed
    per (experiment, data set, stage))."""
    total, lower_all, longest = 0.0, False, 0.0
    for e in out["experiments"]:
        cpu, lower = 0.0, False
        for fam in e["families"]:
            fits = [x for d in fam["draws"] for x in d["fits"]]
            fam["fit_cpu"] = ({"mean": statistics.mean(fits), "min": min(fits), "max": max(fits),
                               "n": len(fits)} if fits else None)
            fam["failed_draws"] = len(fam["failed"])
            if not fam["draws"]:
                fam["cpu"] = None
                fam["unknown"] = bool(fam["failed"]) or "skipped" in fam
                lower = True
                continue
            cell = statistics.mean(d["cell_cpu"] for d in fam["draws"])
            fam["cell_cpu"] = cell
            fam["cpu"] = cell * fam["cells"]
            fam["lower"] = any(d["lower"] for d in fam["draws"])
            lower |= fam["lower"]
            cpu += fam["cpu"]
            longest = max(longest, cell * e["cells_per_job"] / min(e["threads"], cores))
        if fixed is None:
            e["cpu"] = None
            continue
        stages = [v for k, v in stage_cpu.items() if k[0] == e["experiment"]]
        stage = (statistics.mean(x for v in stages for x in v) * e["stage_cells"]
                 if stages else 0.0)
        if e["stage_cells"] and not stages:
            lower = True
        e["stage_cpu"] = stage
        e["fixed_cpu"] = fixed * (e["method_jobs"] + e["stage_jobs"] + e["report_jobs"])
        e["overhead_cpu"] = cell_overhead * e["cells"]
        e["cpu"] = cpu + stage + e["fixed_cpu"] + e["overhead_cpu"]
        e["lower"] = lower
        e["wall"] = e["cpu"] / cores
        total += e["cpu"]
        lower_all |= lower
    out["fixed_job_cpu"] = fixed
    if fixed is not None:
        out["caveats"] = caveats(out)
        out["complete"] = not any(f.get("unknown") for e in out["experiments"]
                                  for f in e["families"])
        out["cpu"], out["lower"] = total, lower_all
        out["wall"] = max(total / cores, longest)
        for e in out["experiments"]:
            e["wall"] = max(e["cpu"] / cores,
                            max((f["cell_cpu"] * e["cells_per_job"] / min(e["threads"], cores)
                                 for f in e["families"] if f.get("cpu") is not None), default=0))
    return out
