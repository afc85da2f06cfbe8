"""pass@1 of generated programs, each run in a sandbox of its own."""
import argparse
import json
import os
import subprocess
import sys

# Untrusted code runs as root of a user namespace of its own, without network.
SANDBOX = ["unshare", "--user", "--map-root-user", "--net", "--"]


def run_sandboxed(program, test, timeout):
    completed = subprocess.run(
        SANDBOX + [sys.executable, "-c", program + "\n" + test],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if completed.returncode != 0 and "unshare failed" in completed.stderr:
        raise RuntimeError(f"sandbox could not start: {completed.stderr.strip()}")
    return completed.returncode == 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()

    with open(os.path.join(args.samples, "completions.jsonl")) as samples:
        tasks = [json.loads(line) for line in samples]
    passed = {task["task"]: run_sandboxed(task["program"], task["test"], args.timeout) for task in tasks}
    score = sum(passed.values()) / len(passed)
    print(f"pass@1 {score:.3f} over {len(passed)} tasks")
    with open(os.path.join(args.out, "scores.json"), "w") as out:
        json.dump({"pass@1": score, "tasks": passed}, out, indent=2)


if __name__ == "__main__":
    main()
