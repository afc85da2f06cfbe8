#!/usr/bin/env bash
# Measures the bundled example jobs side by side in one run and writes their section of
# docs/benchmarks.md (from its heading up to its hand-written "### Reading these figures"):
#  1. the wall time of a dry run, `preflight run -q`, of every examples/NAME/job.yaml (and of
#     benchmarks/overhead/NAME/example.yaml: an example at its script's default batch size);
#  2. the harness's overhead: that dry run against `preflight run -q --no-harness` of
#     benchmarks/overhead/NAME/job.yaml, the same job as the harness clamps it (the values it
#     clamps given on the command line, each DataLoader loop stopped after 2 batches by the
#     script's own options).
# Before timing, one checked run of each shows that a pair does the same work. The RUNS runs of
# each command are split into ROUNDS hyperfine runs of all the commands in turn, so that a
# change in the machine's load over the minutes of the run falls on both sides of each pair.
# Usage: benchmarks/examples.sh [RUNS [ROUNDS]]   (as root, after scripts/setup pytorch)
# PREFLIGHT_DATA_DIR (src/util/data_dir.hpp) may point at a clean copy of emulator/, policies/ and
# images/, so that edits in the work tree cannot change the harness mid-run.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
rounds=${2:-10}
(( runs % rounds == 0 )) || { echo "examples.sh: RUNS must be a multiple of ROUNDS" >&2; exit 2; }
preflight=${PREFLIGHT:-$PWD/build/preflight}  # PREFLIGHT=a copy, so that a rebuild cannot land mid-run
command -v hyperfine >/dev/null || apt-get install -y -qq hyperfine >/dev/null
command -v jq >/dev/null || apt-get install -y -qq jq >/dev/null
jobs=(mnist word_language_model dcgan imagenet vae dcgan-64)
# The job a pair times with the harness: benchmarks/overhead/NAME/example.yaml (an example at
# other settings, such as its script's default batch size), else examples/NAME/job.yaml.
example_of() { [[ -f benchmarks/overhead/$1/example.yaml ]] && echo "benchmarks/overhead/$1/example.yaml" || echo "examples/$1/job.yaml"; }
runs_dir=${PREFLIGHT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/preflight}/runs

