"""The section of docs/benchmarks.md that benchmarks/layers.sh measures, printed on stdout from the
runs it kept in WORK: NAME.SIDE.ROUND.log (a plain run's printed lines, SIDE warm or as-is),
NAME.estimate.ROUND.json (`preflight estimate --json`) and walls ("TAG START END" per command).

    python3 benchmarks/layers.py WORK ROUNDS VERSION LOADAVG MEASURED_ONLY ALLOCATOR MODEL...

LOADAVG is "BEFORE AFTER"; MEASURED_ONLY is 1 when no estimate was run; ALLOCATOR is the warm side's
variables as "NAME VALUE NAME VALUE ...".
"""
import json
import math
import os
import re
import statistics
import sys

from section import machine

# Iterations left out of a run's median: the first ones pay for the allocator's and the
# kernels' first use.
WARMUP = 3
ITERATION = re.compile(r"^iter (\d+) time ([0-9.]+)$")


def step(work, tag):
    """The median iteration time of a run's log after the warm-up iterations."""
    with open(os.path.join(work, tag + ".log")) as log:
        times = [float(m.group(2)) for m in map(ITERATION.match, log) if m and int(m.group(1)) > WARMUP]
    if not times:
        sys.exit("layers.sh: {}: no iteration after the first {}".format(tag, WARMUP))
    return statistics.median(times)


def walls(work):
    """Each command's wall time, by tag (the last attempt's, when one was retried)."""
    times = {}
    with open(os.path.join(work, "walls")) as f:
        for line in f:
            tag, start, end = line.split()
            times[tag] = float(end) - float(start)
    return times


def description(name):
    with open(os.path.join("benchmarks", "models", name, "job.yaml")) as f:
        for line in f:
            if line.startswith("description:"):
                return line.split(":", 1)[1].strip()
    return name


def estimate(work, tag):
    try:
        with open(os.path.join(work, tag + ".json")) as f:
            report = json.load(f)
    except (OSError, ValueError):
        return None
    return report if isinstance(report.get("here"), dict) else None


def seconds(value):
    return "{:.0f} ms".format(value * 1e3) if value < 1 else "{:.2f} s".format(value)


def over_rounds(values):
    """The median of the rounds, and their range when there are several."""
    text = seconds(statistics.median(values))
    return text if len(values) == 1 else "{} ({}–{})".format(text, seconds(min(values)), seconds(max(values)))


def geomean(values):
    return math.exp(statistics.mean(math.log(v) for v in values))


