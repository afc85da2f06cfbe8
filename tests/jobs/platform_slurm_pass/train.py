import argparse
import json
import os

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--out", required=True)
args = parser.parse_args()

rank, world = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
job_id = int(os.environ["SLURM_JOB_ID"])
with open(os.path.join(args.data, "corpus.csv")) as f:
    rows = f.read().splitlines()[1:]
with open(os.path.join(args.out, "rank%d.json" % rank), "w") as f:
    json.dump({"job": job_id, "world": world, "rows": len(rows), "node": os.environ["SLURMD_NODENAME"]}, f)