# Which Preflight is measured: the commit, and whether the work tree differs from it (src/ unless
# PREFLIGHT gives the binary, emulator/ and policies/ unless PREFLIGHT_DATA_DIR gives them);
# PREFLIGHT_VERSION names it instead (for copies made from a commit).
version=${PREFLIGHT_VERSION:-commit $(git rev-parse --short HEAD)}
paths=()
[[ -n ${PREFLIGHT:-} ]] || paths+=(src)
[[ -n ${PREFLIGHT_DATA_DIR:-} ]] || paths+=(emulator policies)
changed=$([[ -n ${PREFLIGHT_VERSION:-} || ${#paths[@]} == 0 ]] || git status --porcelain -- "${paths[@]}")
[[ -z $changed ]] || version+=" with uncommitted changes to $(awk '{print $2}' <<<"$changed" | cut -d/ -f1 | sort -u | paste -sd, -)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The run folders Preflight keeps of a job, sorted: RUNS_DIR/NAME-*.
run_folders() {  # NAME
  find "$runs_dir" -mindepth 1 -maxdepth 1 -name "$1-*" 2>/dev/null | sort || true
}

# One run kept for the check: the report ($work/TAG.json), the job's printed lines
# ($work/TAG.log), its events ($work/TAG.events) and its output files ($work/TAG.outputs),
# the last three from the run folder Preflight keeps in its cache.
checked_run() {  # TAG JOB_FILE [ARGS...]
  local tag=$1 job=$2 name before run
  shift 2
  name=$(sed -n 's/^name: *//p' "$job")
  before=$(run_folders "$name")
  "$preflight" run --json "$work/$tag.json" "$@" "$job" >/dev/null 2>"$work/$tag.err" || true
  run=$(comm -13 <(echo "$before") <(run_folders "$name"))
  if [[ -z $run || $run == *$'\n'* ]]; then
    echo "examples.sh: cannot tell the run folder of $job: ${run:-none}" >&2
    exit 1
  fi
  sed -n 's/^  | //p' "$work/$tag.err" >"$work/$tag.log"
  cat "$run/harness/events.jsonl" >"$work/$tag.events" 2>/dev/null || : >"$work/$tag.events"
  (cd "$run/outputs" && find . -type f -printf '%P\n' | sort) >"$work/$tag.outputs"
}

load_before=$(cut -d' ' -f1 /proc/loadavg)
commands=()
for name in "${jobs[@]}"; do
  # A: the example as it is, with the harness; B: the clamped job, with the harness (nothing
  # may be left to clamp or cut); C: the clamped job without the harness, as timed.
  example=$(example_of "$name")
  checked_run "$name.A" "$example"
  checked_run "$name.B" "benchmarks/overhead/$name/job.yaml"
  checked_run "$name.C" "benchmarks/overhead/$name/job.yaml" --no-harness
  commands+=(-n "$name with the harness" "$preflight run -q $example"
             -n "$name without" "$preflight run -q --no-harness benchmarks/overhead/$name/job.yaml")
done

# Each round times every command in turn (a pair's two commands one after the other); the
# first round starts with one warm-up run of each.
for round in $(seq "$rounds"); do
  hyperfine -N --warmup $((round == 1)) --runs $((runs / rounds)) --export-json "$work/times-$round.json" \
    "${commands[@]}" >&2
done

load_after=$(cut -d' ' -f1 /proc/loadavg)

python3 - "$work" "$runs" "$rounds" "$version" "$load_before $load_after" "${jobs[@]}" >"$work/section.md" <<'PY'
import glob, json, os, re, statistics, subprocess, sys
work, runs, rounds, version, loadavg, jobs = (sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4],
                                              sys.argv[5].split(), sys.argv[6:])

# What each job runs in the dry run, which of its printed lines log training (they must come out
# the same with and without the harness, digits aside), and the outputs written by chance.
about = {
    "mnist": ("a small CNN, 2 epochs of 2 batches of 64, a test (2 batches of 256) after each and at the end",
              r"^(epoch \d+ (batch|accuracy)|final accuracy)"),
    "word_language_model": ("2-layer LSTM, 2 epochs of 2 batches of 20 columns × 35 words taken by index (the loop cut ends the loops), validation (2 batches) after each, final test",
                            r"^\| (epoch|end of epoch|End of training)"),
    "dcgan": ("DCGAN at 64×64, 2 epochs of 2 batches of 16 (2 data workers)", r"^\[\d+/\d+\]\[\d+/\d+\]"),
    "dcgan-64": ("DCGAN at the script's defaults (batch 64, 64 feature maps), 2 epochs of 2 batches (2 data workers)",
                 r"^\[\d+/\d+\]\[\d+/\d+\]"),
    "imagenet": ("ResNet-18 at 64×64, 2 epochs of 2 training and 2 validation batches of 16 (4 data workers)",
                 r"^(Epoch: |Test: | \* )", {"model_best.pth.tar"}),
    "vae": ("VAE, 2 epochs of 2 training and 1 test batch of 32 (1 data worker)", r"^(Train Epoch|====>)"),
}

def load(tag, ext):
    with open(os.path.join(work, tag + "." + ext)) as f:
        return json.load(f) if ext == "json" else f.read().splitlines()

def events(tag, ev):
    return [e for e in map(json.loads, load(tag, "events")) if e.get("ev") == ev]

def passed(report):
    return [s["name"] for s in report["stages"] if s["status"] == "passed"]

def ms(r):
    return "{:.0f} ± {:.0f} ms".format(r["mean"] * 1e3, r["stddev"] * 1e3)

# The rounds' runs of each command, merged: mean, sample standard deviation, extremes, and the
# user and system times (hyperfine gives only their means) weighted by runs.
times = {}
for path in sorted(glob.glob(os.path.join(work, "times-*.json"))):
    for r in json.load(open(path))["results"]:
        t = times.setdefault(r["command"], {"times": [], "user": 0.0, "system": 0.0})
        t["times"] += r["times"]
        t["user"] += r["user"] * len(r["times"])
        t["system"] += r["system"] * len(r["times"])
for t in times.values():
    n = len(t["times"])
    t.update(mean=statistics.mean(t["times"]), stddev=statistics.stdev(t["times"]), min=min(t["times"]),
             max=max(t["times"]), user=t["user"] / n, system=t["system"] / n)
sys.path.insert(0, "benchmarks")
from section import machine
gpus = "no GPU" if subprocess.run(["sh", "-c", "ls /dev/nvidia0"], capture_output=True).returncode else "a GPU"

print("## Example jobs and harness overhead (issue 3)\n")
print("Measured by `benchmarks/examples.sh` ({} runs each after one warm-up, in {} rounds of hyperfine "
      "timing every command in turn; warm image cache), "
      "all figures side by side in one run of Preflight at {} on: {}, {}; 1-minute load average "
      "{} before the run and {} after it. The jobs' own `OMP_NUM_THREADS` is 1.\n".format(
          runs, rounds, version, machine(), gpus, loadavg[0], loadavg[1]))
print("### Dry-run wall time per example\n")
print("`preflight run -q examples/NAME/job.yaml` (dcgan-64: benchmarks/overhead/dcgan-64/example.yaml, "
      "examples/dcgan at its script's default batch size), the whole pipeline: spec, profile, plan, input "
      "sampling, the container with the harness, diagnosis and report. Target: under a minute each.\n")
print("| job | what the dry run runs | wall time | under a minute |")
print("|---|---|---|---|")
for name in jobs:
    r = times[name + " with the harness"]
    print("| {} | {} | {} (min {:.1f} s, max {:.1f} s) | {} |".format(
        name, about[name][0], ms(r), r["min"], r["max"], "yes" if r["max"] < 60 else "**no**"))

print("\n### The harness's overhead\n")
print("Each dry run above against the same clamped job without the harness: "
      "`preflight run -q --no-harness benchmarks/overhead/NAME/job.yaml`, a benchmark-only job "
      "whose `code:` is the example's folder and whose command gives the values the harness clamps "
      "explicitly (`--epochs 2`, `--log-interval 2`, ...) and stops each DataLoader loop after 2 "
      "batches with the script's own `--max-batches 2` (mnist, dcgan, imagenet; `itertools.islice`, "
      "which, like the harness's cap, asks for no third batch) or needs nothing (vae's data is 2 "
      "and 1 batches, word_language_model has no DataLoader). A limit on the loop rather than a "
      "smaller data set keeps the rest of the job's work as it is: the data set, its shuffling "
      "(imagenet's sampler permutes all 1,281,167 indices each epoch) and the workers' prefetching. Without the harness there is no "
      "virtual GPU, so those jobs take their CPU path: `--cuda` is left out (it would fail on the "
      "CPU-only torch) and vae keeps the one data worker its CUDA path uses (`--workers 1`). Both "
      "sides run the same Preflight pipeline and sandbox; the difference is the harness: "
      "`sitecustomize`, the torch hooks, stage tracking, the DataLoader cap, clamping, the virtual "
      "GPU and the profiled training step (docs/harness.md).\n")
print("Wall time: the overhead is the difference of the means ± its standard error, "
      "√(sd₁² + sd₂²)/√runs; a difference within about twice that is noise. CPU time: the mean "
      "user + system time of Preflight and everything it reaped (the container's processes, "
      "DataLoader workers included), as hyperfine reports it (only its mean, so no spread).\n")
print("| job | wall, with the harness | wall, clamped job without it | wall overhead | wall ratio | CPU, with / without | CPU overhead |")
print("|---|---|---|---|---|---|---|")
for name in jobs:
    h, n = times[name + " with the harness"], times[name + " without"]
    d = h["mean"] - n["mean"]
    se = (h["stddev"] ** 2 + n["stddev"] ** 2) ** 0.5 / len(h["times"]) ** 0.5
    ch, cn = h["user"] + h["system"], n["user"] + n["system"]
    print("| {} | {} | {} | {:+.0f} ± {:.0f} ms | {:.2f}× | {:.0f} / {:.0f} ms | {:+.0f} ms ({:.2f}×) |".format(
        name, ms(h), ms(n), d * 1e3, se * 1e3, h["mean"] / n["mean"], ch * 1e3, cn * 1e3,
        (ch - cn) * 1e3, ch / cn))

print("\n### Checking that a pair does the same work\n")
print("Before timing, one run of each: (A) the example with the harness, (B) the clamped job "
      "with the harness, (C) the clamped job without it, as timed.\n")
print("- *clamps*: what the harness changed in A (report.json `clamps`), and whether the clamped "
      "job's command gives each of those values; a loop the harness ended (\"for loop at main.py:148\") "
      "is ended by the clamped job's script itself, which B shows.")
print("- *loops cut*: the DataLoader loops the harness stopped in A (`cap` events) and the "
      "training loops' batches (`epoch_end` events: yielded of the loader's length).")
print("- *B*: under the harness the clamped job must leave it nothing to do, no clamp and no "
      "loop cut (its loops end at 2 batches on their own), and pass the same stages as A.")
print("- *log lines*: the job's printed training log (per job: training, validation and epoch "
      "lines) of A and C, equal line by line once digits are masked (losses, times and seeds "
      "differ; loaders keep their full length, so a batch counter such as `[1/80073]` is the "
      "same).")
print("- *outputs*: the files A and C wrote to their output folders. imagenet's "
      "`model_best.pth.tar` is left out: the script writes it only when the validation accuracy "
      "beats the best so far (0 at first), which with FakeData's random labels happens by chance, "
      "in some runs and not others.\n")
print("| job | clamps (A) | in the clamped job's command | loops cut (A) | B: clamps, cuts, stages | log lines A / C | outputs A / C |")
print("|---|---|---|---|---|---|---|")
problems = []
for name in jobs:
    a, b, c = load(name + ".A", "json"), load(name + ".B", "json"), load(name + ".C", "json")
    command = open(os.path.join("benchmarks/overhead", name, "job.yaml")).read()
    clamps, missing = [], []
    for cl in a["clamps"]:
        option = cl["what"].split()[-1]
        clamps.append("`{} {} → {}`".format(option, cl["original"], cl["value"]))
        # A loop the harness ended ("for loop at main.py:148") has no option of its own: the
        # clamped job's script ends it itself, which B shows (no cut left to make there).
        if " loop at " in cl["what"]:
            continue
        if not re.search(r"{}[ =]{}\b".format(re.escape(option), cl["value"]), command):
            missing.append("`{} {}`".format(option, cl["value"]))
    caps = ["{}:{}".format(os.path.basename(e["where"]["file"]), e["where"]["line"]) if e.get("where") else "?"
            for e in events(name + ".A", "cap")]
    ends = ["{} of {}".format(e["batches"], e["of"]) for e in events(name + ".A", "epoch_end")]
    cut = "{}; training: {}".format(", ".join(caps) or "none", ", ".join(ends)) if ends else (", ".join(caps) or "none (no DataLoader)")
    b_clamps, b_caps = len(b["clamps"]), len(events(name + ".B", "cap"))
    b_same = passed(b) == passed(a)
    pattern = re.compile(about[name][1])
    mask = lambda lines: [re.sub(r"\d+(\.\d+)?(e[-+]\d+)?", "#", l) for l in lines if pattern.search(l)]
    log_a, log_c = mask(load(name + ".A", "log")), mask(load(name + ".C", "log"))
    chance = about[name][2] if len(about[name]) > 2 else set()
    out_a, out_c = [[f for f in load(name + tag, "outputs") if f not in chance] for tag in (".A", ".C")]
    ok = (not missing and b_clamps == 0 and b_caps == 0 and b_same and log_a == log_c and out_a == out_c
          and a["verdict"] == b["verdict"] == c["verdict"] == "pass")
    if not ok:
        problems.append(name)
    print("| {} | {} | {} | {} | {} clamps, {} cuts, {} stages | {} / {}{} | {} / {} files{} |".format(
        name, ", ".join(clamps) or "none", "yes" if not missing else "**missing** " + ", ".join(missing),
        cut, b_clamps, b_caps, "same" if b_same else "**other**", len(log_a), len(log_c),
        ", same" if log_a == log_c else ", **differ**", len(out_a), len(out_c),
        ", same" if out_a == out_c else ", **differ**"))
if problems:
    print("\n**Not the same work: {}** (see the table).".format(", ".join(problems)))
print()
PY

# Replace the section, keeping its hand-written "### Reading these figures" and what follows.
python3 benchmarks/section.py write "$work/section.md"
sed -n '/^## Example jobs and harness overhead/,$p' docs/benchmarks.md
