"""What `preflight estimate --gpu` predicts for the GPU check kit's models, against what the kit
measured on the GPU itself (issue 34; benchmarks/gpu/compare.sh runs the estimates).

    python3 benchmarks/gpu/compare.py jobs RESULTS...
        one line per model job the kit measured: its job file, then the GPUs it was measured on,
        tab-separated
    python3 benchmarks/gpu/compare.py section WORK VERSION RESULTS...
        the section of docs/benchmarks.md, from WORK/NAME.json (`preflight estimate --json` of
        each model job) and the kit's RESULTS files

A step's prediction is the projection's typical step on the kit's GPU; the measured one, the
median of the kit's steps (CUDA events, after warm-up). Memory: the need the dry run reports
(what the step keeps, its peak, the CUDA context and cuBLAS's workspace), against what the
caching allocator reserved at its peak plus the CUDA context (nvidia-smi's use by the process
before the model was built). A model marked *fitted* is one the GPU table's launch and step
costs were fitted to on that GPU (FITTED); the others test them."""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from section import machine  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HEADING = "## The GPU check kit against the dry run's predictions (issue 34)"
MiB = 1 << 20
# The models policies/gpus.yaml's launch_seconds and step_overhead_seconds were fitted to, by
# GPU; every other measurement is held back to test them.
FITTED = {"NVIDIA H200": {"alexnet", "densenet121", "lstm_lm", "resnet18", "squeezenet1_1", "vgg11"}}


def load(path):
    with open(path) as f:
        return json.load(f)


def measured(results_files):
    """(gpu, environment, model entry) for every model measured, in the files' order."""
    out = []
    for path in results_files:
        results = load(path)
        environment = results["environment"]
        gpu = environment.get("gpu", {}).get("name")
        if not gpu:
            sys.exit("compare.py: {} was measured on no GPU".format(path))
        for model in results["models"]:
            if model.get("status") == "measured":
                out.append((gpu, environment, model))
    return out


def name_of(model):
    return os.path.basename(os.path.dirname(model["job"]))


def jobs(results_files):
    gpus = {}
    for gpu, _, model in measured(results_files):
        names = gpus.setdefault(model["job"], [])
        if gpu not in names:
            names.append(gpu)
    for job, names in gpus.items():
        print("\t".join([job] + names))


def prediction(work, model, gpu):
    """(projection on `gpu`, memory need in bytes or None) from the model job's estimate: the
    need on that GPU (its framework's bytes counted), else the platform GPU's."""
    estimate = load(os.path.join(work, name_of(model) + ".json"))
    for projection in estimate["gpus"]:
        if projection["gpu"] == gpu:
            memory = (estimate.get("estimate") or {}).get("gpu_memory") or {}
            return projection, projection.get("memory_needed_bytes") or memory.get("needed_bytes")
    sys.exit("compare.py: {}: no projection on {}".format(name_of(model), gpu))


def error_line(what, ratios):
    errors = [abs(r - 1) for r in ratios]
    largest = max(range(len(ratios)), key=lambda i: errors[i])
    return "{}: mean absolute error {:.0%}, largest {:.0%} ({:.2f}×), {} of {} within ±10%".format(
        what, statistics.mean(errors), errors[largest], ratios[largest],
        sum(round(e, 9) <= 0.10 for e in errors), len(errors))


def section(work, version, results_files):
    out = [HEADING, ""]
    out.append("Measured by `benchmarks/gpu/compare.sh` (`preflight estimate --gpu` of each model job "
               "of benchmarks/models/ here, at {}, on: {}) against the GPU check kit's files ({}). Step: the "
               "projection's typical step and its range against the median of the kit's steps; "
               "memory: the need the dry run reports against the peak the caching allocator reserved "
               "plus the CUDA context (nvidia-smi's use by the process before the model was built). "
               "A ratio is predicted over measured.".format(
                   version, machine(), ", ".join("`{}`".format(os.path.relpath(p, ROOT))
                                                 for p in results_files)))
    by_gpu = {}
    for gpu, environment, model in measured(results_files):
        by_gpu.setdefault(gpu, (environment, []))[1].append(model)
    for gpu, (environment, models) in by_gpu.items():
        out += ["", "**{}** (driver {}, PyTorch {}):".format(
            gpu, environment.get("nvidia_smi", {}).get("driver", "?"), environment.get("torch", "?")), ""]
        out.append("| model | batch | step measured | step predicted (range) | ratio | memory measured "
                   "(reserved + context) | memory predicted | ratio |")
        out.append("|---|---|---|---|---|---|---|---|")
        steps, memories, held_back = [], [], []
        for model in models:
            projection, need = prediction(work, model, gpu)
            step = model["step_seconds"]["median"]
            predicted = projection["step_seconds"]
            step_ratio = predicted["typical"] / step
            steps.append(step_ratio)
            fitted = name_of(model) in FITTED.get(gpu, ())
            if not fitted:
                held_back.append(step_ratio)
            memory = model["memory"]
            context = memory["nvidia_smi_at_start"]["process_mib"] * MiB
            held = memory["max_reserved_bytes"] + context
            memory_cells = ["{:.0f} MiB".format(held / MiB), "–", "–"]
            if need:
                memories.append(need / held)
                memory_cells[1:] = ["{:.0f} MiB".format(need / MiB), "{:.2f}×".format(need / held)]
            out.append("| {}{} | {} | {:.2f} ms | {:.2f} ms ({:.2f}–{:.2f}) | {:.2f}× | {} |".format(
                name_of(model), " (fitted)" if fitted else "", model["batch_size"], step * 1e3,
                predicted["typical"] * 1e3, predicted["low"] * 1e3, predicted["high"] * 1e3, step_ratio,
                " | ".join(memory_cells)))
        out += ["", "- " + error_line("Step", steps)]
        if held_back and len(held_back) < len(steps):
            out.append("- " + error_line("Step, the models held back from the fit", held_back))
        if memories:
            out.append("- " + error_line("Memory", memories))
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "jobs":
        jobs(sys.argv[2:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "section":
        sys.stdout.write(section(sys.argv[2], sys.argv[3], sys.argv[4:]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
