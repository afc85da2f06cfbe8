"""Trains one model of benchmarks/models/ for a few steps on a GPU (or the CPU) and writes what its
steps took: the child process of benchmarks/gpu/kit.py, one per model, so that a model that runs out
of memory, crashes or hangs takes nothing else with it, and each model's GPU memory is its own
process's, CUDA context included, as the job's would be on the platform.

The model, its data, loss and optimizers are built by the job's own train.py (imported, never
copied), from the arguments of the job's command, exactly as its main() builds them; only the
device differs: the model and each batch are moved to it. A step is what the dry run measures
(docs/harness.md "Measuring a step"): from the end of one optimizer step to the end of the next,
fetching the batch from the DataLoader included. On a GPU each step ends with a CUDA event and the
step's time is the elapsed time between two events; on the CPU it is the wall time. One more step,
after the measured ones, runs under torch.profiler: what it launched (the operators the job's code
called, the kernels and copies on the GPU), for the estimate's count of launches to be checked on.

Usage: measure.py --family F --script TRAIN_PY --device cuda|cpu --warmup W --steps N --result FILE
       [-- TRAIN_PY_ARGUMENTS...]
       measure.py --probe --device cuda|cpu --result FILE   (the versions and the GPU, nothing trained)
The result is one JSON object written to FILE; the exit status is 0 when it was written."""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

FAMILIES = ('classifier', 'dcgan', 'lstm_lm', 'transformer_lm')


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--probe', action='store_true', help='report the versions and the device, train nothing')
    p.add_argument('--family', choices=FAMILIES, help="which train.py's main() to follow")
    p.add_argument('--script', help="the job's train.py")
    p.add_argument('--device', choices=('cuda', 'cpu'), required=True)
    p.add_argument('--warmup', type=int, default=3)
    p.add_argument('--steps', type=int, default=10)
    p.add_argument('--result', required=True, help='where to write the JSON result')
    p.add_argument('job_args', nargs=argparse.REMAINDER, help="the job's arguments to train.py, after --")
    args = p.parse_args(argv)
    if args.job_args and args.job_args[0] == '--':
        args.job_args = args.job_args[1:]
    if not args.probe and (args.family is None or args.script is None):
        p.error('--family and --script are needed unless --probe')
    return args


def nvidia_smi(query, ids=None):
    """Rows of `nvidia-smi --query-...=FIELDS --format=csv,noheader,nounits`, or None when there is
    no nvidia-smi or it fails; never waits more than 15 s."""
    command = ['nvidia-smi', query, '--format=csv,noheader,nounits']
    if ids is not None:
        command += ['-i', str(ids)]
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              universal_newlines=True, timeout=15)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return [[cell.strip() for cell in line.split(',')] for line in done.stdout.splitlines() if line.strip()]


def smi_used_mib(torch):
    """What nvidia-smi reports as used: by this process (None where its PID is not visible, as in a
    container with its own PID namespace) and on the whole GPU, in MiB."""
    index = torch.cuda.current_device()
    gpu = nvidia_smi('--query-gpu=memory.used', index)
    apps = nvidia_smi('--query-compute-apps=pid,used_memory', index) or []
    mine = [int(row[1]) for row in apps if len(row) == 2 and row[0] == str(os.getpid()) and row[1].isdigit()]
    return {'process_mib': sum(mine) if mine else None,
            'gpu_mib': int(gpu[0][0]) if gpu and gpu[0][0].isdigit() else None}


def flag(read):
    """A backend flag, or None where this PyTorch no longer reads it that way."""
    try:
        return bool(read())
    except Exception:  # a renamed or removed flag is recorded as unknown
        return None


def attribute_path(torch, dotted):
    """torch.a.b.c by its dotted name, or None where some part is missing."""
    found = torch
    for part in dotted.split('.')[1:]:
        found = getattr(found, part, None)
    return found


