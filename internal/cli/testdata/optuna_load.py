"""Opens a study that `optimize study export NAME --format optuna` wrote and
prints what Optuna reads from it, as one JSON document, for the Go test
that compares it with the study itself.

Usage: python3 optuna_load.py FILE STUDY_NAME
"""

import json
import sys
import warnings

import optuna
from optuna.study._multi_objective import _get_pareto_front_trials_by_trials
from optuna.trial import TrialState


def trial_doc(t):
    return {
        "number": t.number,
        "state": t.state.name,
        "params": t.params,
        "distributions": {k: optuna.distributions.distribution_to_json(d) for k, d in t.distributions.items()},
        "values": t.values,
        "constraints": t.system_attrs.get("constraints"),
        # Optuna 5's Trial.set_constraint keys, and 5's own reading of
        # every constraint attribute (None before 5.0).
        "keyed_constraints": {k[len("constraints:") :]: v for k, v in t.system_attrs.items() if k.startswith("constraints:")},
        "trial_constraints": dict(t.constraints) if hasattr(t, "constraints") else None,
        "fail_reason": t.system_attrs.get("fail_reason"),
        "user_attrs": t.user_attrs,
        "datetime_start": t.datetime_start.isoformat() if t.datetime_start else None,
        "datetime_complete": t.datetime_complete.isoformat() if t.datetime_complete else None,
    }


def main():
    path, name = sys.argv[1], sys.argv[2]
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.simplefilter("ignore")  # JournalStorage is "experimental" in 3.x
    storage = optuna.storages.JournalStorage(optuna.storages.JournalFileStorage(path))
    study = optuna.load_study(study_name=name, storage=storage)
    trials = study.get_trials(deepcopy=False)
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    # Feasible as Optuna decides it for constrained optimisation: every
    # constraint <= 0.
    feasible = [t for t in complete if all(c <= 0 for c in t.system_attrs.get("constraints", []))]
    doc = {
        "optuna_version": optuna.__version__,
        "study_name": study.study_name,
        "directions": [d.name for d in study.directions],
        "system_attrs": study.system_attrs,
        "user_attrs": study.user_attrs,
        "trials": [trial_doc(t) for t in trials],
        # study.best_trials: the Pareto front of every complete trial up to
        # Optuna 3.x, of the feasible ones from 4.0.
        "best_trials": sorted(t.number for t in study.best_trials),
        "feasible": sorted(t.number for t in feasible),
        # Optuna's own Pareto logic over the feasible trials.
        "feasible_front": sorted(t.number for t in _get_pareto_front_trials_by_trials(feasible, study.directions)),
    }
    # The study goes on in Optuna: its sampler reads every trial and
    # proposes one more over the same distributions.
    distributions = {}
    for t in trials:
        distributions.update(t.distributions)
    trial = study.ask(fixed_distributions=distributions)
    study.tell(trial, complete[0].values)
    doc["continued"] = {"number": trial.number, "trials": len(study.trials), "params": sorted(trial.params)}
    json.dump(doc, sys.stdout)


main()
