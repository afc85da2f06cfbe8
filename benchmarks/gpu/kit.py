"""The GPU check kit (issue 34): trains each model job of benchmarks/models/ for a few steps at the
dry run's batch and precision on this machine's NVIDIA GPU, and writes one JSON file of what each
step took (the median of CUDA-event times after warm-up) and the memory it held
(torch.cuda.max_memory_allocated, max_memory_reserved, and what nvidia-smi reports as used), with
the GPU's name, its driver and the PyTorch version. Without a GPU it runs on the CPU (CPU timings,
no memory figures), which is how the test suite checks it (tests/gpu_kit/test_kit.py).

It needs Python 3.7+ and PyTorch, with torchvision for the classifiers, and nothing of Preflight:
this file reads each job.yaml, and benchmarks/gpu/measure.py, one child process per model, imports
the job's own train.py to build the model exactly as the dry run runs it. A model that fails (out
of memory, a crash) or outlasts its time is recorded as such and the kit goes on with the next;
a model whose job needs torchvision where there is none is recorded as skipped. The whole kit
stops starting models once --time-limit has passed (the model running then is stopped at it), and
the JSON file is rewritten after each model, so what was measured is kept whatever ends the run.

Usage: python3 benchmarks/gpu/kit.py --out FILE [--device auto|cuda|cpu] [--models NAME,...]
           [--models-dir DIR] [--warmup N] [--steps N] [--time-limit SECONDS] [--model-limit SECONDS]
Exit status: 0 every model measured or skipped for a stated reason; 1 a model failed or ran out
of time, or no model could be tried (the JSON file says which and why); 2 bad usage (an unknown
model, a job file the kit cannot read)."""
import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MEASURE = os.path.join(HERE, 'measure.py')
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODELS_DIR = os.path.join(ROOT, 'benchmarks', 'models')
SCHEMA = 'preflight.gpu_kit/v1'
# Families of train.py that measure.py knows how to build, by the folder their train.py is in.
FAMILIES = ('classifier', 'dcgan', 'lstm_lm', 'transformer_lm')


class UsageError(Exception):
    """Bad usage or a job file the kit cannot read: exit status 2."""


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--out', required=True, help='the JSON file to write')
    p.add_argument('--device', choices=('auto', 'cuda', 'cpu'), default='auto',
                   help='auto: the GPU when PyTorch sees one, else the CPU (default: auto)')
    p.add_argument('--models', help='comma-separated model names (default: every job in --models-dir)')
    p.add_argument('--models-dir', default=DEFAULT_MODELS_DIR,
                   help='folder of model jobs, NAME/job.yaml each (default: benchmarks/models)')
    p.add_argument('--warmup', type=int, default=5, help='warm-up steps per model (default: 5)')
    p.add_argument('--steps', type=int, default=20, help='measured steps per model (default: 20)')
    p.add_argument('--time-limit', type=float, default=330,
                   help='seconds for the whole kit: no model starts after it, the running one is '
                        'stopped at it (default: 330)')
    p.add_argument('--model-limit', type=float, default=90,
                   help='seconds for one model, torch import and start-up included (default: 90)')
    args = p.parse_args(argv)
    if args.warmup < 1 or args.steps < 1:
        p.error('--warmup and --steps must be at least 1 (the first measured step starts at a warm-up '
                "step's end)")
    if args.time_limit <= 0 or args.model_limit <= 0:
        p.error('--time-limit and --model-limit must be positive')
    return args


def progress(started, text):
    print(f'[gpu kit {time.monotonic() - started:6.1f}s] {text}', flush=True)


def read_job(path):
    """The few top-level keys of a model's job.yaml the kit needs: command, code and the
    environment variables, each written on one line as benchmarks/models/ writes them."""
    found = {}
    with open(path) as text:
        for number, line in enumerate(text, 1):
            match = re.match(r'^(command|code|environment_variables|description):\s*(.*?)\s*$', line)
            if match:
                found[match.group(1)] = (match.group(2), number)
    if 'command' not in found:
        raise UsageError(f'{path}: no top-level command: line')
    env = {}
    if 'environment_variables' in found:
        value, number = found['environment_variables']
        mapping = re.match(r'^\{(.*)\}$', value)
        if not mapping:
            raise UsageError(f'{path}:{number}: environment_variables must be a one-line {{KEY: "VALUE"}}')
        for pair in filter(None, (p.strip() for p in mapping.group(1).split(','))):
            key, _, val = pair.partition(':')
            env[key.strip()] = val.strip().strip('"\'')
    return {'command': found['command'][0], 'code': found.get('code', ('.', 0))[0],
            'description': found.get('description', ('', 0))[0], 'env': env}


