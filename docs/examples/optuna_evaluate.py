#!/usr/bin/env python3
"""Drive `optimize evaluate` from Optuna: Optuna proposes, optimize scores.

One `optimize evaluate TEMPLATE [extra flags]` process serves the whole
study: each trial writes one JSON line (parameter name -> value) to its
standard input and reads one JSON line back (objectives, ratios to the
baseline, per-constraint violations, their total, feasibility, score), the
same numbers a study of the template stores for that vector.

The space comes from `optimize template show TEMPLATE --output json`: each
parameter's type (int, float, log-float, categorical), bounds or choices and
`when` condition. The objective is define-by-run: a parameter is suggested
only while its condition holds (the categorical it names is active and
takes one of the listed choices), as a study of the template samples it.

    python3 docs/examples/optuna_evaluate.py --optimize ./optimize \\
        --template joint-slo --trials 100 --seed 1 --sampler tpe \\
        --value rank --journal run.log -- --seeds 42,43,44

--value score        minimise the line's score (the stored score:
                     min(primary ratio, 10) + 1000 x total shortfall)
--value rank         minimise min(primary ratio, 10) + 10 x total shortfall,
                     the weight the study samplers rank by
--value constrained  minimise min(primary ratio, 10); the per-constraint
                     shortfalls go to TPESampler(constraints_func=...), or
                     from Optuna 5.0 to Trial.set_constraint

Output: one JSON line per trial on standard output,
{"number", "value", "score", "ratio" (primary), "violation", "feasible",
"params"}. With --journal FILE the study is kept in an Optuna
JournalStorage log, which `optimize study create TEMPLATE --from FILE`
takes as a warm start. Needs only the standard library and optuna (3.1 or
later).
"""

import argparse
import json
import math
import subprocess
import sys
import warnings

import optuna

RATIO_CAP = 10.0  # the cap on the primary ratio in every value below
RANK_WEIGHT = 10.0  # the samplers' weight on the total shortfall
# Optuna >= 5.0 takes constraints from Trial.set_constraint (every sampler
# reads them) and deprecates TPESampler(constraints_func=...), which 3.x and
# 4.x need.
SET_CONSTRAINT = hasattr(optuna.trial.Trial, "set_constraint")


def parse_args(argv):
    extra = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    p = argparse.ArgumentParser(description="Optuna study driving optimize evaluate")
    p.add_argument("--optimize", default="optimize", help="the optimize binary (default: optimize on PATH)")
    p.add_argument("--template", required=True, help="the strategy template to search")
    p.add_argument("--trials", type=int, default=100, help="number of trials (default 100)")
    p.add_argument("--seed", type=int, default=1, help="the sampler's seed (default 1)")
    p.add_argument("--sampler", choices=["tpe", "tpe-multivariate", "random"], default="tpe")
    p.add_argument("--value", choices=["score", "rank", "constrained"], default="score")
    p.add_argument("--journal", help="keep the study in this Optuna JournalStorage log (must not hold the study yet)")
    p.add_argument("--study-name", help="the study's name in the journal (default: TEMPLATE-SAMPLER-SEED)")
    args = p.parse_args(argv)
    if args.trials < 1:
        p.error("--trials must be at least 1, got %d" % args.trials)
    args.extra = extra
    return args


def templates_dir_flags(extra):
    """The --templates-dir flag among evaluate's flags, for template show."""
    for i, a in enumerate(extra):
        if a == "--templates-dir" and i + 1 < len(extra):
            return [a, extra[i + 1]]
        if a.startswith("--templates-dir="):
            return [a]
    return []


def load_space(args):
    cmd = [args.optimize, "template", "show", args.template, "--output", "json"] + templates_dir_flags(args.extra)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    space = []
    for p in json.loads(out)["parameters"]:
        kind = p["type"]
        if kind == "int":
            dist = optuna.distributions.IntDistribution(int(p["low"]), int(p["high"]))
        elif kind == "float":
            dist = optuna.distributions.FloatDistribution(p["low"], p["high"])
        elif kind == "log-float":
            dist = optuna.distributions.FloatDistribution(p["low"], p["high"], log=True)
        elif kind == "categorical":
            dist = optuna.distributions.CategoricalDistribution(p["choices"])
        else:
            sys.exit("optuna_evaluate: parameter %s: unknown type %r" % (p["name"], kind))
        space.append((p["name"], dist, p.get("when")))
    return space


