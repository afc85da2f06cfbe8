#!/usr/bin/env bash
# How well `preflight estimate` builds a training step from its parts: for each model job of
# benchmarks/models/, the step it constructs on this CPU from the parts of the dry run's measured
# step (each torch.nn layer call, each torch op outside layers, each optimizer step, benchmarked
# alone in the image) against the step the job measures itself when run whole, as the platform
# would run it. Writes its section of docs/benchmarks.md (from its heading up to its hand-written
# "### Reading these figures") and prints it.
#  1. The measured side: `preflight run --no-harness` of each job (no clamping: all its --iters
#     iterations), twice: with glibc's allocator kept warm (MALLOC_TRIM_THRESHOLD_,
#     MALLOC_MMAP_THRESHOLD_ and MALLOC_TOP_PAD_ raised, in a copy of the job file) and with the
#     allocator as it is. Each job prints `iter N time SECONDS` per iteration (from the end of the
#     previous one to the end of its optimizer step); a run's step is the median after the first 3
#     (warm-up). As is, glibc gives a step's freed activations back to the kernel and the next
#     step pays the first touch of every page again (about 10 us a page on a VM); the parts'
#     benchmark keeps its allocator warm, so the warm run is the like-for-like one. ROUNDS
#     (default 3) rounds of every run, the median kept; the wall time of a warm run is that of
#     benchmarking the model whole.
#  2. The constructed side: `preflight estimate JOB --json FILE` of each job, from a layer cache
#     emptied at the start of each round and kept from one model to the next, so that later
#     models reuse the parts earlier ones benchmarked.
# A model's three runs follow each other (warm, as is, estimate; the other way round in even
# rounds), so that the machine's load, which moves either side by a third from one minute to the
# next on a shared VM, falls on all three alike.
# benchmarks/layers.py makes the section of the runs: a row per model (each side the median of its
# rounds, with their range), the geometric mean, min and max of constructed ÷ measured (warm),
# the parts benchmarked per call, and the time spent benchmarking parts against that of
# benchmarking each model whole.
# Usage: benchmarks/layers.sh [ROUNDS]   (as root, after scripts/setup pytorch)
# Environment: PREFLIGHT, a copy of the binary (so that a rebuild cannot land mid-run);
# PREFLIGHT_VERSION, what to call it; LAYERS_MODELS, the models to run (default: all, in the
# order below); LAYERS_MEASURED_ONLY=1, the measured side alone, printed and not written to
# docs/benchmarks.md (for a Preflight without `estimate`); LAYERS_KEEP, a new folder to keep the
# runs in (each estimate's JSON gives each part's time here, to look into a model part by part).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
if [[ ! $rounds =~ ^[1-9][0-9]*$ ]]; then
  echo "layers.sh: ROUNDS must be a positive integer, not '$rounds'" >&2
  exit 2
fi
preflight=${PREFLIGHT:-$PWD/build/preflight}
measured_only=${LAYERS_MEASURED_ONLY:-0}
# Classifiers first, then the language models and the GAN: the later ones find the convolutions,
# norms and optimizers of the earlier ones in the cache.
models=(resnet18 mobilenet_v2 squeezenet1_1 shufflenet_v2_x1_0 densenet121 efficientnet_b0 vgg11 alexnet
        lstm_lm transformer_lm dcgan)
[[ -z ${LAYERS_MODELS:-} ]] || read -r -a models <<<"$LAYERS_MODELS"
for name in "${models[@]}"; do
  if [[ ! -f benchmarks/models/$name/job.yaml ]]; then
    echo "layers.sh: no benchmarks/models/$name/job.yaml" >&2
    exit 2
  fi
done
# glibc's thresholds (bytes) for the warm side: trim and unmap only above 16 GiB, serve blocks up
# to 32 MiB from the heap, and grow the heap 256 MiB at a time.
allocator=(MALLOC_TRIM_THRESHOLD_ 17179869184 MALLOC_MMAP_THRESHOLD_ 33554432 MALLOC_TOP_PAD_ 268435456)
layers_cache=${PREFLIGHT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/preflight}/layers

if [[ $measured_only != 1 ]] && ! "$preflight" --help 2>/dev/null | grep -qE '^ +estimate( |$)'; then
  echo "layers.sh: $preflight has no 'estimate' subcommand (preflight estimate JOB --json FILE)," \
    "which the constructed side needs; build a Preflight that has it, or set" \
    "LAYERS_MEASURED_ONLY=1 to time the jobs alone" >&2
  exit 1
fi