def plan_model(models_dir, name):
    """What the kit runs for one model: its train.py, the family of that train.py, its arguments
    and environment; or why it cannot run it (`skip`)."""
    job_file = os.path.join(models_dir, name, 'job.yaml')
    if not os.path.isfile(job_file):
        raise UsageError(f'unknown model {name!r}: no {job_file}')
    job = read_job(job_file)
    words = shlex.split(job['command'])
    plan = {'name': name, 'job': os.path.relpath(job_file, ROOT), 'command': job['command'],
            'description': job['description'], 'env': job['env']}
    if len(words) < 2 or not re.match(r'^python[0-9.]*$', words[0]) or not words[1].endswith('.py'):
        plan['skip'] = 'its command is not `python SCRIPT.py ARGS`'
        return plan
    script = os.path.normpath(os.path.join(models_dir, name, job['code'], words[1]))
    family = os.path.basename(os.path.dirname(script))
    plan.update(script=script, args=words[2:], family=family)
    if family not in FAMILIES or os.path.basename(script) != 'train.py':
        plan['skip'] = f'the kit does not know how to train {os.path.relpath(script)}'
    elif not os.path.isfile(script):
        plan['skip'] = f'{os.path.relpath(script)} does not exist'
    return plan


def model_names(args):
    if args.models:
        return [n.strip() for n in args.models.split(',') if n.strip()]
    if not os.path.isdir(args.models_dir):
        raise UsageError(f'no folder of models at {args.models_dir}')
    return sorted(n for n in os.listdir(args.models_dir)
                  if os.path.isfile(os.path.join(args.models_dir, n, 'job.yaml')))


def run_child(command, env, limit, log_path):
    """Runs measure.py in its own process group, its output to log_path; kills the whole group
    at the limit. Returns the exit status, or None when it was stopped."""
    with open(log_path, 'w') as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                 start_new_session=True)
        try:
            return child.wait(timeout=max(limit, 0.1))
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            return None
        except BaseException:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            raise


def log_tail(path, lines=15):
    try:
        with open(path, errors='replace') as log:
            return ''.join(log.readlines()[-lines:])[-3000:]
    except OSError:
        return ''


def measure(plan, args, device, limit, work):
    """One child for one model; its result, or a record of how the child ended without one."""
    result_path = os.path.join(work, plan['name'] + '.json')
    log_path = os.path.join(work, plan['name'] + '.log')
    command = [sys.executable, MEASURE, '--family', plan['family'], '--script', plan['script'],
               '--device', device, '--warmup', str(args.warmup), '--steps', str(args.steps),
               '--result', result_path, '--'] + plan['args']
    env = dict(os.environ)
    env.update(plan['env'])
    env.update(PYTHONUNBUFFERED='1', PYTHONDONTWRITEBYTECODE='1')
    status = run_child(command, env, limit, log_path)
    if status is None:
        return {'status': 'timeout', 'error': f'stopped after {limit:.0f} s', 'log_tail': log_tail(log_path)}
    if not os.path.isfile(result_path):
        return {'status': 'failed', 'error': f'measure.py exited with status {status} and wrote no result',
                'log_tail': log_tail(log_path)}
    with open(result_path) as text:
        result = json.load(text)
    if result.get('status') == 'failed':
        result['log_tail'] = log_tail(log_path)
    return result


def probe(args, device, work):
    """The versions and the GPU, from one child that imports torch and trains nothing."""
    result_path = os.path.join(work, 'probe.json')
    status = run_child([sys.executable, MEASURE, '--probe', '--device', device, '--result', result_path],
                       dict(os.environ, PYTHONUNBUFFERED='1'), min(60, args.time_limit),
                       os.path.join(work, 'probe.log'))
    if status is None or not os.path.isfile(result_path):
        return {'status': 'failed', 'error': 'the probe did not finish', 'log_tail':
                log_tail(os.path.join(work, 'probe.log'))}
    with open(result_path) as text:
        return json.load(text)