def suggest(trial, name, dist):
    """The trial's value of one parameter, through Optuna's public suggest API."""
    if isinstance(dist, optuna.distributions.IntDistribution):
        return trial.suggest_int(name, dist.low, dist.high)
    if isinstance(dist, optuna.distributions.FloatDistribution):
        return trial.suggest_float(name, dist.low, dist.high, log=dist.log)
    return trial.suggest_categorical(name, dist.choices)


class Evaluate:
    """One optimize evaluate process: a vector in, its judgement out."""

    def __init__(self, args):
        cmd = [args.optimize, "evaluate", args.template] + args.extra
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        line = self.proc.stdout.readline()
        if not line:
            sys.exit("optuna_evaluate: %s exited before its header (exit %s)" % (" ".join(cmd), self.proc.wait()))
        self.header = json.loads(line)

    def __call__(self, vector):
        self.proc.stdin.write(json.dumps(vector) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            sys.exit("optuna_evaluate: evaluate exited (exit %s)" % self.proc.wait())
        res = json.loads(line)
        if "error" in res:
            sys.exit("optuna_evaluate: evaluate refused %s: %s" % (json.dumps(vector), res["error"]))
        return res

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def number(x):
    """A JSON number of evaluate, None (not measurable) as infinity."""
    return math.inf if x is None else float(x)


def make_sampler(args):
    if args.sampler == "random":
        return optuna.samplers.RandomSampler(seed=args.seed)
    kw = {"seed": args.seed}
    if args.sampler == "tpe-multivariate":
        kw.update(multivariate=True, group=True)
    if args.value == "constrained" and not SET_CONSTRAINT:
        kw["constraints_func"] = lambda trial: trial.user_attrs["constraints"]
    return optuna.samplers.TPESampler(**kw)


def make_storage(path):
    if path is None:
        return None
    journal = optuna.storages.JournalStorage
    try:  # Optuna >= 4.0
        backend = optuna.storages.journal.JournalFileBackend(path)
    except AttributeError:  # Optuna 3.x
        backend = optuna.storages.JournalFileStorage(path)
    return journal(backend)


def main(argv):
    args = parse_args(argv)
    space = load_space(args)
    evaluate = Evaluate(args)
    primary = evaluate.header["primary"]
    constraints = evaluate.header["constraints"]

    def objective(trial):
        vector = {}
        for name, dist, when in space:
            if when is not None and vector.get(when["param"]) not in when["choices"]:
                continue  # inactive: its condition's parameter is inactive or takes another choice
            vector[name] = suggest(trial, name, dist)
        res = evaluate(vector)
        ratio, violation = number(res["ratios"][primary]), number(res["violation"])
        score = number(res["score"])
        capped = min(ratio, RATIO_CAP)
        # Optuna treats a violation > 0 as infeasible; an unmeasured one (null) counts as 1 (unmet).
        shortfalls = [1.0 if res["violations"][c] is None else res["violations"][c] for c in constraints]
        trial.set_user_attr("constraints", shortfalls)
        if args.value == "constrained" and SET_CONSTRAINT:
            for c, v in zip(constraints, shortfalls):
                trial.set_constraint(c, v)
        # The whole judgement, as `study create --from FILE` reads it back.
        for k in ("objectives", "violations", "score", "violation", "feasible"):
            trial.set_user_attr(k, res[k])
        trial.set_user_attr("ratio", res["ratios"][primary])
        if args.value == "score":
            return score
        if args.value == "rank":
            return capped + RANK_WEIGHT * violation
        return capped

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    name = args.study_name or "%s-%s-%d" % (args.template, args.sampler, args.seed)
    study = optuna.create_study(study_name=name, storage=make_storage(args.journal), sampler=make_sampler(args))
    # What the trials are judged against, as `study create --from FILE` reads it back.
    h = evaluate.header
    for k in ("template", "workload", "seeds", "baseline", "primary", "constraints", "scores"):
        study.set_user_attr(k, h[k])
    study.set_user_attr("value", args.value)
    study.set_user_attr("evaluate_flags", args.extra)

    def report(study, trial):
        a = trial.user_attrs
        out = {"number": trial.number, "value": trial.value, "score": a.get("score"), "ratio": a.get("ratio"),
               "violation": a.get("violation"), "feasible": a.get("feasible"), "params": trial.params}
        print(json.dumps(out), flush=True)

    try:
        study.optimize(objective, n_trials=args.trials, callbacks=[report])
    finally:
        evaluate.close()


if __name__ == "__main__":
    main(sys.argv[1:])