version=${PREFLIGHT_VERSION:-commit $(git rev-parse --short HEAD)}
paths=()
[[ -n ${PREFLIGHT:-} ]] || paths+=(src)
[[ -n ${PREFLIGHT_DATA_DIR:-} ]] || paths+=(emulator policies)
changed=$([[ -n ${PREFLIGHT_VERSION:-} || ${#paths[@]} == 0 ]] || git status --porcelain -- "${paths[@]}")
if [[ -n $changed ]]; then
  version+=" with uncommitted changes to $(awk '{print $2}' <<<"$changed" | cut -d/ -f1 | sort -u | paste -sd, -)"
fi

if [[ -n ${LAYERS_KEEP:-} ]]; then
  work=$LAYERS_KEEP
  mkdir -p "$work"
  if [[ -n $(ls -A "$work") ]]; then
    echo "layers.sh: LAYERS_KEEP=$work is not empty; name a new folder" >&2
    exit 2
  fi
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

# Writes benchmarks/models/NAME/job.yaml to OUT with its code folder (its own `code:`, relative
# to its folder, or the folder itself) as an absolute path and the allocator's variables added to
# its environment_variables (an inline map, as the models have).
warm_job() {  # NAME OUT
  local dir=$PWD/benchmarks/models/$1 vars="" i code
  for ((i = 0; i < ${#allocator[@]}; i += 2)); do vars+="${allocator[i]}: \"${allocator[i + 1]}\", "; done
  code=$(sed -n 's/^code: *//p' "$dir/job.yaml")
  code=$(realpath -e "$dir/${code:-.}")
  sed -e "s|^environment_variables: {|&$vars|" -e '/^code:/d' "$dir/job.yaml" >"$2"
  echo "code: $code" >>"$2"
  if ! grep -q "${allocator[0]}" "$2"; then
    echo "layers.sh: no inline environment_variables in $dir/job.yaml" >&2
    exit 1
  fi
}

# Runs COMMAND..., its output to WORK/TAG.out and WORK/TAG.err, until CHECK TAG holds, twice at
# most before giving up (the binary may be rebuilt under it); "TAG START END" of the run that held
# to WORK/walls.
attempt() {  # TAG CHECK COMMAND...
  local tag=$1 check=$2 try start end
  shift 2
  for try in 1 2; do
    rm -f "$work/$tag.json"
    start=$EPOCHREALTIME
    "$@" >"$work/$tag.out" 2>"$work/$tag.err" || true
    end=$EPOCHREALTIME
    if "$check" "$tag"; then
      echo "$tag $start $end" >>"$work/walls"
      return
    fi
    echo "layers.sh: $tag: preflight $2 did not pass the check '$check' (attempt $try):" >&2
    tail -n 5 "$work/$tag.err" >&2
  done
  exit 1
}

# A plain run passed and its job printed its iterations (the job's lines to WORK/TAG.log).
passed() {  # TAG
  sed -n 's/^  | //p' "$work/$1.err" >"$work/$1.log"
  grep -q '"verdict": *"pass"' "$work/$1.json" 2>/dev/null && grep -q '^iter [0-9]* time ' "$work/$1.log"
}

# An estimate constructed the step.
constructed() {  # TAG
  grep -q '"constructed_seconds"' "$work/$1.json" 2>/dev/null
}

load_before=$(cut -d' ' -f1 /proc/loadavg)
: >"$work/walls"
for name in "${models[@]}"; do warm_job "$name" "$work/$name-warm.yaml"; done
for round in $(seq "$rounds"); do
  [[ $measured_only == 1 ]] || rm -rf -- "$layers_cache"
  for name in "${models[@]}"; do
    # Its three runs back to back, in turn first and last (see above).
    runs=(warm as-is estimate)
    ((round % 2)) || runs=(estimate as-is warm)
    for run in "${runs[@]}"; do
      [[ $run != estimate || $measured_only != 1 ]] || continue
      echo "layers.sh: round $round/$rounds: $name, $run" >&2
      tag=$name.$run.$round
      if [[ $run == estimate ]]; then
        attempt "$tag" constructed "$preflight" estimate "benchmarks/models/$name/job.yaml" --json "$work/$tag.json"
        continue
      fi
      job=benchmarks/models/$name/job.yaml
      [[ $run == warm ]] && job=$work/$name-warm.yaml
      # The warm copy is in $work: its code folder, an absolute path, is granted.
      attempt "$tag" passed "$preflight" run --no-harness --allow "$PWD/benchmarks/models" --json "$work/$tag.json" "$job"
    done
  done
done
load_after=$(cut -d' ' -f1 /proc/loadavg)

python3 benchmarks/layers.py "$work" "$rounds" "$version" "$load_before $load_after" "$measured_only" \
  "${allocator[*]}" "${models[@]}" >"$work/section.md"

cat "$work/section.md"
if [[ $measured_only != 1 ]]; then
  python3 benchmarks/section.py write "$work/section.md"
fi