def probe(torch, device):
    """The software and the device the measurements ran on."""
    found = {'python': sys.version.split()[0], 'torch': torch.__version__, 'torchvision': None,
             'cuda': torch.version.cuda, 'cudnn': None, 'device': device, 'threads': torch.get_num_threads()}
    try:
        import torchvision
        found['torchvision'] = torchvision.__version__
    except Exception as error:  # any import failure means the classifiers cannot be built
        found['torchvision_error'] = f'{type(error).__name__}: {error}'
    if torch.backends.cudnn.is_available():
        found['cudnn'] = torch.backends.cudnn.version()
    # What the job leaves on by default, which decides TF32 on Ampere and later (docs/estimate.md).
    found['tf32'] = {'cudnn': flag(lambda: torch.backends.cudnn.allow_tf32),
                     'matmul': flag(lambda: torch.backends.cuda.matmul.allow_tf32)}
    # PyTorch 2.9 and later say it as a precision per backend too ("ieee", "tf32", "none").
    for key, owner in (('matmul', 'torch.backends.cuda.matmul'), ('conv', 'torch.backends.cudnn.conv')):
        try:
            precision = getattr(attribute_path(torch, owner), 'fp32_precision', None)
        except Exception:  # a flag that cannot be read is left out, never fatal to the probe
            precision = None
        if precision is not None:
            found['tf32'][key + '_fp32_precision'] = str(precision)
    if device == 'cuda':
        index = torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        found['gpu'] = {'name': props.name, 'total_memory_bytes': props.total_memory,
                        'capability': f'{props.major}.{props.minor}',
                        'multiprocessors': props.multi_processor_count}
        row = nvidia_smi('--query-gpu=name,driver_version,memory.total', index)
        found['nvidia_smi'] = None if not row else {'name': row[0][0], 'driver': row[0][1],
                                                    'memory_total_mib': row[0][2]}
    return found