def commit():
    """The commit of the tree the kit ran from, where git and the repository are there."""
    try:
        done = subprocess.run(['git', '-C', ROOT, 'rev-parse', 'HEAD'], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, universal_newlines=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def choose_device(asked):
    """cuda or cpu: auto takes the GPU when PyTorch sees one (asked in a child: the kit itself never
    imports torch, so a broken CUDA cannot hang it)."""
    if asked != 'auto':
        return asked
    try:
        done = subprocess.run([sys.executable, '-c', 'import torch; print(torch.cuda.is_available())'],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True,
                              timeout=60)
    except (OSError, subprocess.SubprocessError):
        return 'cpu'
    return 'cuda' if done.stdout.strip() == 'True' else 'cpu'


def summary(record):
    if record['status'] != 'measured':
        return f"{record['status']}: {record.get('reason') or record.get('error', '')}".splitlines()[0][:200]
    steps = record['step_seconds']
    text = f"{steps['median'] * 1000:.2f} ms a step (median of {len(steps['all'])})"
    memory = record.get('memory')
    if memory:
        text += f", max allocated {memory['max_allocated_bytes'] / 2**20:.0f} MiB, " \
                f"max reserved {memory['max_reserved_bytes'] / 2**20:.0f} MiB"
        smi = memory.get('nvidia_smi') or {}
        used = smi.get('process_mib') if smi.get('process_mib') is not None else smi.get('gpu_mib')
        if used is not None:
            text += f', nvidia-smi {used} MiB'
    return text


def write_report(path, report):
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with tempfile.NamedTemporaryFile('w', dir=directory, delete=False, suffix='.part') as out:
        json.dump(report, out, indent=1)
        out.write('\n')
    os.replace(out.name, path)


def run_models(plans, args, device, report, work, started):
    """Each model in turn, within the kit's time; the report is rewritten after each."""
    deadline = started + args.time_limit
    for plan in plans:
        record = {k: plan[k] for k in ('name', 'job', 'command', 'description')}
        left = deadline - time.monotonic()
        if plan.get('skip'):
            record.update(status='skipped', reason=plan['skip'])
        elif left <= 1:
            record.update(status='skipped',
                          reason=f"the kit's time limit ({args.time_limit:.0f} s) had passed")
        else:
            progress(started, f"{plan['name']}: training on {device}")
            record.update(measure(plan, args, device, min(args.model_limit, left), work))
        report['models'].append(record)
        report['wall_seconds'] = time.monotonic() - started
        write_report(args.out, report)
        progress(started, f"{plan['name']}: {summary(record)}")


def stop_on_sigterm(signum, frame):
    # SystemExit unwinds through run_child, which kills the model's process group on its way.
    sys.exit(128 + signum)


def main(argv):
    started = time.monotonic()
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    try:
        plans = [plan_model(args.models_dir, name) for name in model_names(args)]
    except (UsageError, OSError) as error:
        print(f'gpu kit: error: {error}', file=sys.stderr)
        return 2
    if not plans:
        print(f'gpu kit: error: no model jobs in {args.models_dir}', file=sys.stderr)
        return 2
    device = choose_device(args.device)
    now = datetime.datetime.now(datetime.timezone.utc)
    report = {'schema': SCHEMA, 'started': now.isoformat(timespec='seconds'), 'commit': commit(),
              'device': device,
              'settings': {'warmup': args.warmup, 'steps': args.steps, 'time_limit_s': args.time_limit,
                           'model_limit_s': args.model_limit},
              'environment': None, 'models': [], 'wall_seconds': 0.0}
    work = tempfile.mkdtemp(prefix='gpu-kit-')
    try:
        progress(started, f'{len(plans)} models on {device}; probing the software and the device')
        report['environment'] = probe(args, device, work)
        write_report(args.out, report)
        env = report['environment']
        if env.get('status') != 'probed':
            progress(started, f"the probe failed: {env.get('error')}\n{env.get('log_tail', '')}")
            return 1
        gpu = (env.get('nvidia_smi') or {}).get('name') or (env.get('gpu') or {}).get('name') or 'no GPU'
        driver = (env.get('nvidia_smi') or {}).get('driver', 'unknown')
        progress(started, f"torch {env['torch']}, torchvision {env['torchvision']}, {gpu}, driver {driver}")
        run_models(plans, args, device, report, work, started)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    bad = [m['name'] for m in report['models'] if m['status'] in ('failed', 'timeout')]
    progress(started, f"done: {sum(m['status'] == 'measured' for m in report['models'])} measured, "
                      f"{sum(m['status'] == 'skipped' for m in report['models'])} skipped, "
                      f"{len(bad)} failed{' (' + ', '.join(bad) + ')' if bad else ''}; {args.out}")
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
