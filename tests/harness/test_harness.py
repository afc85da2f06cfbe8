"""Tests of the harness inside the job (emulator/site), run with any python3 >= 3.6:

    python3 tests/harness/test_harness.py [-v]

Each case runs a small script in a fresh interpreter with the harness injected the way the
sandbox does it and checks the events file. Cases that need PyTorch are skipped when the
interpreter cannot import torch (run it inside the `pytorch` image for those)."""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "emulator", "site")
SITE = os.path.normpath(SITE)
ROOT = os.path.dirname(os.path.dirname(SITE))


def _has_torch():
    return subprocess.call([sys.executable, "-c", "import torch"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) == 0


HAS_TORCH = _has_torch()


class HarnessCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="preflight-harness-")
        self.code = os.path.join(self.dir, "code")
        os.mkdir(self.code)
        self.events_file = os.path.join(self.dir, "events.jsonl")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_script(self, source, args=(), harness=True, extra_path=None, timeout=300, variables=None):
        script = os.path.join(self.code, "main.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(source))
        env = dict((k, v) for k, v in os.environ.items()
                   if not k.startswith(("PYTHON", "PREFLIGHT")))
        env["PYTHONPATH"] = os.pathsep.join([SITE] + ([extra_path] if extra_path else []))
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        if harness:
            env.update(PREFLIGHT_EVENTS=self.events_file, PREFLIGHT_CODE_DIR=self.code,
                       PREFLIGHT_STEPS="2", PREFLIGHT_PHASE="command")
        env.update(variables or {})
        proc = subprocess.Popen([sys.executable, script] + list(args), cwd=self.code, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out.decode(), err.decode()

    def events(self, ev=None):
        if not os.path.exists(self.events_file):
            return []
        with open(self.events_file) as f:
            found = [json.loads(line) for line in f]
        return [e for e in found if ev is None or e["ev"] == ev]

    def stages(self):
        return [e["stage"] for e in self.events("stage")]

    def traces(self):
        """Every record of the trace files (trace-PID.jsonl), each line a whole JSON object."""
        found = []
        for path in sorted(glob.glob(os.path.join(self.dir, "trace-*.jsonl"))):
            with open(path) as f:
                for line in f:
                    self.assertLessEqual(len(line.encode("utf-8")), 4096)
                    record = json.loads(line)
                    self.assertEqual(os.path.basename(path), "trace-%d.jsonl" % record["pid"])
                    found.append(record)
        return found

    def only_exception(self):
        found = self.events("exception")
        self.assertEqual(len(found), 1, found)
        return found[0]


class WithoutTorch(HarnessCase):
    def test_start_and_exit(self):
        code, _, _ = self.run_script("import sys\nsys.exit(3)\n", args=["--lr", "0.1"])
        self.assertEqual(code, 3)
        start = self.events("start")[0]
        self.assertEqual(start["argv"][1:], ["--lr", "0.1"])
        self.assertEqual(start["phase"], "command")
        self.assertEqual(start["stage"], "init")
        self.assertEqual(self.events("exit")[0]["code"], 3)
        self.assertEqual(self.events("harness_error"), [])

    def test_a_with_statement_is_not_a_loop(self):
        """From Python 3.12 a with statement's cleanup, laid out after the code, jumps back over
        all the statement holds (JUMP_BACKWARD_NO_INTERRUPT): bytecode.loops finds only the for
        loop, on every Python, so that a final evaluation after it is not taken for validation."""
        code, out, err = self.run_script("""
            import json
            from preflight_harness import bytecode
            source = "with open(__file__) as f:\\n    text = f.read()\\nfor i in range(3):\\n    print(i)\\n"
            code = compile(source, "job.py", "exec")
            print(json.dumps(bytecode.loops(code)))
        """, harness=False)
        self.assertEqual(code, 0, err)
        self.assertEqual(len(json.loads(out)), 1, out)

    def test_nothing_without_events_variable(self):
        code, out, err = self.run_script("import sys\nprint(sys.excepthook.__module__)\n",
                                         harness=False)
        self.assertEqual(code, 0, err)
        self.assertEqual(out.strip(), "sys")
        self.assertFalse(os.path.exists(self.events_file))

    def test_uncaught_file_not_found(self):
        code, _, err = self.run_script("""
            def load(path):
                return open(path)
            load("/nonexistent/preflight/data.csv")
        """)
        self.assertEqual(code, 1)
        self.assertIn("FileNotFoundError", err)  # the original hook still prints
        e = self.only_exception()
        self.assertEqual(e["type"], "FileNotFoundError")
        self.assertEqual(e["errno"], 2)
        self.assertEqual(e["path"], "/nonexistent/preflight/data.csv")
        self.assertEqual(e["stage"], "data" if sys.version_info >= (3, 8) else "init")
        self.assertEqual([f["function"] for f in e["frames"]], ["<module>", "load"])
        self.assertTrue(all(f["user"] for f in e["frames"]))
        self.assertEqual(self.events("exit")[0]["code"], 1)

    def test_reading_data_before_training_enters_stage_data(self):
        os.makedirs(os.path.join(self.dir, "data"))
        os.makedirs(os.path.join(self.dir, ".cache"))
        for name in ("data/train.txt", "config.yaml", ".cache/vocab.txt"):
            with open(os.path.join(self.dir, name), "w") as f:
                f.write("x\n")
        self.run_script("""
            import os, sys
            top = os.path.dirname(os.getcwd())
            open(os.path.join(top, "config.yaml")).read()
            open(os.path.join(top, ".cache", "vocab.txt")).read()
            open(os.path.join(top, "log.txt"), "w").write("starting")
            sys.stdout.flush()
            open(os.path.join(top, "data", "train.txt")).read()
        """)
        if sys.version_info < (3, 8):
            self.assertEqual(self.stages(), [])  # no audit hooks
            return
        self.assertEqual(self.stages(), ["data"])
        stage = self.events("stage")[0]
        self.assertTrue(stage["why"].endswith("/data/train.txt"), stage)
        self.assertEqual(stage["where"]["line"], 8)

    @unittest.skipIf(sys.version_info < (3, 8), "no audit hooks")
    def test_each_read_is_seen_before_and_after_the_audit_hook_takes_over(self):
        """Until torch has imported, wrappers of open, os.open, os.listdir and os.scandir watch
        the reads (data_watch.py); end_early (torch's import done) gives each function back
        and the audit hook sees the same reads, once each, at the job's own line."""
        inputs = os.path.join(self.dir, "inputs")
        os.makedirs(os.path.join(inputs, "shards"))
        with open(os.path.join(self.dir, "train.bin"), "w") as f:
            f.write("x")
        code, out, err = self.run_script("""
            import builtins, io, os, sys
            import preflight_harness, preflight_harness.data_watch as watch
            top, inputs = os.path.dirname(os.getcwd()), sys.argv[1]
            def init():  # back before the data, so that the next read is seen too
                preflight_harness.state.stage = "init"
            def reads(tag):
                init(); os.listdir(os.path.join(inputs, "shards"))
                init(); list(os.scandir(inputs))
                init(); os.close(os.open(os.path.join(top, "train.bin"), os.O_RDONLY))
                init(); open(os.path.join(top, "train.bin")).close()
                init(); open(os.path.join(top, "train.bin"), "a").close()
                init(); io.open(os.path.join(top, "log.txt"), "w").close()
                print(tag, type(open).__name__, io.open is open, open.__name__, os.listdir.__name__)
            reads("wrapped")
            kept = os.listdir
            watch.end_early()
            reads("audited")
            init(); kept(inputs)
            init(); open(sys.argv[2])
        """, args=[inputs, "/nonexistent/preflight/labels.csv"],
            variables={"PREFLIGHT_INPUTS": inputs})
        self.assertEqual(code, 1, err)
        self.assertEqual(out.split("\n")[:2], ["wrapped function True open listdir",
                                                "audited builtin_function_or_method True open listdir"])
        whys = [(e["why"][len("data read: "):].replace(self.dir, "D"), e["where"]["line"])
                for e in self.events("stage")]
        reads = [("D/inputs/shards", 8), ("D/inputs", 9), ("D/train.bin", 10), ("D/train.bin", 11)]
        self.assertEqual(whys, reads + reads + [("D/inputs", 19),
                                                ("/nonexistent/preflight/labels.csv", 20)])
        e = self.only_exception()
        self.assertEqual((e["type"], e["stage"], e["frames"][-1]["line"]), ("FileNotFoundError", "data", 20))
        self.assertEqual(self.events("harness_error"), [])

    @unittest.skipIf(sys.version_info < (3, 8), "no audit hooks")
    def test_a_failed_read_before_torch_names_the_jobs_line(self):
        """A wrapper's frame is the harness's: the report leaves it out."""
        code, _, err = self.run_script("""
            import os
            def shards(folder):
                return sorted(os.listdir(folder))
            shards("/nonexistent/preflight/shards")
        """)
        self.assertEqual(code, 1, err)
        e = self.only_exception()
        self.assertEqual((e["type"], e["stage"]), ("FileNotFoundError", "init"))
        self.assertEqual([(f["function"], f["line"]) for f in e["frames"]], [("<module>", 5), ("shards", 4)])

    def test_qualified_type_and_replaced_excepthook(self):
        self.run_script("""
            import sys, json
            sys.excepthook = lambda *a: None
            raise json.JSONDecodeError("bad", "doc", 0)
        """)
        e = self.only_exception()
        self.assertEqual(e["type"], "json.decoder.JSONDecodeError")
        self.assertEqual(e["origin"], "last_value")

    def test_startup_imports_nothing_heavy(self):
        _, out, _ = self.run_script("""
            import sys
            print(sorted(m for m in ("json", "inspect", "dis", "re", "torch",
                                     "preflight_harness.trace") if m in sys.modules))
        """)
        self.assertNotIn("trace", out)
        self.assertNotIn("json", out)
        self.assertNotIn("dis", out)
        self.assertNotIn("torch", out)

    def test_chains_to_the_next_sitecustomize(self):
        other = os.path.join(self.dir, "other")
        os.mkdir(other)
        with open(os.path.join(other, "sitecustomize.py"), "w") as f:
            f.write("import builtins\nbuiltins.PREFLIGHT_CHAINED = __name__\n")
        for harness in (True, False):
            _, out, err = self.run_script("print(PREFLIGHT_CHAINED)\n", harness=harness,
                                          extra_path=other)
            self.assertEqual(out.strip(), "sitecustomize", err)

    @unittest.skipIf(sys.version_info < (3, 8), "threading.excepthook is Python 3.8+")
    def test_thread_exception(self):
        self.run_script("""
            import threading
            def work():
                {}["missing"]
            t = threading.Thread(target=work)
            t.start(); t.join()
        """)
        e = self.only_exception()
        self.assertEqual((e["type"], e["origin"]), ("KeyError", "thread"))
        self.assertEqual(self.events("exit")[0]["code"], 0)

    def test_concurrent_processes_write_whole_lines(self):
        self.run_script("""
            import os
            pids = []
            for _ in range(4):
                pid = os.fork()
                if pid == 0:
                    import preflight_harness
                    for i in range(200):
                        preflight_harness.emit("probe", i=i, pad="x" * 300)
                    os._exit(0)
                pids.append(pid)
            for pid in pids:
                os.waitpid(pid, 0)
        """)
        self.assertEqual(len(self.events("probe")), 800)  # json.loads raised on a torn line


TRAINING = """
import sys, torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)
    def forward(self, x):
        return F.log_softmax(self.fc(x), dim=1)

def train(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        F.nll_loss(model(x), y).backward()
        optimizer.step()

def test(model, loader):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            model(x)

def evaluate(model, loader, metrics):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            model(x)
    return metrics["top5"]

x, y = torch.randn(64, 8), torch.randint(0, 3, (64,))
loader = DataLoader(TensorDataset(x, y), batch_size=4, num_workers=int(sys.argv[1]))
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    train(model, loader, optimizer)
    test(model, loader)
    if len(sys.argv) > 2:
        torch.save(model.state_dict(), sys.argv[2] + "/model.pt")
evaluate(model, loader, {"top1": 1.0})
"""


CAPPED_EPOCHS = """
    import gc, weakref
    import torch
    from torch.utils.data import DataLoader, Sampler
    gc.disable()  # what is freed is freed by reference counts, not by a later collection

    class Order(object):
        def __init__(self, n):
            self.left = list(range(n))

        def __iter__(self):
            return self

        def __next__(self):
            if not self.left:
                raise StopIteration
            return self.left.pop()

    orders = []

    class Shuffled(Sampler):
        def __init__(self):
            pass

        def __len__(self):
            return 1000

        def __iter__(self):
            order = Order(1000)
            orders.append(weakref.ref(order))
            return order

    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(torch.zeros(1000, 1), batch_size=10, sampler=Shuffled())
    for epoch in range(3):
        for x in loader:
            model(x).sum().backward()
            optimizer.step()
    print("orders alive %d of %d" % (sum(ref() is not None for ref in orders), len(orders)))
"""


@unittest.skipUnless(HAS_TORCH, "PyTorch is not importable by this python3")
class WithTorch(HarnessCase):
    def test_validate_each_epoch_then_evaluate(self):
        code, _, err = self.run_script(TRAINING, args=["0"])
        self.assertEqual(code, 1, err)
        stages = self.stages()
        self.assertEqual(stages[:4], ["data", "model", "data", "train"])
        self.assertIn("validate", stages)
        self.assertEqual(stages[-1], "evaluate")
        e = self.only_exception()
        self.assertEqual((e["type"], e["stage"]), ("KeyError", "evaluate"))
        self.assertEqual(e["frames"][-1]["function"], "evaluate")
        cap = self.events("cap")[0]
        self.assertEqual((cap["what"], cap["limit"]), ("DataLoader", 2))
        self.assertEqual(self.events("harness_error"), [])

    def test_a_capped_epoch_leaves_nothing_of_its_iterator_behind(self):
        """Each epoch's sampler order (a list of every index: 390 MB for ten million items) is
        freed when the cap ends the epoch, not kept by the cap's StopIteration."""
        code, out, err = self.run_script(CAPPED_EPOCHS)
        self.assertEqual(code, 0, err)
        self.assertIn("orders alive 0 of 3", out)
        self.assertEqual(len(self.events("cap")), 1)

    def test_workers_are_capped_without_hanging(self):
        code, _, err = self.run_script(TRAINING, args=["2"], timeout=120)
        self.assertEqual(code, 1, err)
        self.assertEqual(self.only_exception()["stage"], "evaluate")

    def test_checkpoint_failure_carries_the_path(self):
        missing = os.path.join(self.dir, "no", "such", "folder")
        self.run_script(TRAINING, args=["0", missing])
        e = self.only_exception()
        self.assertEqual(e["stage"], "checkpoint")
        self.assertEqual(e["path"], missing + "/model.pt")
        self.assertEqual(e["origin"], "torch.save")

    def test_checkpoint_returns_to_the_previous_stage(self):
        self.run_script(TRAINING, args=["0", self.dir])
        stages = self.stages()
        at = stages.index("checkpoint")
        self.assertEqual(stages[at - 1], stages[at + 1])
        self.assertEqual(self.only_exception()["stage"], "evaluate")

    def test_the_audit_hook_watches_once_torch_has_imported(self):
        with open(os.path.join(self.dir, "tokens.bin"), "w") as f:
            f.write("x")
        code, out, err = self.run_script("""
            import os
            top = os.path.dirname(os.getcwd())
            import torch
            print(type(open).__name__, type(os.listdir).__name__)
            open(os.path.join(top, "tokens.bin")).read()
        """)
        self.assertEqual(code, 0, err)
        self.assertEqual(out.split(), ["builtin_function_or_method", "builtin_function_or_method"])
        stage = self.events("stage")[0]
        self.assertEqual((stage["stage"], stage["where"]["line"]), ("data", 6), stage)
        self.assertTrue(stage["why"].endswith("/tokens.bin"), stage)
        self.assertEqual(self.events("harness_error"), [])

    def test_missing_file_in_dataset_is_a_data_failure(self):
        self.run_script("""
            import torch
            from torch.utils.data import Dataset
            class Csv(Dataset):
                def __init__(self, path):
                    self.rows = open(path).readlines()
            Csv("/nonexistent/preflight/train.csv")
        """)
        e = self.only_exception()
        self.assertEqual((e["type"], e["stage"], e["errno"]), ("FileNotFoundError", "data", 2))
        self.assertEqual(e["frames"][-1]["function"], "__init__")

    def test_worker_failure_keeps_the_worker_frames(self):
        self.run_script("""
            import torch
            from torch.utils.data import DataLoader, Dataset
            class Files(Dataset):
                def __len__(self): return 8
                def __getitem__(self, i): return open("/nonexistent/img_%d.png" % i).read()
            for batch in DataLoader(Files(), batch_size=2, num_workers=2):
                pass
        """, timeout=120)
        e = self.only_exception()
        self.assertEqual((e["errno"], e["stage"]), (2, "data"))
        self.assertTrue(e["path"].startswith("/nonexistent/img_"))
        self.assertEqual(e["frames"][-1]["function"], "__getitem__")
        self.assertTrue(e["frames"][-1]["user"])



class VirtualGpus(HarnessCase):
    """docs/harness.md "Virtual GPUs". The script sets PREFLIGHT_GPUS* itself (run_script
    drops them from the environment); the harness reads them when torch is imported."""

    GPUS = """
        import os
        os.environ.update(PREFLIGHT_GPUS="4", PREFLIGHT_GPU_NAME="Tesla P100-PCIE-16GB",
                          PREFLIGHT_GPU_MEMORY=str(16 * 2 ** 30))
    """

    def test_failure_in_save_arguments_is_a_checkpoint_failure(self):
        self.run_script("""
            class torch:
                save = staticmethod(lambda obj, path: None)
            class Net:
                pass
            model = Net()
            torch.save(
                model.module, "model.pt")
        """)
        e = self.only_exception()
        self.assertEqual((e["type"], e["stage"]), ("AttributeError", "checkpoint"))

    @unittest.skipUnless(HAS_TORCH, "PyTorch is not importable by this python3")
    def test_cuda_code_runs_on_the_cpu(self):
        code, out, err = self.run_script(textwrap.dedent(self.GPUS) + textwrap.dedent("""
            import torch, torch.nn as nn
            assert torch.cuda.is_available() and torch.cuda.device_count() == 4
            assert torch.cuda.get_device_name(0) == "Tesla P100-PCIE-16GB"
            assert torch.cuda.get_device_properties(3).total_memory == 16 * 2 ** 30
            torch.cuda.set_device(2)
            assert torch.cuda.current_device() == 2
            torch.cuda.manual_seed_all(0); torch.cuda.synchronize(); torch.cuda.empty_cache()
            assert torch.cuda.max_memory_allocated() == 0
            torch.backends.cudnn.benchmark = True
            device = torch.device("cuda")
            x = torch.zeros(8, 4, device="cuda:1") + torch.randn(8, 4, device=device)
            x = x.cuda().to("cuda:3").to(device, torch.float32)
            model = nn.DataParallel(nn.Linear(4, 2)).to(device)
            scaler = torch.cuda.amp.GradScaler()
            with torch.cuda.amp.autocast():
                loss = model(x).sum()
            scaler.scale(loss).backward()
            torch.save(model.module.state_dict(), "model.pt")
            torch.load("model.pt", map_location="cuda:0")
            print(x.device, len(model.device_ids))
            torch.zeros(1, device="cuda:4")
        """))
        self.assertEqual(code, 1, err)
        self.assertEqual(out.split(), ["cpu", "4"], err)
        self.assertEqual(self.only_exception()["message"], "CUDA error: invalid device ordinal")
        gpu = self.events("virtual_gpu")
        self.assertEqual([(e["count"], e["name"]) for e in gpu], [(4, "Tesla P100-PCIE-16GB")])
        self.assertEqual(self.events("harness_error"), [])

    @unittest.skipUnless(HAS_TORCH, "PyTorch is not importable by this python3")
    def test_no_gpus_no_virtual_gpus(self):
        code, out, err = self.run_script("""
            import torch
            print(torch.cuda.is_available())
        """)
        self.assertEqual((code, out.strip()), (0, "False"), err)
        self.assertEqual(self.events("virtual_gpu"), [])


FAKE_FRAMEWORKS = {
    "transformers/__init__.py": "",
    "transformers/training_args.py": """
class TrainingArguments(object):  # a dataclass in transformers (none on Python 3.6)
    def __init__(self, output_dir="out", max_steps=-1, eval_steps=None, save_steps=500,
                 logging_steps=0.5):
        self.output_dir, self.max_steps, self.eval_steps = output_dir, max_steps, eval_steps
        self.save_steps, self.logging_steps = save_steps, logging_steps
        self.__post_init__()
    def __post_init__(self):
        if self.eval_steps is None:
            self.eval_steps = 100
    def __setattr__(self, name, value):  # some versions freeze the arguments
        if getattr(self, "_frozen", False):
            raise AttributeError("frozen")
        object.__setattr__(self, name, value)
""",
    "pytorch_lightning/__init__.py": """
class Trainer(object):
    def __init__(self, **kwargs):
        self.kwargs = kwargs
""",
    "keras/__init__.py": """
class Model(object):
    def fit(self, x=None, y=None, batch_size=None, epochs=1, steps_per_epoch=None,
            validation_data=None, validation_steps=None):
        return dict(epochs=epochs, steps_per_epoch=steps_per_epoch,
                    validation_steps=validation_steps)
    def evaluate(self, x=None, y=None, steps=None):
        return steps
    def predict(self, x, steps=None):
        return steps
""",
}


class Clamping(HarnessCase):
    """clamp.py: epochs and steps clamped in argparse results and (fake) frameworks."""

    def run_with(self, source, args=(), env=None, phase="command"):
        script = os.path.join(self.code, "main.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(source))
        fake = os.path.join(self.dir, "fake")
        for name, text in FAKE_FRAMEWORKS.items():
            path = os.path.join(fake, name)
            if not os.path.isdir(os.path.dirname(path)):
                os.makedirs(os.path.dirname(path))
            with open(path, "w") as f:
                f.write(textwrap.dedent(text))
        full = dict((k, v) for k, v in os.environ.items()
                    if not k.startswith(("PYTHON", "PREFLIGHT")))
        full.update(PYTHONPATH=os.pathsep.join([SITE, fake]), PYTHONDONTWRITEBYTECODE="1",
                    PREFLIGHT_EVENTS=self.events_file, PREFLIGHT_CODE_DIR=self.code,
                    PREFLIGHT_STEPS="2", PREFLIGHT_PHASE=phase)
        full.update(env or {})
        proc = subprocess.Popen([sys.executable, script] + list(args), cwd=self.code, env=full,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err.decode())
        self.assertEqual(self.events("harness_error"), [])
        return out.decode()

    def clamps(self):
        return dict((e["what"], (e["original"], e["value"])) for e in self.events("clamp"))

    ARGPARSE = """
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--epochs", type=int, default=500)
        p.add_argument("--max-iters", type=int, default=100000)
        p.add_argument("--eval_interval", type=int, default=1000)
        p.add_argument("--lr", type=float, default=0.1)
        p.add_argument("--batch-size", type=int, default=64)
        p.add_argument("--steps", type=int, default=3)
        a = p.parse_args()
        print(a.epochs, a.max_iters, a.eval_interval, a.lr, a.batch_size, a.steps)
    """

    def test_argparse_intervals_lowered_counts_kept(self):
        # Epoch and step counts keep the job's values (the loop cut ends the loops that use
        # them); intervals are lowered so that periodic work runs.
        out = self.run_with(self.ARGPARSE, args=["--epochs", "14"])
        self.assertEqual(out.split(), ["14", "100000", "2", "0.1", "64", "3"])
        self.assertEqual(self.clamps(), {"argparse --eval_interval": (1000, 2)})
        self.assertEqual([(e["what"], e["kind"], e["value"]) for e in self.events("count")],
                         [("argparse --epochs", "epochs", 14),
                          ("argparse --max-iters", "steps", 100000)])
        where = self.events("clamp")[0]["where"]
        self.assertEqual((where["file"], where["line"], where["user"]),
                         (os.path.join(self.code, "main.py"), 10, True))

    def test_overrides_replace_values_and_null_keeps_one(self):
        env = {"PREFLIGHT_CLAMP_ARGS":
               '{"batch-size": "8", "eval-interval": null, "lr": 0.5, "epochs": 3}'}
        out = self.run_with(self.ARGPARSE, env=env)
        self.assertEqual(out.split(), ["3", "100000", "1000", "0.5", "8", "3"])
        clamps = self.clamps()
        self.assertEqual(clamps["argparse --batch-size"], (64, 8))
        self.assertEqual(clamps["argparse --lr"], (0.1, 0.5))
        self.assertEqual(clamps["argparse --epochs"], (500, 3))
        self.assertNotIn("argparse --eval_interval", clamps)

    def test_nothing_in_setup_or_without_a_cap(self):
        self.assertEqual(self.run_with(self.ARGPARSE, phase="setup").split()[2], "1000")
        self.assertEqual(self.events("clamp"), [])
        out = self.run_with(self.ARGPARSE, env={"PREFLIGHT_STEPS": "0"})
        self.assertEqual(out.split()[2], "1000")
        self.assertEqual(self.events("clamp"), [])

    def test_subparsers_are_clamped_once(self):
        self.run_with("""
            import argparse
            p = argparse.ArgumentParser()
            sub = p.add_subparsers(dest="cmd")
            sub.add_parser("train").add_argument("--save-every", type=int, default=90)
            assert p.parse_args(["train"]).save_every == 2
        """)
        self.assertEqual(self.clamps(), {"argparse --save-every": (90, 2)})

    def test_transformers_training_arguments(self):
        self.run_with("""
            from transformers.training_args import TrainingArguments
            a = TrainingArguments(save_steps=1000)
            a._frozen = True
            print(a.max_steps, a.eval_steps, a.save_steps, a.logging_steps)
            assert (a.max_steps, a.eval_steps, a.save_steps, a.logging_steps) == (4, 2, 2, 0.5)
        """)
        self.assertEqual(self.clamps(), {
            "transformers TrainingArguments.max_steps": (None, 4),
            "transformers TrainingArguments.eval_steps": (100, 2),
            "transformers TrainingArguments.save_steps": (1000, 2)})

    def test_lightning_trainer(self):
        self.run_with("""
            import pytorch_lightning as pl
            t = pl.Trainer(max_epochs=10, limit_val_batches=0.25, val_check_interval=50)
            assert t.kwargs == dict(max_epochs=2, limit_train_batches=2, limit_val_batches=2,
                                    limit_test_batches=2, limit_predict_batches=2,
                                    val_check_interval=2), t.kwargs
            t = pl.Trainer(fast_dev_run=True)
            assert t.kwargs == dict(fast_dev_run=True), t.kwargs
        """)
        clamps = self.clamps()
        self.assertEqual(clamps["lightning Trainer max_epochs"], (10, 2))
        self.assertEqual(clamps["lightning Trainer limit_train_batches"], (None, 2))
        self.assertEqual(clamps["lightning Trainer limit_val_batches"], (0.25, 2))
        self.assertNotIn("fast_dev_run", str(clamps))

    def test_keras_fit_evaluate_predict(self):
        self.run_with("""
            import keras
            m = keras.Model()
            r = m.fit([1], [2], 32, 50, validation_data=([1], [2]))
            assert r == dict(epochs=2, steps_per_epoch=2, validation_steps=2), r
            assert m.fit([1], [2], epochs=1, steps_per_epoch=1)["steps_per_epoch"] == 1
            assert m.evaluate([1], [2]) == 2
            assert m.predict([1], steps=100) == 2
        """)
        clamps = self.clamps()
        self.assertEqual(clamps["keras Model.fit epochs"], (50, 2))
        self.assertEqual(clamps["keras Model.fit steps_per_epoch"], (None, 2))
        self.assertEqual(clamps["keras Model.evaluate steps"], (None, 2))
        self.assertEqual(clamps["keras Model.predict steps"], (100, 2))


@unittest.skipUnless(HAS_TORCH, "PyTorch is not importable by this python3")
class NonfiniteLoss(HarnessCase):
    def test_nan_at_the_third_backward_is_reported_once(self):
        code, _, err = self.run_script("""
            import torch
            w = torch.ones(1, requires_grad=True)
            for step in range(6):
                scale = float("nan") if step >= 2 else 1.0
                (w * scale).sum().backward()      # a 1-element loss
                (w * torch.ones(3)).backward(torch.ones(3))  # not a loss: unchecked
        """)
        self.assertEqual(code, 0, err)
        found = self.events("nonfinite")
        self.assertEqual(len(found), 1, found)
        self.assertEqual((found[0]["step"], found[0]["value"], found[0]["stage"]),
                         (5, "nan", "train"))
        self.assertEqual(found[0]["where"]["line"], 6)
        self.assertEqual(self.events("harness_error"), [])

    def test_infinite_loss(self):
        self.run_script("""
            import torch
            w = torch.ones((), requires_grad=True)
            (w * float("inf")).backward()
        """)
        self.assertEqual(self.events("nonfinite")[0]["value"], "inf")


MLP_STEPS = """
    import sys
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    batch, to_none = int(sys.argv[1]), sys.argv[2:] == ["none"]
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1000, 4000), torch.nn.ReLU(),
                                torch.nn.Linear(4000, 10))
    optimizer = torch.optim.Adam(model.parameters())
    data = TensorDataset(torch.randn(4 * batch, 1000), torch.randint(0, 10, (4 * batch,)))
    for epoch in range(2):
        for x, y in DataLoader(data, batch_size=batch):
            optimizer.zero_grad(set_to_none=to_none)
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
"""

# MLP_STEPS' model trained at argv[1] items a batch, then validated under no_grad at argv[2].
TRAIN_THEN_VALIDATE = """
    import sys
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    batch, validation_batch = int(sys.argv[1]), int(sys.argv[2])
    model = torch.nn.Sequential(torch.nn.Linear(1000, 4000), torch.nn.ReLU(),
                                torch.nn.Linear(4000, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    items = 2 * validation_batch
    data = TensorDataset(torch.randn(items, 1000), torch.randint(0, 10, (items,)))
    for x, y in DataLoader(data, batch_size=batch):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        for x, y in DataLoader(data, batch_size=validation_batch):
            model(x).argmax(1).eq(y).sum().item()
"""

MiB = 1 << 20


@unittest.skipUnless(HAS_TORCH, "PyTorch is not importable by this python3")
class StepMeasure(HarnessCase):
    def measure(self, batch, *args):
        if os.path.exists(self.events_file):
            os.remove(self.events_file)
        code, out, err = self.run_script(MLP_STEPS, args=[str(batch)] + list(args))
        self.assertEqual(code, 0, err)
        for text in ("profil", "Logging"):  # PyTorch's C++ log about the profiler
            self.assertNotIn(text, out + err)
        self.assertEqual(self.events("harness_error"), [])
        found = self.events("step_measure")
        self.assertEqual(len(found), 1, found)
        return found[0]

    def test_memory_is_the_caching_allocators_count_by_hand(self):
        found = self.measure(1024)
        self.assertEqual((found["batch_size"], found["batches_per_epoch"]), (1024, 4))
        # Kept: the 4000x1000 weight (16,000,000 bytes: 10 MiB or more, a segment of its own
        # rounded to 2 MiB, so 16 MiB) four times (parameter, gradient, Adam's exp_avg and
        # exp_avg_sq); everything else (biases, the 10x4000 weight, Adam's step counts) is
        # under 1 MiB and fits one 2 MiB segment.
        self.assertEqual(found["live_bytes"], 4 * 16 * MiB + 2 * MiB)
        # The step: the batch (4,096,000 bytes of inputs: one 20 MiB segment of blocks over
        # 1 MiB; the labels, small), the ReLU output autograd saves (16,384,000 bytes: 16 MiB),
        # and backward's two activation gradients of that size; the logits are small.
        self.assertEqual(found["step_bytes"], 20 * MiB + 16 * MiB + 2 * 16 * MiB)
        # Forward's matrix products, and backward's twice that.
        self.assertEqual(found["flops"], 3 * 2 * 1024 * (1000 * 4000 + 4000 * 10))
        self.assertGreater(found["seconds"], 0)

    def test_gradients_set_to_none_are_counted_all_the_same(self):
        kept, dropped = self.measure(256), self.measure(256, "none")
        self.assertEqual((kept["live_bytes"], kept["step_bytes"]),
                         (dropped["live_bytes"], dropped["step_bytes"]))

    def test_epochs_that_trained_are_reported(self):
        self.measure(16)
        self.assertEqual([e["batches"] for e in self.events("epoch_end")], [2, 2])


# A small segmentation step whose CPU kernels can be changed from the command line: threads,
# oneDNN on or off, and the instruction set oneDNN may use (read when torch loads it).
CONV_STEPS = """
    import os, sys
    threads, mkldnn, isa = sys.argv[1], sys.argv[2], sys.argv[3]
    if isa != "-":
        os.environ["DNNL_MAX_CPU_ISA"] = os.environ["ONEDNN_MAX_CPU_ISA"] = isa
    if sys.argv[4:] == ["off"]:
        os.environ["PREFLIGHT_MEASURE"] = "0"
    import torch
    from torch import nn
    torch.set_num_threads(int(threads))
    torch.backends.mkldnn.enabled = mkldnn == "on"
    torch.manual_seed(0)
    block = lambda a, b: [nn.Conv2d(a, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU(inplace=True)]
    model = nn.Sequential(*block(3, 16), *block(16, 16), nn.Conv2d(16, 1, 1))
    optimizer = torch.optim.Adam(model.parameters())
    data = torch.utils.data.TensorDataset(torch.rand(32, 3, 96, 96), torch.rand(32, 1, 96, 96))
    for x, y in torch.utils.data.DataLoader(data, batch_size=8):
        optimizer.zero_grad()
        nn.functional.binary_cross_entropy_with_logits(model(x), y).backward()
        optimizer.step()
"""


@unittest.skipUnless(HAS_TORCH, "PyTorch is not importable by this python3")
class StepMemoryModel(HarnessCase):
    """The step's GPU memory is a model of the platform's GPU: the CPU kernels of the machine
    the dry run happens on (oneDNN's buffers differ between CPUs) must not move it."""

    def measure(self, *args):
        if os.path.exists(self.events_file):
            os.remove(self.events_file)
        code, _, err = self.run_script(CONV_STEPS, args=args)
        self.assertEqual(code, 0, err)
        self.assertEqual(self.events("harness_error"), [])
        return self.events("step_measure")

    def test_the_figures_do_not_move_with_threads_onednn_or_its_instruction_set(self):
        settings = [("1", "on", "-"), ("2", "on", "-"), ("1", "off", "-"), ("1", "on", "SSE41"),
                    ("2", "on", "AVX2")]
        figures = {}
        for setting in settings:
            found = self.measure(*setting)
            self.assertEqual(len(found), 1, found)
            figures[setting] = tuple(found[0][k] for k in ("live_bytes", "step_bytes", "flops", "ops"))
        self.assertEqual(len(set(figures.values())), 1, figures)
        live, step, flops, _ = figures[settings[0]]
        # Per sample, 16 channels of 96x96 floats (576 KiB) saved by each BatchNorm and ReLU
        # (4 of them) and 2 passed along in backward; 8 samples, all above 1 MiB.
        self.assertGreater(step, 8 * 6 * 16 * 96 * 96 * 4)
        self.assertLess(live, 3 * MiB)
        self.assertEqual(flops, 3 * 2 * 8 * 96 * 96 * (16 * 3 * 9 + 16 * 16 * 9 + 16))

    def test_preflight_measure_0_leaves_the_step_unmeasured(self):
        self.assertEqual(self.measure("1", "on", "-", "off"), [])

    def test_attention_flops_are_its_projections_and_its_two_products(self):
        code, _, err = self.run_script("""
            import torch
            from torch import nn
            attention, head = nn.MultiheadAttention(32, 4), nn.Linear(32, 1)
            optimizer = torch.optim.SGD(list(attention.parameters()) + list(head.parameters()), lr=0.1)
            for step in range(3):
                x = torch.randn(10, 4, 32)  # 10 positions, 4 sequences
                optimizer.zero_grad()
                head(attention(x, x, x)[0]).sum().backward()
                optimizer.step()
        """)
        self.assertEqual(code, 0, err)
        found = self.events("step_measure")
        self.assertEqual(len(found), 1, found)
        tokens, width, positions = 40, 32, 10
        projections = 2 * width * width * 4 * tokens  # query, key, value and output
        products = 2 * 2 * tokens * positions * width  # scores, and their sum of values
        self.assertEqual(found[0]["flops"], 3 * (projections + products + 2 * tokens * width))


def _shape_only_tensors():
    """Whether this python3's torch has the fake tensors full_size.py uses (PyTorch 2.1+)."""
    return subprocess.call([sys.executable, "-c", "import torch, sys; "
                            "sys.exit(tuple(map(int, torch.__version__.split('.')[:2])) < (2, 1))"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0


HAS_SHAPE_ONLY = HAS_TORCH and _shape_only_tensors()

# A classifier whose forward flattens with the batch size written out, right only at the
# job's own batch (16); `wrong` sizes its last layer wrongly, an error at any batch size.
VIEW_STEPS = """
    import sys
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    class Net(nn.Module):
        def __init__(self, features):
            super().__init__()
            self.conv, self.fc = nn.Conv2d(3, 4, 3), nn.Linear(features, 5)

        def forward(self, x):
            x = self.conv(x).view(16, -1)
            return self.fc(x)

    model = Net(4 * 6 * 6 + (1 if sys.argv[1:] == ["wrong"] else 0))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(64, 3, 8, 8), torch.randint(0, 5, (64,)))
    for x, y in DataLoader(data, batch_size=16, drop_last=True):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        if torch.isnan(loss):
            raise SystemExit("the loss is NaN")
        loss.backward()
        optimizer.step()
"""


# Two transformer layers (4 heads of 16, dropout 0.1) on 32 sequences of 256 positions.
ATTENTION_STEPS = """
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(64, 4, 128, batch_first=True)
    encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    model = nn.Sequential(encoder, nn.Linear(64, 1)).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    data = TensorDataset(torch.randn(64, 256, 64), torch.randn(64, 256, 1))
    for x, y in DataLoader(data, batch_size=32):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        optimizer.step()
"""


@unittest.skipUnless(HAS_TORCH, "PyTorch is not importable by this python3")
class BatchSampling(HarnessCase):
    """PREFLIGHT_BATCH: DataLoader batches are sampled, and each sampled loop's first iteration
    runs again at the job's own batch size on shape-only tensors (full_size.py)."""

    def run_sampled(self, source, args=(), batch="2", above=None):
        """The script with sampling on; `above`: PREFLIGHT_SAMPLE_FLOPS (0: every step costs
        too much here)."""
        if os.path.exists(self.events_file):
            os.remove(self.events_file)
        variables = {"PREFLIGHT_BATCH": batch}
        if above is not None:
            variables["PREFLIGHT_SAMPLE_FLOPS"] = above
        code, out, err = self.run_script(source, args=args, variables=variables)
        self.assertEqual(self.events("harness_error"), [])
        return code, out, err

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_a_costly_step_is_sampled_and_measured_at_the_jobs_own_batch(self):
        code, _, err = self.run_sampled(MLP_STEPS, args=["1024"])  # 25 GFLOP a step
        self.assertEqual(code, 0, err)
        clamp = self.events("clamp")
        self.assertEqual([(c["what"], c["kind"], c["original"], c["value"]) for c in clamp],
                         [("DataLoader batch", "batch", 1024, 2)])
        self.assertEqual(clamp[0]["where"]["line"], 12)
        checks = self.events("full_size")
        self.assertEqual([(c["reached"], c["batch"], c["sampled"], c.get("flops")) for c in checks],
                         [("step", 1024, 2, 3 * 2 * 1024 * (1000 * 4000 + 4000 * 10))])
        found = self.events("step_measure")
        self.assertEqual(len(found), 1, found)
        # The figures StepMeasure counts by hand for a real step at batch 1024, to the byte.
        self.assertEqual((found[0]["batch_size"], found[0]["sampled_batch"], found[0]["batches_per_epoch"]),
                         (1024, 2, 4))
        self.assertEqual(found[0]["live_bytes"], 4 * 16 * MiB + 2 * MiB)
        self.assertEqual(found[0]["step_bytes"], 20 * MiB + 16 * MiB + 2 * 16 * MiB)
        self.assertEqual(found[0]["flops"], 3 * 2 * 1024 * (1000 * 4000 + 4000 * 10))
        parts = self.events("step_parts")[0]["parts"]
        linear = [p for p in parts if p.get("type") == "torch.nn.Linear"]
        self.assertEqual(sorted(p["inputs"][0][1] for p in linear), [[1024, 1000], [1024, 4000]])
        self.assertEqual([p.get("type") for p in parts if p["kind"] == "optimizer"], ["torch.optim.Adam"])

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_a_cheap_step_runs_at_the_jobs_own_batch(self):
        code, _, err = self.run_sampled(MLP_STEPS, args=["64"])  # 1.6 GFLOP a step
        self.assertEqual(code, 0, err)
        self.assertEqual(self.events("clamp"), [])
        # A probe at the sample's 2 items said so, its FLOPs scaled to 64: no check ran.
        checks = self.events("full_size")
        self.assertEqual([(c["reached"], c["sampled"], c["flops"]) for c in checks],
                         [("probe", None, 3 * 2 * 64 * (1000 * 4000 + 4000 * 10))])
        found = self.events("step_measure")
        self.assertEqual(found[0]["batch_size"], 64)
        self.assertNotIn("sampled_batch", found[0])

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_a_loop_without_grad_is_bounded_by_a_cheap_training_loop_before_it(self):
        step = 3 * 2 * 64 * (1000 * 4000 + 4000 * 10)  # 1.6 GFLOP
        code, _, err = self.run_sampled(TRAIN_THEN_VALIDATE, args=["64", "64"])
        self.assertEqual(code, 0, err)
        self.assertEqual(self.events("clamp"), [])
        # The validation's batch holds as many values: its forward costs no more than the step.
        checks = self.events("full_size")
        self.assertEqual([(c["reached"], c["batch"], c["sampled"], c["flops"]) for c in checks],
                         [("probe", 64, None, step), ("bound", 64, None, step)])
        self.assertEqual([c["where"]["line"] for c in checks], [11, 16])
        # 16 times the values: the bound passes 20 GFLOP, and the loop is probed or checked as
        # any other (its forward alone, 8.3 GFLOP, is cheap: it runs at the job's size).
        code, _, err = self.run_sampled(TRAIN_THEN_VALIDATE, args=["64", "1024"])
        self.assertEqual(code, 0, err)
        self.assertEqual(self.events("clamp"), [])
        checks = self.events("full_size")
        self.assertEqual([(c["reached"], c["batch"]) for c in checks][0], ("probe", 64))
        self.assertEqual((checks[1]["batch"], checks[1]["sampled"]), (1024, None))
        self.assertNotEqual(checks[1]["reached"], "bound")

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_a_probe_that_fails_at_the_sample_leaves_the_decision_to_the_check(self):
        code, _, err = self.run_sampled(VIEW_STEPS)  # view(16, -1) fails at 2 items
        self.assertEqual(code, 0, err)
        self.assertEqual(self.events("clamp"), [])
        checks = self.events("full_size")
        self.assertEqual([(c["reached"], c["batch"], c["sampled"]) for c in checks], [("step", 16, None)])
        self.assertEqual(self.events("exception"), [])

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_a_child_that_fails_leaves_the_loops_workers_to_the_job(self):
        """The probe's exception unwinds the job's loop in the child: its DataLoader iterator's
        __del__ would shut down the workers it shares with the parent, whose next batch never
        came (integration.concurrency hung in CI)."""
        code, _, err = self.run_script(SLOW_WORKERS, timeout=60,
                                       variables={"PREFLIGHT_BATCH": "2", "PREFLIGHT_STEPS": "6"})
        self.assertEqual(code, 0, err)
        self.assertIn("batches 6", err)
        checks = self.events("full_size")
        self.assertEqual([(c["reached"], c["sampled"]) for c in checks], [("step", None)])

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_a_probe_past_its_time_leaves_the_decision_to_the_check(self):
        code, _, err = self.run_script(SLOW_STEPS, variables={"PREFLIGHT_BATCH": "2", "PREFLIGHT_STEPS": "1"})
        self.assertEqual(code, 0, err)
        self.assertEqual(self.events("harness_error"), [])
        checks = self.events("full_size")
        self.assertEqual([(c["reached"], c["sampled"]) for c in checks], [("step", None)])
        self.assertGreater(checks[0]["seconds"], 2.0)  # the check's own iteration, the sleep in it

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_a_convolutional_step_has_the_figures_of_its_real_step(self):
        figures = {}
        for batch in ("0", "2"):
            code, _, err = self.run_sampled(CONV_STEPS, args=["1", "on", "-"], batch=batch, above="0")
            self.assertEqual(code, 0, err)
            found = self.events("step_measure")
            self.assertEqual(len(found), 1, found)
            self.assertEqual(found[0].get("sampled_batch"), {"0": None, "2": 2}[batch])
            figures[batch] = tuple(found[0][k] for k in ("live_bytes", "step_bytes", "flops", "ops",
                                                          "batch_size", "batches_per_epoch"))
        self.assertEqual(figures["0"], figures["2"])

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_a_view_written_for_the_jobs_batch_holds_at_full_size(self):
        code, _, _ = self.run_sampled(VIEW_STEPS, above="0")
        self.assertNotEqual(code, 0)  # at the sampled batch of 2, view(16, -1) cannot hold
        failure = self.only_exception()
        self.assertEqual((failure["type"], failure["stage"]), ("RuntimeError", "train"))
        checks = self.events("full_size")
        self.assertEqual([(c["reached"], c["batch"]) for c in checks], [("step", 16)])
        self.assertNotIn("exception", checks[0])
        # `if torch.isnan(loss)` has no value on shape-only tensors: False stood in, and said where.
        self.assertEqual([(m["what"], m["where"]["line"]) for m in checks[0]["made_up"]],
                         [("a value read (bool)", 22)])

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_an_error_at_any_batch_size_fails_at_full_size_too(self):
        code, _, _ = self.run_sampled(VIEW_STEPS, args=["wrong"], above="0")
        self.assertNotEqual(code, 0)
        checks = self.events("full_size")
        self.assertEqual([c["reached"] for c in checks], ["exception"])
        failure = checks[0]["exception"]
        self.assertEqual(failure["type"], "RuntimeError")
        self.assertIn("[16, 144] X [145, 5]", failure["message"])  # the shape-only kernel's words
        self.assertEqual([f["line"] for f in failure["frames"] if f["user"]], [21, 14])
        self.assertFalse(checks[0]["shape_only"])
        # The check's exception is not the job's: the job's own is the sampled run's.
        self.assertIn("(16x18 and 145x5)", self.only_exception()["message"])

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_attention_on_a_gpu_keeps_no_matrix_of_probabilities(self):
        figures = {}
        for batch in ("0", "2"):
            if os.path.exists(self.events_file):
                os.remove(self.events_file)
            code, _, err = self.run_script(ATTENTION_STEPS, variables={
                "PREFLIGHT_BATCH": batch, "PREFLIGHT_SAMPLE_FLOPS": "0", "PREFLIGHT_GPUS": "1"})
            self.assertEqual(code, 0, err)
            self.assertEqual(self.events("harness_error"), [])
            found = self.events("step_measure")
            figures[batch] = (found[0]["live_bytes"], found[0]["step_bytes"], found[0]["flops"])
        # The CPU's path (the real step) keeps per layer the 32x4x256x256 float32 probabilities
        # and their dropout's output; the fused kernel of the GPU neither.
        probabilities = 32 * 4 * 256 * 256 * 4
        self.assertEqual(figures["0"][0], figures["2"][0])
        self.assertEqual(figures["0"][2], figures["2"][2])
        self.assertLessEqual(figures["2"][1] + 2 * 2 * probabilities, figures["0"][1])
        self.assertGreater(figures["2"][1], 32 * 256 * 64 * 4 * 2 * 4)  # each layer's q, k, v, output

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_a_loop_after_the_first_backward_cannot_be_checked_and_says_so(self):
        """Autograd refuses backward in a child forked after the parent's first: the check's
        limit, never the job's failure."""
        code, _, err = self.run_sampled(TWO_TRAINING_LOOPS, above="0")
        self.assertEqual(code, 0, err)
        checks = self.events("full_size")
        self.assertEqual(len(checks), 2, checks)
        self.assertEqual((checks[0]["reached"], checks[0].get("shape_only")), ("step", None))
        if checks[1]["reached"] == "exception":  # as PyTorch 2.6 does
            self.assertTrue(checks[1]["shape_only"], checks[1])

    @unittest.skipIf(HAS_SHAPE_ONLY, "this PyTorch has shape-only tensors")
    def test_without_shape_only_tensors_the_batch_is_the_jobs(self):
        code, _, err = self.run_sampled(MLP_STEPS, args=["256"])
        self.assertEqual(code, 0, err)
        self.assertEqual(self.events("clamp"), [])
        checks = self.events("full_size")
        self.assertEqual([c["reached"] for c in checks], ["unavailable"])
        self.assertIn("shape-only", checks[0]["why"])
        self.assertEqual(self.events("step_measure")[0]["batch_size"], 256)


SLOW_WORKERS = """
    import sys, time
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Slow(Dataset):
        def __len__(self):
            return 96

        def __getitem__(self, index):
            time.sleep(0.05)  # a worker's third batch is asked for after the probe has ended
            return torch.randn(3, 8, 8), index % 5

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.fc = torch.nn.Conv2d(3, 4, 3), torch.nn.Linear(4 * 6 * 6, 5)

        def forward(self, x):
            return self.fc(self.conv(x).view(16, -1))  # written for the job's batch: fails at 2

    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = 0
    for x, y in DataLoader(Slow(), batch_size=16, num_workers=2):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        seen += 1
    print("batches", seen, file=sys.stderr)
"""

SLOW_STEPS = """
    import time
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    model = torch.nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in DataLoader(TensorDataset(torch.randn(64, 8), torch.randn(64, 2)), batch_size=16):
        torch.nn.functional.mse_loss(model(x), y).backward()
        time.sleep(2.2)  # longer than a probe may take
        optimizer.step()
"""

TWO_TRAINING_LOOPS = """
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    corpus = TensorDataset(torch.randn(256, 20), torch.randint(0, 3, (256,)))
    task = TensorDataset(torch.randn(256, 20), torch.randint(0, 3, (256,)))
    for x, y in DataLoader(corpus, batch_size=32):  # pre-training
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    for x, y in DataLoader(task, batch_size=32):  # fine-tuning
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
"""

LARGE_STEPS = """
    import copy, sys
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1000, 4000), nn.ReLU(), nn.Linear(4000, 10))
    model.temperature = nn.Parameter(torch.tensor(2.0))
    optimizer = torch.optim.Adam(model.parameters())
    data = TensorDataset(torch.randn(4 * 256, 1000), torch.randint(0, 10, (4 * 256,)))
    for epoch in range(2):
        for x, y in DataLoader(data, batch_size=256):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x) / model.temperature, y)
            loss.backward()
            optimizer.step()
            print("loss", loss.item(), model[2].bias.detach().cpu().numpy()[:1], model.temperature.item())
            classes, counts = torch.unique(model(x).argmax(1), return_counts=True)
            if sys.argv[2:] == ["bincount"]:
                torch.bincount(model(x).argmax(1))
    torch.save(model.state_dict(), sys.argv[1])
    model.load_state_dict(torch.load(sys.argv[1]))
    print("reloaded", model[0].weight.shape)
    average = copy.deepcopy(model)
    with torch.no_grad():
        for kept, param in zip(average.parameters(), model.parameters()):
            kept.mul_(0.99).add_(param, alpha=0.01)
    print("averaged", average[0].weight.shape, "foreach", optimizer.param_groups[0]["foreach"])
"""


RESNET_STEPS = """
    import torch
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    data = torch.utils.data.TensorDataset(torch.rand(32, 3, 64, 64), torch.randint(0, 10, (32,)))
    for x, y in torch.utils.data.DataLoader(data, batch_size=8):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
"""


DECODER_STEPS = """
    import torch
    from torch import nn
    import torch.nn.functional as F
    torch.manual_seed(0)
    class Block(nn.Module):
        def __init__(self, width, heads):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
            self.heads = heads
        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.norm1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.down(F.gelu(self.up(self.norm2(x))))
    class Decoder(nn.Module):
        def __init__(self, vocab=3000, context=96, width=64, depth=2):
            super().__init__()
            self.tokens, self.positions = nn.Embedding(vocab, width), nn.Embedding(context, width)
            self.blocks = nn.ModuleList(Block(width, 4) for _ in range(depth))
            self.norm, self.head = nn.LayerNorm(width), nn.Linear(width, vocab, bias=False)
        def forward(self, ids, targets):
            x = self.tokens(ids) + self.positions(torch.arange(ids.size(1)))
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.norm(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
    model = Decoder()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    ids = torch.randint(0, 3000, (32, 97))
    data = torch.utils.data.TensorDataset(ids[:, :-1], ids[:, 1:])
    for x, y in torch.utils.data.DataLoader(data, batch_size=16):
        model(x, y).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
"""


@unittest.skipUnless(HAS_TORCH, "PyTorch is not importable by this python3")
class ModelsLargerThanTheHost(HarnessCase):
    """PREFLIGHT_HOST_PARAMETERS: once the parameters registered pass it, the model runs on
    shape-only tensors (shape_only.py)."""

    def run_large(self, limit, *args):
        if os.path.exists(self.events_file):
            os.remove(self.events_file)
        checkpoint = os.path.join(self.dir, "model.pt")
        code, out, err = self.run_script(LARGE_STEPS, args=[checkpoint] + list(args),
                                         variables={"PREFLIGHT_HOST_PARAMETERS": limit,
                                                    "PREFLIGHT_GPUS": "1"})
        self.assertEqual(self.events("harness_error"), [])
        return code, out, err, checkpoint

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_a_shape_only_model_has_the_figures_of_the_real_one(self):
        figures = {}
        for limit in ("0", "1"):  # never; from the first parameter on
            code, out, err, checkpoint = self.run_large(limit)
            self.assertEqual(code, 0, err)
            self.assertIn("reloaded torch.Size([4000, 1000])", out)
            # A copy of the model (an average of its weights) is as shape-only as the model; its
            # optimizer steps with the multi-tensor kernels a GPU's parameters get.
            self.assertIn("averaged torch.Size([4000, 1000]) foreach %s" % {"0": None, "1": True}[limit],
                          out)
            self.assertTrue(os.path.exists(checkpoint))
            found = self.events("step_measure")
            self.assertEqual(len(found), 1, found)
            self.assertEqual(found[0].get("shape_only"), {"0": None, "1": True}[limit])
            figures[limit] = tuple(found[0][k] for k in ("live_bytes", "step_bytes", "flops", "ops",
                                                          "batch_size", "batches_per_epoch"))
            self.assertEqual(self.events("nonfinite"), [])
        self.assertEqual(figures["0"], figures["1"])
        switched = self.events("shape_only")
        self.assertEqual(len(switched), 1)
        self.assertEqual(switched[0]["where"]["line"], 7)  # where the model is built, not its layer
        self.assertEqual(switched[0]["limit"], 1)
        # The loss and the bias have no values: 0 stood in; the temperature's own value is read.
        self.assertIn("loss 0.0 [0.] 2.0", out)
        self.assertEqual(sorted((m["what"], m["where"]["line"]) for m in self.events("made_up")),
                         [("a tensor's values (numpy)", 17), ("a value read (item)", 17),
                          ("torch.unique", 18)])

    def figures_three_ways(self, source):
        """The step's figures of a real run, of the whole model shape-only, and of a sampled run
        (the full-size check's), each a tuple."""
        figures = {}
        ways = {"real": {"PREFLIGHT_HOST_PARAMETERS": "0"}, "model": {"PREFLIGHT_HOST_PARAMETERS": "1"},
                "sampled": {"PREFLIGHT_BATCH": "2", "PREFLIGHT_SAMPLE_FLOPS": "0"}}
        for way, variables in ways.items():
            if os.path.exists(self.events_file):
                os.remove(self.events_file)
            code, _, err = self.run_script(source, variables=variables)
            if "No module named 'torchvision'" in err:
                self.skipTest("torchvision is not importable by this python3")
            self.assertEqual(code, 0, err)
            self.assertEqual(self.events("harness_error"), [])
            found = self.events("step_measure")
            self.assertEqual(found[0].get("sampled_batch"), 2 if way == "sampled" else None)
            figures[way] = tuple(found[0][k] for k in ("live_bytes", "step_bytes", "flops", "ops"))
        return figures

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_a_resnet_50_has_the_figures_of_the_real_one(self):
        """Its steps free and convert many tensors: an activation at the address of a storage
        converted in an earlier step is still an activation, and a weight saved through a view
        of a fake freed since is still no activation."""
        figures = self.figures_three_ways(RESNET_STEPS)
        self.assertEqual(figures["model"], figures["real"])
        self.assertEqual(figures["sampled"], figures["real"])

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_a_decoder_has_the_figures_of_the_real_one(self):
        """Its weights are converted afresh at each use, and their fakes freed in the middle of
        the step: an activation at a freed fake's address is still an activation (the
        full-size check read GPT-2 small's step 12% low)."""
        figures = self.figures_three_ways(DECODER_STEPS)
        self.assertEqual(figures["model"], figures["real"])
        self.assertEqual(figures["sampled"], figures["real"])

    @unittest.skipUnless(HAS_SHAPE_ONLY, "PyTorch before 2.1 has no shape-only tensors")
    def test_an_operator_shape_only_tensors_cannot_run_is_their_limit(self):
        code, _, _, _ = self.run_large("1", "bincount")
        self.assertNotEqual(code, 0)
        failure = self.only_exception()
        self.assertTrue(failure["type"].startswith("torch._subclasses."), failure)
        self.assertEqual([f["line"] for f in failure["frames"] if f["user"]], [20])

    def test_a_model_within_the_limit_stays_real(self):
        code, out, err, _ = self.run_large(str(1 << 30))
        self.assertEqual(code, 0, err)
        self.assertEqual(self.events("shape_only"), [])
        self.assertNotIn("loss 0.0 ", out)


PARTS_STEP = """
import torch
from torch import nn
import torch.nn.functional as F

class Block(nn.Module):  # a custom module: its own ops are recorded one by one
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.norm = nn.BatchNorm2d(8)

    def forward(self, x):
        return F.relu(self.norm(self.conv(x)) + x)

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), Block(), Block(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(8, 10))
embedding, rnn = nn.Embedding(50, 16), nn.LSTM(16, 16, 2)
optimizer = torch.optim.SGD(list(model.parameters()) + list(embedding.parameters())
                            + list(rnn.parameters()), lr=0.1, momentum=0.9)
for step in range(3):
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
    tokens = torch.randint(0, 50, (5, 4))
    optimizer.zero_grad()
    out, _ = rnn(embedding(tokens))
    # The same lookup on indices from another range: the same part.
    context = embedding(torch.randint(25, 50, (5, 4)))
    loss = F.cross_entropy(model(x), y) + out.mean() + context.mean()
    loss.backward()
    optimizer.step()
"""


@unittest.skipUnless(HAS_TORCH, "PyTorch is not importable by this python3")
class StepParts(HarnessCase):
    """The measured step part by part (layers.py), and each part rebuilt alone from its
    signature by the benchmark (emulator/bench/layer_bench.py)."""

    def parts(self):
        code, _, err = self.run_script(PARTS_STEP)
        self.assertEqual(code, 0, err)
        self.assertEqual(self.events("harness_error"), [])
        found = self.events("step_parts")
        self.assertEqual(len(found), 1, found)
        return found[0]["parts"]

    def test_layers_ops_and_the_optimizer_of_one_step(self):
        parts = self.parts()
        by_name = {}
        for part in parts:
            by_name.setdefault(part.get("type") or part.get("func"), []).append(part)
        # Identical calls are one part: the two blocks' convolutions share a signature.
        convolutions = by_name["torch.nn.Conv2d"]
        self.assertEqual(sorted(p["calls"] for p in convolutions), [1, 2])
        block_conv = [p for p in convolutions if p["calls"] == 2][0]
        self.assertEqual(block_conv["args"]["bias"], False)
        self.assertEqual(block_conv["args"]["padding"], ["L", [1, 1]])
        self.assertEqual(block_conv["flops"], 2 * 4 * 8 * 16 * 16 * 8 * 9)
        # The first convolution's input is the batch: no gradient to compute for it.
        first = [p for p in convolutions if p["calls"] == 1][0]
        self.assertEqual(first["inputs"][0][:4], ["T", [4, 3, 16, 16], "float32", False])
        # The custom block's own add and relu are ops; the LSTM is a layer built by RNNBase.
        self.assertIn("torch.nn.functional.relu", by_name)
        self.assertTrue(any(name.startswith("Tensor.") and "add" in name for name in by_name), by_name)
        self.assertEqual(by_name["torch.nn.LSTM"][0]["args"]["num_layers"], 2)
        # The indices keep their range, so that a rebuilt embedding stays in its table; lookups
        # that differ only in their index values are one part.
        self.assertEqual([p["calls"] for p in by_name["torch.nn.Embedding"]], [2])
        low, high = by_name["torch.nn.Embedding"][0]["inputs"][0][4]["range"]
        self.assertTrue(0 <= low <= high < 50)
        optimizer = by_name["torch.optim.SGD"][0]
        self.assertEqual(optimizer["groups"][0]["settings"]["momentum"], 0.9)
        # Every parameter: the Sequential's 2 + 2 x (1 + 2) + 2, the embedding's, the LSTM's 8.
        self.assertEqual(len(optimizer["groups"][0]["params"]), 10 + 1 + 8)
        # Nothing the harness ran itself, and nothing from inside a torch.optim step.
        self.assertNotIn("Tensor.min", by_name)
        self.assertNotIn("Tensor.add_", [p.get("func") for p in parts if p.get("grad") is False
                                          and p["inputs"][0][1] == [10, 8]])
        self.assertTrue(all(p.get("replayable", True) for p in parts), parts)

    def test_every_part_is_rebuilt_and_timed_alone(self):
        parts = self.parts()
        for number, part in enumerate(parts):
            part["id"] = "%064x" % number
        request = json.dumps({"budget": 0.01, "parts": parts})
        with open(os.path.join(ROOT, "emulator", "bench", "layer_bench.py")) as f:
            program = f.read()
        proc = subprocess.run([sys.executable, "-I", "-c", program], input=request.encode(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        results = [json.loads(line) for line in proc.stdout.decode().splitlines()]
        self.assertEqual(len(results), len(parts))
        for result, part in zip(results, parts):
            self.assertNotIn("error", result, part)
            # At least MIN_REPEATS runs are timed; "repeats" counts those that touched no new
            # page, which a loaded machine may leave fewer of (never none: all count then).
            self.assertGreaterEqual(result["repeats"], 1)
            self.assertGreater(result["forward"], 0)
            has_backward = part["kind"] != "optimizer" and part["grad"] and (
                part.get("params") or any(isinstance(x, list) and x[:1] == ["T"] and x[3]
                                          for x in part["inputs"]))
            if has_backward and part["kind"] == "layer":
                self.assertGreater(result["backward"], 0, part)

    def test_cuda_autocast_is_what_the_platform_would_run(self):
        code, _, err = self.run_script("""
            import torch
            from torch import nn
            model = nn.Linear(8, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for step in range(3):
                with torch.cuda.amp.autocast():  # does nothing without a GPU
                    loss = model(torch.randn(4, 8)).sum()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        """)
        self.assertEqual(code, 0, err)
        found = self.events("step_parts")
        self.assertEqual(len(found), 1, found)
        self.assertEqual(found[0]["autocast"], "float16")

    def test_the_benchmark_refuses_what_is_not_torch(self):
        request = json.dumps({"budget": 0.01, "parts": [
            {"id": "a", "kind": "op", "func": "os.system", "inputs": ["echo hostile"], "kwargs": {}},
            {"id": "b", "kind": "layer", "type": "torch.nn.modules.module.Module.__init__", "args": {}},
            {"id": "c", "kind": "optimizer", "type": "torch.optim.Optimizer.__init__", "groups": []},
            {"id": "d", "kind": "op", "func": "torch.nn.functional.relu",
             "inputs": [["T", [2, 2], "os", False]], "kwargs": {}}]})
        with open(os.path.join(ROOT, "emulator", "bench", "layer_bench.py")) as f:
            program = f.read()
        proc = subprocess.run([sys.executable, "-I", "-c", program], input=request.encode(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        results = [json.loads(line) for line in proc.stdout.decode().splitlines()]
        self.assertEqual([r["id"] for r in results], ["a", "b", "c", "d"])
        self.assertTrue(all("error" in r for r in results), results)


# A library function standing in for optimizer.step(): the harness's torch hooks call
# loop_cut.on_step from there, so the loops around it are ended without PyTorch.
FAKE_STEP = """
import sys
def step():
    import preflight_harness
    from preflight_harness import loop_cut
    preflight_harness.state.trained = True
    loop_cut.on_step(sys._getframe(1))

class Module(object):
    \"\"\"Stands in for torch.nn.Module: calling one is a forward pass in eval mode.\"\"\"
    def __call__(self):
        from preflight_harness import loop_cut
        loop_cut.on_eval_forward(sys._getframe(1), self, Module)

def forward_eval():
    \"\"\"Stands in for a model called in eval mode from the caller's frame.\"\"\"
    from preflight_harness import loop_cut
    loop_cut.on_eval_forward(sys._getframe(1), Module(), Module)

def validate_and_save():
    \"\"\"Stands in for a validation pass and a torch.save.\"\"\"
    from preflight_harness import stages
    stages.enter("validate", "model.eval()", sys._getframe(1))
    stages.enter("checkpoint", "torch.save()", sys._getframe(1))
    stages.enter("train", "model.train()", sys._getframe(1))

class Loader(object):
    \"\"\"Stands in for a capped DataLoader: 2 batches per iterator, and it says so.\"\"\"
    def __iter__(self):
        return LoaderIterator()

class LoaderIterator(object):
    def __init__(self):
        self.n = 0
    def __iter__(self):
        return self
    def __next__(self):
        if self.n == 2:
            raise StopIteration
        self.n += 1
        from preflight_harness import loop_cut
        loop_cut.pulled(sys._getframe(1))
        return self.n
"""


class LoopCut(HarnessCase):
    """loop_cut.py: loops that train end after the sampled steps, whatever drives them."""

    def run_loops(self, source, env=None):
        lib = os.path.join(self.dir, "lib")
        os.mkdir(lib)
        with open(os.path.join(lib, "fakeopt.py"), "w") as f:
            f.write(FAKE_STEP)
        for key, value in (env or {}).items():
            os.environ[key] = value
        try:
            code, out, err = self.run_script(source, extra_path=lib, timeout=60)
        finally:
            for key in env or {}:
                del os.environ[key]
        self.assertEqual(code, 0, err)
        self.assertEqual(err, "")
        self.assertEqual(self.events("harness_error"), [])
        return out

    def cuts(self):
        return [(e["what"], e["kind"], e["after"], e["original"], e["where"]["line"])
                for e in self.events("cut")]

    def test_batches_by_index_and_epochs_from_the_environment(self):
        out = self.run_loops("""
            import os
            from fakeopt import step, validate_and_save

            def train(data, bptt, seen):
                for batch, i in enumerate(range(0, len(data) - 1, bptt)):
                    step()
                    seen.append(i)

            data = list(range(100000))
            epochs = int(os.environ["EPOCHS"])
            per_epoch = []
            for epoch in range(1, epochs + 1):
                seen = []
                train(data, 35, seen)
                validate_and_save()
                per_epoch.append(len(seen))
            print(per_epoch, "saved")
        """, env={"EPOCHS": "150"})
        self.assertEqual(out.strip(), "[2, 2] saved")
        self.assertEqual(self.cuts(), [("for loop", "batches", 2, 2858, 6),
                                       ("for loop", "epochs", 2, 150, 13)])
        # what the full run's loop variables end on: a file may be named after the last epoch
        self.assertEqual([e["last"] for e in self.events("cut")], [99995, 150])

    def test_epochs_go_on_until_validation_ran_at_most_ten(self):
        out = self.run_loops("""
            from fakeopt import step, validate_and_save
            ran = []
            for epoch in range(1, 301):
                for i in range(3):
                    step()
                if epoch % 5 == 0:
                    validate_and_save()
                ran.append(epoch)
            print(len(ran))
            for epoch in range(1, 301):
                step()
                for i in range(3):
                    step()
                ran.append(epoch)
            print(len(ran))
        """)
        self.assertEqual(out.split(), ["5", "15"])
        self.assertEqual([c[1:3] for c in self.cuts()], [("batches", 2), ("epochs", 5),
                                                         ("batches", 2), ("epochs", 10)])

    def test_while_loop_is_left_and_what_follows_runs(self):
        out = self.run_loops("""
            import json
            from fakeopt import step
            cfg = json.loads('{"max_steps": 1000000}')
            step_n = 0
            while step_n < cfg["max_steps"]:
                step()
                step_n += 1
            print("evaluated after", step_n)
        """)
        self.assertEqual(out.strip(), "evaluated after 4")
        self.assertEqual(self.cuts(), [("while loop", "steps", 4, None, 6)])

    def test_a_long_loop_body_is_still_a_for_loop(self):
        # Its FOR_ITER jumps far, so the loop's backward jump lands on an EXTENDED_ARG.
        body = "\n".join("                    total += %d" % k for k in range(150))
        out = self.run_loops("""
            from fakeopt import step
            def train(seen):
                total = 0
                for batch in range(0, 100000, 20):
                    step()
                    seen.append(batch)
%s
                return total
            for epoch in range(2):
                seen = []
                train(seen)
                print(len(seen))
        """ % body)
        self.assertEqual(out.split(), ["2", "2"])
        self.assertEqual(self.cuts(), [("for loop", "batches", 2, 5000, 5)])

    def test_a_capped_loader_bounds_its_for_loop_not_a_while_loop_calling_next(self):
        out = self.run_loops("""
            from fakeopt import Loader, step
            loader = Loader()
            for epoch in range(2):
                for batch in loader:
                    step()
            it, step_n = iter(loader), 0
            while step_n < 100000:
                try:
                    batch = next(it)
                except StopIteration:
                    it = iter(loader)
                    batch = next(it)
                step()
                step_n += 1
            print(step_n)
        """)
        self.assertEqual(out.strip(), "4")
        self.assertEqual(self.cuts(), [("while loop", "steps", 4, None, 8)])

    def test_evaluation_loops_after_training_get_the_sampled_batches(self):
        out = self.run_loops("""
            from fakeopt import forward_eval, step
            def evaluate(n):
                done = 0
                for i in range(0, n, 35):
                    forward_eval()
                    done += 1
                return done
            before = evaluate(7000)
            for epoch in range(2):
                step()
                print(evaluate(7000))
            print(before, evaluate(7000))
        """)
        self.assertEqual(out.split(), ["2", "2", "200", "2"])
        self.assertEqual(self.cuts(), [("for loop", "batches", 2, 200, 5)])

    def test_a_models_own_loop_over_its_parts_is_not_an_evaluation_loop(self):
        out = self.run_loops("""
            from fakeopt import Module, step
            class Seq2Seq(Module):
                def __init__(self):
                    self.decoder = Module()
                def greedy(self, n):
                    tokens = []
                    for t in range(n):
                        self.decoder()
                        tokens.append(t)
                    return tokens
            model = Seq2Seq()
            for epoch in range(2):
                step()
                print(len(model.greedy(9)))
            decoded = []
            for batch in range(50):
                decoded.append(len(model.greedy(9)))
            print(len(decoded), decoded[0])
        """)
        self.assertEqual(out.split(), ["9", "9", "2", "9"])
        self.assertEqual(self.cuts(), [("for loop", "batches", 2, 50, 17)])

    def test_loops_that_end_by_themselves_are_not_reported(self):
        out = self.run_loops("""
            from fakeopt import step
            total = 0
            for epoch in range(2):
                for i in range(2):
                    step()
                    total += 1
            print(total)
        """)
        self.assertEqual(out.strip(), "4")
        self.assertEqual(self.events("cut"), [])

    def test_a_while_loop_ending_its_function_runs_in_full_with_a_note(self):
        out = self.run_loops("""
            from fakeopt import step

            def fit(limit):
                n = 0
                while n < limit:
                    step()
                    n += 1

            fit(50)
            print("done")
        """)
        self.assertEqual(out.strip(), "done")
        self.assertEqual(self.events("cut"), [])
        notes = self.events("uncut")
        self.assertEqual(len(notes), 1)
        self.assertEqual((notes[0]["what"], notes[0]["where"]["line"]), ("while loop", 6))
        self.assertIn("last statement", notes[0]["why"])

    def test_such_a_loop_over_a_kept_count_ends_by_lowering_the_count(self):
        # The job's --max-steps kept its value; the loop that reads it cannot be left by a
        # jump, so the count is lowered to what the loop ran, as a last resort, and said so.
        out = self.run_loops("""
            import argparse
            from fakeopt import step

            def fit(opts):
                n = 0
                while n < opts.max_steps:
                    step()
                    n += 1

            p = argparse.ArgumentParser()
            p.add_argument("--max-steps", type=int, default=5000)
            opts = p.parse_args()
            fit(opts)
            print("done", opts.max_steps)
        """)
        self.assertEqual(out.split(), ["done", "4"])
        self.assertEqual([(e["what"], e["original"], e["value"]) for e in self.events("clamp")],
                         [("argparse --max-steps", 5000, 4)])
        self.assertEqual(self.events("uncut"), [])


class Capabilities(unittest.TestCase):
    """The compute capability a virtual GPU reports, from the card's name."""

    def test_each_card_by_its_own_name(self):
        sys.path.insert(0, SITE)
        try:
            from preflight_harness import virtual_gpu
        finally:
            sys.path.remove(SITE)
        got = dict((name, virtual_gpu.VirtualDevices(1, name, 1 << 30).capability) for name in (
            "NVIDIA A100-SXM4-80GB", "NVIDIA A10G", "NVIDIA H200", "Tesla P100-PCIE-16GB",
            "Some Future GPU"))
        self.assertEqual(got, {"NVIDIA A100-SXM4-80GB": (8, 0), "NVIDIA A10G": (8, 6),
                               "NVIDIA H200": (9, 0), "Tesla P100-PCIE-16GB": (6, 0),
                               "Some Future GPU": (7, 0)})


class RankFolding(unittest.TestCase):
    """torchrun's arguments as the harness rewrites them (docs/harness.md "Ranks")."""

    def fold(self, nproc, nnodes, gpus="4"):
        sys.path.insert(0, SITE)
        try:
            import argparse
            from preflight_harness import ranks, clamp
        finally:
            sys.path.remove(SITE)
        reported = []
        original = clamp.report
        clamp.report = lambda *a: reported.append(a)
        os.environ["PREFLIGHT_GPUS"] = gpus
        try:
            args = argparse.Namespace(nproc_per_node=nproc, nnodes=nnodes, node_rank=1,
                                      rdzv_backend="c10d", rdzv_endpoint="node0:29400",
                                      master_addr="node0")
            ranks._fold(args)
        finally:
            clamp.report = original
            del os.environ["PREFLIGHT_GPUS"]
        return args, reported

    def test_nodes_fold_into_this_one_and_ranks_are_capped(self):
        args, reported = self.fold("4", "2")
        self.assertEqual((args.nnodes, args.node_rank, args.rdzv_backend, args.master_addr),
                         ("1", 0, "static", "127.0.0.1"))
        self.assertEqual(args.nproc_per_node, "4")
        self.assertEqual([r[:3] for r in reported], [("torchrun --nnodes", "2", 1),
                                                      ("torchrun ranks (nodes x nproc_per_node)", 8, 4)])
        self.assertTrue(all(r[4] == "ranks" for r in reported))

    def test_gpu_means_the_visible_gpus_and_a_small_job_is_left_alone(self):
        args, reported = self.fold("gpu", "1", gpus="2")
        self.assertEqual(args.nproc_per_node, "2")
        self.assertEqual(args.rdzv_backend, "c10d")
        args, reported = self.fold("2", "1")
        self.assertEqual((args.nproc_per_node, reported), ("2", []))


class WatchedLines(HarnessCase):
    """watch.py: the lines static predictions are about, reported once each as they run."""

    SOURCE = """\
        import os

        def used():
            return os.environ.get("HOME")

        def never_called():
            return os.environ["NOT_SET_ANYWHERE"]

        if os.environ.get("NOT_SET_EITHER") == "1":
            print("branch not taken")
        for _ in range(3):
            used()
        """

    def run_watched(self, watch):
        return self.run_script(self.SOURCE, variables={"PREFLIGHT_WATCH": watch})

    def test_lines_that_ran_once_each_with_their_stage(self):
        code, out, err = self.run_watched("4,7,10,12 main.py")
        self.assertEqual(code, 0, err)
        reached = [(e["line"], e["stage"]) for e in self.events("reached")]
        self.assertEqual(sorted(reached), [(4, "init"), (12, "init")])
        self.assertTrue(all(e["file"] == os.path.join(self.code, "main.py")
                            for e in self.events("reached")))
        entered = [(e["first"], e["last"]) for e in self.events("entered")]
        self.assertEqual(entered, [(3, 4)])  # used(); never_called() never started

    def test_nothing_watched_nothing_reported(self):
        code, out, err = self.run_watched("")
        self.assertEqual(code, 0, err)
        self.assertEqual(self.events("reached") + self.events("entered"), [])

    def test_a_list_that_names_other_files_costs_nothing_here(self):
        code, out, err = self.run_watched("4 other.py\n1,2 sub/dir/x.py")
        self.assertEqual(code, 0, err)
        self.assertEqual(self.events("reached"), [])
        self.assertEqual(self.events("harness_error"), [])


# The trace module driven directly, without PyTorch: `import preflight_harness.trace` and
# start() are what torch_hooks does once torch is imported.
TRACE_PRELUDE = """
import json, os, sys, time
import preflight_harness as core
from preflight_harness import trace
trace.start()

def written():
    if not os.path.exists(trace._b.path):
        return []
    with open(trace._b.path) as f:
        return [json.loads(line) for line in f]

def spans():
    return [r["name"] for r in written() if r["ph"] == "X"]
"""


class Trace(HarnessCase):
    """trace.py's buffer, bounds and time base (docs/harness.md "Trace")."""

    def run_trace(self, source, variables=None):
        code, out, err = self.run_script(TRACE_PRELUDE + textwrap.dedent(source), variables=variables)
        self.assertEqual(code, 0, err)
        self.assertEqual(self.events("harness_error"), [])
        return out

    def main_pid(self):
        return self.events("start")[0]["pid"]

    def test_records_are_written_by_256_after_a_second_and_at_exit(self):
        out = self.run_trace("""
            at = trace.now()
            for i in range(255):
                trace.complete("r%d" % i, "test", at, at, {"i": i})
            print(len(spans()))
            trace.complete("r255", "test", at, at)
            print(len(spans()))
            trace.complete("a second later", "test", at, at + 1.5)
            print(len(spans()))
            trace.counter("memory", trace.now(), {"rss": 1})
            print(len(written()))
        """)
        self.assertEqual(out.split(), ["0", "256", "257", "259"])  # and two metadata records
        records = self.traces()
        pid = self.main_pid()
        self.assertEqual(len([r for r in records if r["ph"] == "X"]), 257)
        self.assertEqual(records[-1], {"ph": "C", "name": "memory", "ts": records[-1]["ts"],
                                       "pid": pid, "tid": records[-1]["tid"], "args": {"rss": 1}})
        meta = dict((r["name"], r["args"]["name"]) for r in records if r["ph"] == "M")
        self.assertEqual(meta, {"process_name": "python main.py", "thread_name": "MainThread"})
        if sys.version_info >= (3, 8):
            self.assertEqual(set(r["tid"] for r in records), {pid})  # the main thread's native id

    def test_at_most_20000_records_then_drops_are_counted(self):
        self.run_trace("""
            at = trace.now()
            for i in range(20005):
                trace.complete("r", "test", at, at)
            trace.counter("memory", at, {"rss": 1})
            trace.flush()
            trace.complete("r", "test", at, at)
        """)
        records = self.traces()
        self.assertEqual(len([r for r in records if r["ph"] == "X"]), 20000)
        dropped = [r["args"]["dropped"] for r in records if r["name"] == "preflight_dropped"]
        self.assertEqual(max(dropped), 7)

    def test_a_forked_child_writes_its_own_records_not_the_parents(self):
        out = self.run_trace("""
            at = trace.now()
            for i in range(5):
                trace.complete("parent", "test", at, at)
            pid = os.fork()
            if pid == 0:
                trace.complete("child", "test", trace.now(), trace.now())
                trace.complete("child", "test", trace.now(), trace.now())
                os._exit(0)  # no atexit, as in a DataLoader worker: each record is written at once
            os.waitpid(pid, 0)
            print(pid)
        """)
        child = int(out.split()[0])
        by_pid = {}
        for r in self.traces():
            if r["ph"] == "X":
                by_pid.setdefault(r["pid"], []).append(r)
        names = dict((pid, sorted(set(r["name"] for r in found))) for pid, found in by_pid.items())
        self.assertEqual(names, {self.main_pid(): ["parent"], child: ["child"]})
        self.assertEqual((len(by_pid[self.main_pid()]), len(by_pid[child])), (5, 2))
        if sys.version_info >= (3, 8):
            self.assertEqual(set(r["tid"] for r in by_pid[child]), {child})

    def test_times_are_the_events_started_plus_t_in_microseconds(self):
        self.run_trace("""
            at = time.monotonic()
            clock, time.monotonic = time.monotonic, lambda: at
            core.emit("probe")
            time.monotonic = clock
            trace.complete("probe", "test", at, at + 0.25)
        """)
        start, probe = self.events("start")[0], self.events("probe")[0]
        span = [r for r in self.traces() if r["name"] == "probe"][0]
        self.assertLessEqual(abs(span["ts"] - round((start["started"] + probe["t"]) * 1e6)), 1)
        self.assertEqual(span["dur"], 250000)
        self.assertIsInstance(span["ts"], int)

    def test_a_line_is_at_most_4_kb_and_a_name_200_characters(self):
        self.run_trace("""
            at = trace.now()
            trace.complete("n" * 300, "test", at, at, {"blob": "x" * 5000})
            trace.complete("wide", "test", at, at, {"text": "\\u00e9" * 3000})
            trace.complete("odd", "test", at, at, {"tuple": (1, 2.5), "none": None, 3: "key"})
            trace.complete("nan", "test", at, at, {"loss": float("nan"), "lr": 0.5})
        """)
        spans = dict((r["name"][:4], r) for r in self.traces() if r["ph"] == "X")
        self.assertEqual(len(spans["nnnn"]["name"]), 200)
        self.assertEqual(spans["nnnn"]["args"], {"truncated": True})
        self.assertEqual(spans["wide"]["args"], {"truncated": True})
        self.assertEqual(spans["odd"]["args"], {"tuple": [1, 2.5], "none": None, "3": "key"})
        self.assertEqual(spans["nan"]["args"], {"loss": None, "lr": 0.5})


TRACED_TRAINING = """
import os, sys, torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    def forward(self, x):
        return F.log_softmax(self.body(x), dim=1)

loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,))),
                    batch_size=4, num_workers=2)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    optimizer.zero_grad()
    F.nll_loss(model(x), y).backward()
    optimizer.step()
torch.save(model.state_dict(), "model.pt")
torch.load("model.pt")
try:
    torch.save(model.state_dict(), "no/such/folder/model.pt")
except RuntimeError:
    pass
try:
    torch.load("missing.pt")
except FileNotFoundError:
    pass
"""


def partial_overlaps(spans):
    """Pairs of X events of one thread that overlap without one holding the other."""
    found, open_spans = [], []
    for span in sorted(spans, key=lambda s: (s["ts"], -s["dur"])):
        while open_spans and open_spans[-1]["ts"] + open_spans[-1]["dur"] <= span["ts"]:
            open_spans.pop()
        if open_spans and span["ts"] + span["dur"] > open_spans[-1]["ts"] + open_spans[-1]["dur"]:
            found.append((open_spans[-1]["name"], span["name"]))
        open_spans.append(span)
    return found


@unittest.skipUnless(HAS_TORCH, "PyTorch is not importable by this python3")
class TraceWithTorch(HarnessCase):
    def test_a_training_run_with_workers_is_traced_nested(self):
        code, _, err = self.run_script(TRACED_TRAINING, timeout=120)
        self.assertEqual(code, 0, err)
        self.assertEqual(self.events("harness_error"), [])
        start = self.events("start")[0]
        main, records = start["pid"], self.traces()
        spans = [r for r in records if r["ph"] == "X"]
        ours = [r for r in spans if r["pid"] == main]
        by_cat = {}
        for r in ours:
            by_cat.setdefault(r["cat"], []).append(r)
        self.assertEqual(sorted(by_cat), ["backward", "checkpoint", "data", "forward", "layer",
                                          "optimizer", "step"])
        self.assertEqual([r["name"] for r in by_cat["forward"]], ["forward Net"] * 2)
        self.assertEqual([r["name"] for r in by_cat["optimizer"]], ["optimizer step SGD"] * 2)
        batches = [r["args"] for r in by_cat["data"]]
        self.assertEqual(batches[0], {"loader": "TensorDataset", "index": 1, "workers": 2})
        self.assertEqual(batches[-1]["end"], "cap")
        layers = [(r["name"], r["args"]["type"], r["args"]["input_shapes"], r["args"]["flops"])
                  for r in by_cat["layer"]]
        self.assertEqual(layers, [("body.0", "Linear", [[4, 8]], 2 * 4 * 8 * 16),
                                  ("body.1", "ReLU", [[4, 16]], 0),
                                  ("body.2", "Linear", [[4, 16]], 2 * 4 * 16 * 3)])
        step = [r for r in by_cat["step"] if r["name"] == "measured step"][0]
        # Each training iteration is a span: the first from its batch's wait, the next from the
        # first's step; the second is the measured step's window.
        iterations = [r for r in by_cat["step"] if r is not step]
        self.assertEqual([(r["name"], r["args"]) for r in iterations],
                         [("training step 1", {"index": 1}), ("training step 2", {"index": 2})])
        self.assertEqual((iterations[1]["ts"], iterations[1]["dur"]), (step["ts"], step["dur"]))
        first = iterations[0]
        self.assertEqual(first["ts"], batches and by_cat["data"][0]["ts"])
        self.assertEqual(sorted(set(r["cat"] for r in ours if first["ts"] <= r["ts"] and
                                    r["ts"] + r["dur"] <= first["ts"] + first["dur"] and r is not first)),
                         ["backward", "data", "forward", "optimizer"])
        self.assertEqual(step["args"]["flops"], self.events("step_measure")[0]["flops"])
        saved, loaded, failed, missing = by_cat["checkpoint"]
        self.assertEqual((saved["name"], saved["args"]["path"], saved["args"]["bytes"]),
                         ("torch.save", os.path.join(self.code, "model.pt"),
                          os.path.getsize(os.path.join(self.code, "model.pt"))))
        self.assertEqual((loaded["name"], loaded["args"]["bytes"]), ("torch.load", saved["args"]["bytes"]))
        self.assertEqual((failed["args"]["error"], failed["args"]["bytes"]), ("RuntimeError", None))
        self.assertEqual((missing["name"], missing["args"]["error"], missing["args"]["bytes"]),
                         ("torch.load", "FileNotFoundError", None))
        # The workers' own processes fetch the batches.
        workers = dict((r["pid"], r["args"]["name"]) for r in records
                       if r["name"] == "process_name" and r["pid"] != main)
        self.assertEqual(sorted(workers.values()), ["DataLoader worker 0", "DataLoader worker 1"])
        fetched = [r for r in spans if r["pid"] in workers]
        self.assertTrue(fetched)
        self.assertEqual(set((r["name"], r["cat"], r["args"]["items"]) for r in fetched),
                         {("fetch batch", "data", 4)})
        counters = set(r["name"] for r in records if r["ph"] == "C")
        self.assertEqual(counters, {"memory", "virtual GPU"})
        self.assertTrue(all(r["args"]["rss"] > 0 for r in records if r["name"] == "memory"))
        # Spans nest, and lie within the process's life by the events' own clock.
        threads = {}
        for r in spans:
            threads.setdefault((r["pid"], r["tid"]), []).append(r)
        for found in threads.values():
            self.assertEqual(partial_overlaps(found), [])
        first, last = start["started"] * 1e6, (start["started"] + self.events("exit")[0]["t"]) * 1e6
        self.assertTrue(all(first <= r["ts"] <= r["ts"] + r["dur"] <= last for r in ours))
        inside = [r["cat"] for r in ours if step["ts"] <= r["ts"] and
                  r["ts"] + r["dur"] <= step["ts"] + step["dur"] and r is not step]
        self.assertEqual(sorted(set(inside)), ["backward", "data", "forward", "layer", "optimizer", "step"])

    def test_preflight_trace_0_writes_no_trace(self):
        code, _, err = self.run_script(TRACED_TRAINING, timeout=120, variables={"PREFLIGHT_TRACE": "0"})
        self.assertEqual(code, 0, err)
        self.assertEqual(self.traces(), [])
        self.assertEqual(len(self.events("step_measure")), 1)


# A library function standing in for optimizer.step() as the torch hooks call it: the loop cut,
# periodic work brought forward, and the end of a job that repeats itself.
FAKE_ENDLESS_STEP = """
import sys
def step():
    import preflight_harness
    from preflight_harness import endless, loop_cut, periodic
    preflight_harness.state.trained = True
    frame = sys._getframe(1)
    loop_cut.on_step(frame)
    periodic.on_first_step(frame)
    if endless.on_step(frame, "step"):
        endless.end_job()
"""


class EndlessRuns(HarnessCase):
    """endless.py and periodic.py: a job with no end of its own is ended once it repeats
    itself, never one still reaching new code; intervals in its own config run within the
    sample."""

    def run_job(self, source):
        lib = os.path.join(self.dir, "lib")
        os.mkdir(lib)
        with open(os.path.join(lib, "fakeopt.py"), "w") as f:
            f.write(FAKE_ENDLESS_STEP)
        code, out, err = self.run_script(source, extra_path=lib, timeout=60)
        self.assertEqual(self.events("harness_error"), [])
        return code, out, err

    def test_a_while_true_trainer_is_ended_where_it_repeats_itself(self):
        code, out, err = self.run_job("""
            import sys
            from fakeopt import step
            from preflight_harness import stages

            class Trainer(object):
                def __init__(self):
                    self.iter_num = 0
                    self.save_every = 500

                def train_step(self):
                    step()

                def run(self):
                    while True:
                        self.train_step()
                        self.iter_num += 1
                        if self.iter_num % self.save_every == 0:
                            save(self.iter_num)

            def save(at):  # stands in for torch.save
                print("saved at", at)
                stages.enter("checkpoint", "torch.save()", sys._getframe(1))
                stages.enter("train", "torch.save() returned", sys._getframe(1))

            trainer = Trainer()
            try:
                trainer.run()
            finally:
                print("finally ran at", trainer.iter_num)
        """)
        self.assertEqual(code, 0, err)
        # 50·2 steps, then 25·2 with nothing new; the checkpoint, brought forward to every 2
        # steps, is written once and its interval put back.
        self.assertEqual(out.splitlines(), ["saved at 2", "finally ran at 149"])
        ended = self.events("endless")
        self.assertEqual(len(ended), 1, ended)
        self.assertEqual((ended[0]["after"], ended[0]["quiet"]), (150, 50))
        self.assertEqual(ended[0]["where"]["line"], 12)
        self.assertEqual((ended[0]["loop"]["line"], ended[0]["loop"]["what"]), (15, "while loop"))
        self.assertEqual(self.events("exit")[-1]["code"], 0)
        self.assertEqual([(e["what"], e["original"], e["value"]) for e in self.events("clamp")],
                         [("self.save_every", 500, 2)])

    def test_a_scripts_top_level_settings_are_brought_forward_and_its_count_lowered(self):
        # A script in the style of public GPT trainers: settings as module globals, and a
        # `while True:` loop, its last statement, that breaks at max_iters. Its evaluation runs
        # within the sample; the loop cannot be left by a jump, so max_iters is lowered.
        code, out, err = self.run_job("""
            from fakeopt import step

            eval_interval = 2000
            max_iters = 600000
            iter_num = 0
            while True:
                if iter_num % eval_interval == 0 and iter_num > 0:
                    print("evaluated at", iter_num)
                step()
                iter_num += 1
                if iter_num > max_iters:
                    break
        """)
        self.assertEqual(code, 0, err)
        self.assertEqual(out.splitlines(), ["evaluated at 2", "evaluated at 4"])
        self.assertEqual([(e["what"], e["original"], e["value"]) for e in self.events("clamp")],
                         [("eval_interval", 2000, 2), ("max_iters", 600000, 4)])
        self.assertEqual(self.events("endless"), [])
        self.assertEqual(self.events("uncut"), [])

    def test_a_job_still_reaching_new_code_is_not_ended(self):
        # A while loop the loop cut cannot end (the last statement of its function) that
        # reaches a new line every 40 steps, then ends by itself: it runs in full.
        code, out, err = self.run_job("""
            from fakeopt import step

            def mark(seen, i):
                seen.append(i)

            def fit(seen):
                i = 0
                while i < 330:
                    step()
                    if i == 100: mark(seen, i)
                    if i == 140: mark(seen, i)
                    if i == 180: mark(seen, i)
                    if i == 220: mark(seen, i)
                    if i == 260: mark(seen, i)
                    if i == 300: mark(seen, i)
                    i += 1

            seen = []
            fit(seen)
            print("done", seen[-1])
        """)
        self.assertEqual(code, 0, err)
        self.assertEqual(out.strip(), "done 300")
        self.assertEqual(self.events("endless"), [])

    def test_intervals_in_the_jobs_own_config_are_brought_forward(self):
        code, out, err = self.run_job("""
            import json
            from collections.abc import MutableMapping
            from fakeopt import step

            class TrainerConfig(object):
                def __init__(self):
                    self.eval_interval = 250
                    self.learning_rate = 3e-4

            class Trainer(object):
                def __init__(self, config):
                    self.config = config
                    self.log_every = 100

                def fit(self, steps):
                    for it in range(1, steps + 1):
                        step()
                        if it % self.config.eval_interval == 0:
                            print("eval", it)
                        if it % self.log_every == 0:
                            print("log", it)
                        if it % cfg["train"]["save_every"] == 0:
                            print("save", it)

            class Settings(MutableMapping):  # a config library's mapping, not a dict
                def __init__(self, **values):
                    self._values = values
                def __getitem__(self, key):
                    return self._values[key]
                def __setitem__(self, key, value):
                    self._values[key] = value
                def __delitem__(self, key):
                    del self._values[key]
                def __iter__(self):
                    return iter(self._values)
                def __len__(self):
                    return len(self._values)

            cfg = json.loads('{"train": {"save_every": 1000, "batch_size": 64}}')
            hydra = Settings(ckpt_every=300, lr=0.1)
            Trainer(TrainerConfig()).fit(3)
            print("ckpt", hydra["ckpt_every"])
        """)
        self.assertEqual(code, 0, err)
        self.assertEqual(out.split(), ["eval", "2", "log", "2", "save", "2", "ckpt", "2"])
        clamps = sorted((e["what"], e["original"], e["value"], e["kind"]) for e in self.events("clamp"))
        self.assertEqual(clamps, [("cfg['train']['save_every']", 1000, 2, "interval"),
                                  ("hydra['ckpt_every']", 300, 2, "interval"),
                                  ("self.config.eval_interval", 250, 2, "interval"),
                                  ("self.log_every", 100, 2, "interval")])


def shard(suite, index, count):
    """Every `count`th test from the `index`th (1-based), so that each of the image's runs of
    the suite stays short (tests/jobs/harness_selftest_*)."""
    tests = []

    def flatten(group):
        for test in group:
            if isinstance(test, unittest.TestSuite):
                flatten(test)
            else:
                tests.append(test)
    flatten(suite)
    return unittest.TestSuite(t for i, t in enumerate(tests) if i % count == index - 1)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--shard":
        index, count = (int(n) for n in sys.argv[2].split("/"))
        suite = shard(unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__]), index, count)
        sys.exit(not unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful())
    unittest.main()