def load_train_module(script):
    """The job's train.py as a module (its main() is not run)."""
    name = 'job_train_' + os.path.basename(os.path.dirname(os.path.abspath(script)))
    spec = importlib.util.spec_from_file_location(name, script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def job_arguments(module, script, job_args):
    """The job's arguments as its own train.py parses them."""
    saved = sys.argv
    sys.argv = [script] + list(job_args)
    try:
        return module.parse_args()
    finally:
        sys.argv = saved


def build_classifier(torch, module, args, device):
    """classifier/train.py's main() and train(): the model, loss, optimizer and schedule."""
    from torch.utils.data import DataLoader
    torch.manual_seed(args.seed)
    dataset = module.synthetic_images(args.samples, args.image_size, args.classes, args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                        drop_last=True)
    model = module.build_model(args).to(device)
    criterion = torch.nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    optimizer = module.build_optimizer(args, model)
    scheduler = module.build_scheduler(args, optimizer)
    model.train()

    def step(batch):
        images, target = (t.to(device) for t in batch)
        with torch.autocast('cuda', dtype=torch.float16, enabled=args.amp):
            output = model(images)
            loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return [model], loader, step, scheduler.step, args.batch_size


def build_dcgan(torch, module, args, device):
    """dcgan/train.py's main() and train(): the discriminator's update, then the generator's."""
    from torch.utils.data import DataLoader
    torch.manual_seed(args.seed)
    dataset = module.synthetic_images(args.samples, args.image_size, args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, drop_last=True)
    net_g, net_d = module.Generator(args.nz, args.ngf).to(device), module.Discriminator(args.ndf).to(device)
    net_g.apply(module.init_weights)
    net_d.apply(module.init_weights)
    criterion = torch.nn.BCELoss()
    opt_d = torch.optim.Adam(net_d.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    opt_g = torch.optim.Adam(net_g.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    net_g.train()
    net_d.train()

    def step(batch):
        real = batch[0].to(device)
        size = real.size(0)
        real_label = torch.full((size,), 1.0, device=device)
        fake_label = torch.full((size,), 0.0, device=device)
        net_d.zero_grad()
        criterion(net_d(real), real_label).backward()
        fake = net_g(torch.randn(size, args.nz, 1, 1, device=device))
        criterion(net_d(fake.detach()), fake_label).backward()
        opt_d.step()
        net_g.zero_grad()
        criterion(net_d(fake), real_label).backward()
        opt_g.step()

    return [net_g, net_d], loader, step, None, args.batch_size


def build_lstm_lm(torch, module, args, device):
    """lstm_lm/train.py's main() and train(): a zero state each batch, clipping, plain SGD."""
    from torch.utils.data import DataLoader
    torch.manual_seed(args.seed)
    dataset = module.synthetic_sequences(args.samples, args.bptt, args.vocab, args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, drop_last=True)
    model = module.RNNModel(args.vocab, args.emsize, args.nhid, args.nlayers, args.dropout).to(device)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    model.train()

    def step(batch):
        sequences = batch[0].to(device)
        data = sequences[:, :-1].t().contiguous()
        targets = sequences[:, 1:].t().reshape(-1)
        output, _ = model(data)
        loss = criterion(output, targets)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()

    return [model], loader, step, None, args.batch_size


def build_transformer_lm(torch, module, args, device):
    """transformer_lm/train.py's main() and train(): AdamW with decay on the layers' matrices only,
    a warm-up schedule stepped every iteration, clipping."""
    from torch.utils.data import DataLoader
    import torch.nn.functional as F
    torch.manual_seed(args.seed)
    dataset = module.synthetic_sequences(args.samples, args.seq_len, args.vocab, args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, drop_last=True)
    model = module.TransformerLM(args.vocab, args.d_model, args.heads, args.d_ff, args.layers, args.seq_len,
                                 args.dropout).to(device)

    def decays(name, parameter):
        return parameter.dim() >= 2 and not name.startswith(('tokens.', 'positions.'))

    named = list(model.named_parameters())
    decay = [p for n, p in named if decays(n, p)]
    no_decay = [p for n, p in named if not decays(n, p)]
    optimizer = torch.optim.AdamW([{'params': decay, 'weight_decay': args.weight_decay},
                                   {'params': no_decay, 'weight_decay': 0.0}], lr=args.lr, betas=(0.9, 0.95))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / args.warmup))
    model.train()

    def step(batch):
        sequences = batch[0].to(device)
        inputs, targets = sequences[:, :-1], sequences[:, 1:]
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        scheduler.step()

    return [model], loader, step, None, args.batch_size


BUILDERS = {'classifier': build_classifier, 'dcgan': build_dcgan, 'lstm_lm': build_lstm_lm,
            'transformer_lm': build_transformer_lm}


def batches(loader, on_epoch_end):
    """The loader's batches over as many epochs as asked for, calling on_epoch_end between epochs
    (the classifiers step their schedule there)."""
    while True:
        for batch in loader:
            yield batch
        if on_epoch_end is not None:
            on_epoch_end()


class StepClock:
    """Marks the end of each step: a CUDA event recorded on the current stream on a GPU (read once
    the steps are done), the wall clock on the CPU."""

    def __init__(self, torch, device):
        self.torch, self.cuda, self.marks = torch, device == 'cuda', []

    def mark(self):
        if self.cuda:
            event = self.torch.cuda.Event(enable_timing=True)
            event.record()
            self.marks.append(event)
        else:
            self.marks.append(time.perf_counter())

    def seconds(self):
        if self.cuda:
            self.torch.cuda.synchronize()
            return [a.elapsed_time(b) / 1000.0 for a, b in zip(self.marks, self.marks[1:])]
        return [b - a for a, b in zip(self.marks, self.marks[1:])]


def profile_step(torch, device, step, batch):
    """One step under torch.profiler: the operators called from Python (top-level, as eager
    PyTorch dispatches each), every operator, and on a GPU the kernels and memory copies it ran."""
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == 'cuda' else [])
    with profile(activities=activities) as prof:
        step(batch)
        if device == 'cuda':
            torch.cuda.synchronize()
    events = prof.events()
    cpu = torch.autograd.DeviceType.CPU
    operators = [e for e in events if e.device_type == cpu and e.name.startswith('aten::')]
    figures = {'operators': len(operators),
               'top_level_operators': sum(1 for e in operators if e.cpu_parent is None or
                                          not e.cpu_parent.name.startswith('aten::'))}
    if device == 'cuda':
        gpu = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA]
        copies = sum(1 for e in gpu if 'memcpy' in e.name.lower() or 'memset' in e.name.lower())
        figures.update(kernels=len(gpu) - copies, copies=copies)
    return figures


