"""The cases of benchmarks/published.sh, from benchmarks/published/throughputs.json.

    python3 benchmarks/published.py jobs                  one line per job: the job file, then
                                                          the GPUs its cases name, tab-separated
    python3 benchmarks/published.py section WORK VERSION  the section of docs/benchmarks.md, from
                                                          WORK/JOB.json (`preflight estimate --json`)
"""
import json
import math
import os
import sys

from section import machine

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "published")
HEADING = "## The projection against published training throughputs (preflight estimate --gpu)"


def cases():
    with open(os.path.join(HERE, "throughputs.json")) as f:
        return json.load(f)["cases"]


def jobs():
    gpus = {}
    for case in cases():
        gpus.setdefault(case["job"], [])
        if case["gpu"] not in gpus[case["job"]]:
            gpus[case["job"]].append(case["gpu"])
    for job, names in gpus.items():
        print("\t".join([job] + names))


def description(job):
    with open(os.path.join(HERE, job)) as f:
        for line in f:
            if line.startswith("description:"):
                return line.split(":", 1)[1].strip()
    return job


def projection(work, case):
    """The batch the dry run measured and the job's step on the case's GPU, from its `preflight
    estimate --json`; None when the job was not run."""
    try:
        with open(os.path.join(work, case["job"] + ".json")) as f:
            estimate = json.load(f)
    except FileNotFoundError:
        return None
    for gpu in estimate["gpus"]:
        if gpu["gpu"] == case["gpu"]:
            batch = estimate["estimate"]["batch_size"]
            if not batch:
                sys.exit("published.py: {}: the dry run saw no batch size".format(case["job"]))
            return batch, gpu
    sys.exit("published.py: {}: no projection on {}".format(case["job"], case["gpu"]))


def section(work, version):
    rows, ratios, inside = [], [], 0
    for case in cases():
        name = description(case["job"]).split(",")[0]
        projected = projection(work, case)
        if projected is None:
            rows.append("| {} | {} | {} | {} | {:g} | not run | | | | |".format(
                name, case["precision"], case["gpu"], case["batch"], case["published"]))
            continue
        # The GPU's compute (and all-reduce: none on one GPU), not the iteration: the data
        # pipeline's pace is this machine's, and NVIDIA's runs loaded data on a DGX with DALI.
        here, step = projected
        seconds = step["compute_seconds"]
        typical = here / seconds["typical"]
        low, high = here / seconds["high"], here / seconds["low"]
        ratio = typical / case["published"]
        ratios.append(ratio)
        inside += low <= case["published"] <= high
        data = step.get("data_seconds")
        rows.append("| {} | {} | {} | {} / {} | {:g} | {:.0f} ({:.0f}–{:.0f}) | {:+.0f}% | {} | {} | {} |"
                    .format(name, case["precision"], case["gpu"], case["batch"], here, case["published"],
                            typical, low, high, (ratio - 1) * 100, step["precision"], step["bound"],
                            "{:.0f} ms".format(data * 1e3) if data else "–"))
    if not ratios:
        sys.exit("published.py: no case was projected")
    errors = [abs(r - 1) for r in ratios]
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    out = [HEADING, "",
           "Measured at {}, on {}: `benchmarks/published.sh`, one `preflight estimate JOB --gpu NAME...` "
           "of each job in benchmarks/published/, its dry run's measured step projected part by part "
           "onto the GPU through the GPU table (policies/gpus.yaml). *Projected*: the job's batch ÷ the "
           "projected step's compute, typical (low–high), per second; *error*: typical ÷ published − 1; "
           "*as*: the precision most of the step's FLOPs were projected in; *bound*: what takes most of "
           "the projected step; *data here*: the pace of the job's DataLoader on this machine, which the "
           "projected iteration waits for when it is the slower (*input*) and which is left out of the "
           "comparison. Published figures: benchmarks/published/throughputs.json, with the software each "
           "ran with and its page.".format(version, machine()), "",
           "| model | precision | GPU | batch (published / here) | published /s | projected /s | error | as "
           "| bound | data here |",
           "|---|---|---|---|---|---|---|---|---|---|"] + rows + [
           "",
           "Over the {} cases projected: mean absolute error {:.0f}% (largest {:.0f}%), geometric mean "
           "of projected ÷ published {:.2f}; the published figure inside the projected range in {} of "
           "{}.".format(len(ratios), 100 * sum(errors) / len(errors), 100 * max(errors), geomean, inside,
                        len(ratios)),
           ""]
    print("\n".join(out))


def main():
    if sys.argv[1:] == ["jobs"]:
        jobs()
    elif len(sys.argv) == 4 and sys.argv[1] == "section":
        section(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