def main(work, rounds, version, loadavg, measured_only, allocator, models):
    wall = walls(work)
    rows, ratios, ratios_as_is = [], [], []
    totals = dict(parts=0, calls=0, benchmarked=0, cached=0, unbenchmarked=0, bench=0.0, whole=0.0,
                  whole_as_is=0.0, estimate=0.0)
    for name in models:
        tags = {side: ["{}.{}.{}".format(name, side, r) for r in range(1, rounds + 1)]
                for side in ("warm", "as-is")}
        warm = [step(work, tag) for tag in tags["warm"]]
        as_is = [step(work, tag) for tag in tags["as-is"]]
        totals["whole"] += statistics.median(wall[tag] for tag in tags["warm"])
        totals["whole_as_is"] += statistics.median(wall[tag] for tag in tags["as-is"])
        row = ["{} ({})".format(name, description(name)), over_rounds(warm), over_rounds(as_is),
               "{:.2f}×".format(statistics.median(as_is) / statistics.median(warm))]
        reports = [] if measured_only else [estimate(work, "{}.estimate.{}".format(name, r))
                                             for r in range(1, rounds + 1)]
        if measured_only or None in reports:
            rows.append(row + ["not run" if measured_only else "**no estimate**"] + [""] * 6)
            continue
        # Counts from the first round (each round starts from an empty cache), times over all.
        here = reports[0]["here"]
        constructed = [report["here"]["constructed_seconds"] for report in reports]
        # Each round's estimate against that round's warm step (run back to back), the median of
        # the rounds: a pair shares the machine's load of its minute.
        paired = [c / w for c, w in zip(constructed, warm)]
        ratio = statistics.median(paired)
        ratios.append((ratio, name))
        ratios_as_is.append(statistics.median(c / a for c, a in zip(constructed, as_is)))
        ratio_text = "{:.3f}".format(ratio)
        if len(paired) > 1:
            ratio_text += " ({:.2f}–{:.2f})".format(min(paired), max(paired))
        failed = sorted({report.get("verdict") for report in reports} - {"pass"})
        verdict = " (**{}**)".format(", ".join(failed)) if failed else ""
        cached = str(here["cached"])
        if here["unbenchmarked"]:
            cached += ", {} not rebuilt".format(here["unbenchmarked"])
        bench = statistics.median(report["here"]["bench_seconds"] for report in reports)
        rows.append(row + [over_rounds(constructed) + verdict, ratio_text,
                           over_rounds([report["here"]["measured_seconds"] for report in reports]),
                           str(here["parts"]), str(here["calls"]),
                           "{} ({:.1f} s)".format(here["benchmarked"], bench), cached])
        for key in ("parts", "calls", "benchmarked", "cached", "unbenchmarked"):
            totals[key] += here[key]
        totals["bench"] += bench
        totals["estimate"] += statistics.median(wall.get("{}.estimate.{}".format(name, r), 0.0)
                                                for r in range(1, rounds + 1))

    variables = ", ".join("`{}={}`".format(*pair) for pair in zip(allocator[::2], allocator[1::2]))
    print("## The step constructed from its parts (preflight estimate)\n")
    print("Measured by `benchmarks/layers.sh` ({} round{} of both sides{}) in one run of Preflight at "
          "{} on: {}; 1-minute load average {} before the run and {} after it. Every job runs on the CPU "
          "with `OMP_NUM_THREADS=1`.\n".format(
              rounds, "" if rounds == 1 else "s",
              "" if rounds == 1 else ": the median of the rounds and their range",
              version, machine(), loadavg[0], loadavg[1]))
    print("*Step, allocator warm*: the median iteration of `preflight run --no-harness` of "
          "benchmarks/models/NAME/job.yaml after the first {} (the job prints each iteration's wall time, "
          "from the end of the previous one to the end of its optimizer step), with {} in the job's "
          "environment; *as is*: the same without them, and their ratio. *Constructed*: `preflight "
          "estimate`'s step built from its parts on this CPU, against the warm step (the like-for-like one: "
          "the parts' benchmark keeps its allocator warm): the median over the rounds of each round's "
          "ratio, a model's runs back to back, and their range; *dry run's step*: the instrumented step "
          "it was built from. *Parts*: distinct parts of the step (layer calls, ops outside layers, "
          "optimizer steps) and *calls* of them; *benchmarked* now (and the time it took) or *cached* "
          "from an earlier model, the layer cache emptied at the start of each round (the counts are "
          "the first round's, the time benchmarking the median of the rounds).\n".format(WARMUP, variables))
    print("| model | step, allocator warm | step, allocator as is | as is ÷ warm | constructed | "
          "constructed ÷ warm | dry run's step | parts | calls | benchmarked | cached |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    whole = ("{:.1f} s for benchmarking each model whole (one plain run of all its iterations, allocator "
             "warm; {:.1f} s as is)".format(totals["whole"], totals["whole_as_is"]))
    if not ratios:
        print("- No constructed step; {}.\n".format(whole))
        return
    low, high = min(ratios), max(ratios)
    print("- Constructed ÷ measured (warm) over {} models: geometric mean {:.3f}, min {:.3f} ({}), "
          "max {:.3f} ({}); against the step as is, geometric mean {:.3f}.".format(
              len(ratios), geomean([r for r, _ in ratios]), low[0], low[1], high[0], high[1],
              geomean(ratios_as_is)))
    calls = max(totals["calls"], 1)
    print("- Parts: {} benchmarked once across the models (the cache kept from one to the next) for {} "
          "calls in their steps, {:.3f} a call; {} distinct within each model, summed ({:.3f} a call); {} "
          "from the cache; {} not rebuilt.".format(
              totals["benchmarked"], totals["calls"], totals["benchmarked"] / calls, totals["parts"],
              totals["parts"] / calls, totals["cached"], totals["unbenchmarked"]))
    print("- Time: benchmarking the parts took {:.1f} s in all (`bench_seconds`; {:.1f} s for the whole "
          "`preflight estimate` runs, their dry runs included), against {}.\n".format(
              totals["bench"], totals["estimate"], whole))


if __name__ == "__main__":
    if len(sys.argv) < 8:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(), sys.argv[5] == "1",
         sys.argv[6].split(), sys.argv[7:])