def memory_figures(torch, at_start):
    """The caching allocator's peaks since the process began, what it holds between steps, and
    what nvidia-smi sees."""
    return {'max_allocated_bytes': torch.cuda.max_memory_allocated(),
            'max_reserved_bytes': torch.cuda.max_memory_reserved(),
            'allocated_after_step_bytes': torch.cuda.memory_allocated(),
            'reserved_after_step_bytes': torch.cuda.memory_reserved(),
            'nvidia_smi_at_start': at_start, 'nvidia_smi': smi_used_mib(torch)}


def train_and_measure(torch, args, result):
    """Builds the job's model, runs warm-up and measured steps, and fills result; an exception
    leaves in result what was known before it."""
    at_start = None
    if args.device == 'cuda':
        torch.cuda.init()
        torch.zeros(1, device='cuda')  # the context, before any of the model's memory
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        at_start = smi_used_mib(torch)
    module = load_train_module(args.script)
    job = job_arguments(module, args.script, args.job_args)
    nets, loader, step, on_epoch_end, batch_size = BUILDERS[args.family](torch, module, job, args.device)
    result['batch_size'] = batch_size
    result['precision'] = 'amp-fp16' if getattr(job, 'amp', False) else 'fp32'
    result['parameters'] = sum(p.numel() for net in nets for p in net.parameters())
    result['threads'] = torch.get_num_threads()  # the job's OMP_NUM_THREADS, for its CPU side
    clock, feed = StepClock(torch, args.device), batches(loader, on_epoch_end)
    for done in range(args.warmup + args.steps):
        step(next(feed))
        if done >= args.warmup - 1:
            clock.mark()
    seconds = clock.seconds()
    result['step_seconds'] = {'median': statistics.median(seconds), 'min': min(seconds), 'max': max(seconds),
                              'all': seconds}
    try:  # after the measured steps: the profiler's own cost stays out of them
        result['launches'] = profile_step(torch, args.device, step, next(feed))
    except Exception as error:  # a profiler this PyTorch lacks takes nothing else with it
        result['launches'] = {'error': f'{type(error).__name__}: {error}'[:500]}
    if args.device == 'cuda':
        result['memory'] = memory_figures(torch, at_start)
    result['status'] = 'measured'


def failure_figures(torch, args, result, error):
    """What the result says of a failure: the error, and on a GPU the memory it had reached."""
    result['status'] = 'failed'
    result['error'] = f'{type(error).__name__}: {error}'.strip()[:2000]
    if isinstance(error, SystemExit):  # argparse has printed why in the log
        result['error'] = f"train.py refused the job's arguments (exit status {error.code})"
    if isinstance(error, ImportError) and getattr(error, 'name', None) == 'torchvision':
        result['status'] = 'skipped'
        result['reason'] = 'torchvision is not installed, and the job builds its model with it'
    if torch is not None and args.device == 'cuda' and torch.cuda.is_initialized():
        result['memory'] = {'max_allocated_bytes': torch.cuda.max_memory_allocated(),
                            'max_reserved_bytes': torch.cuda.max_memory_reserved()}


def write_result(path, result):
    temporary = path + '.part'
    with open(temporary, 'w') as out:
        json.dump(result, out, indent=1)
    os.replace(temporary, path)


def main(argv):
    args = parse_args(argv)
    result, torch = {'status': 'failed', 'device': args.device}, None
    started = time.perf_counter()
    try:
        import torch
        if args.device == 'cuda' and not torch.cuda.is_available():
            raise RuntimeError(f'torch {torch.__version__} sees no CUDA GPU')
        if args.probe:
            result = probe(torch, args.device)
            result['status'] = 'probed'
        else:
            train_and_measure(torch, args, result)
    except (Exception, SystemExit) as error:  # recorded, not fatal: argparse's exit included
        failure_figures(torch, args, result, error)
    result['wall_seconds'] = time.perf_counter() - started
    write_result(args.result, result)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
