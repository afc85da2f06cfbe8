"""Tests of emulator/check/scan.py, the code scanner Preflight runs in the image's interpreter.

Each test runs the scanner as Preflight does (`python3 -I -S -B scan.py < request.json`) with
the interpreter running the tests, so running them with another Python checks that version:

    python3 tests/check/test_scan.py
    /path/to/python3.6 tests/check/test_scan.py -v

Standard library only; one scanner run per test class keeps them under a few seconds."""

import json
import os
import subprocess
import sys
import textwrap
import unittest

SCANNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "emulator", "check",
                       "scan.py")


def scan(files, entry=None):
    """The scanner's output for files, a list of (path, source) pairs."""
    request = {"files": [{"path": path, "text": textwrap.dedent(text) if isinstance(text, str) else text}
                         for path, text in files],
               "entry": entry}
    run = subprocess.run([sys.executable, "-I", "-S", "-B", SCANNER],
                         input=json.dumps(request).encode("utf-8"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    if run.returncode != 0:
        raise AssertionError("scan.py exited %d: %s"
                             % (run.returncode, run.stderr.decode("utf-8", "replace")))
    return json.loads(run.stdout.decode("ascii"))  # ASCII whatever the image's locale


def scan_one(text, path="train.py"):
    return scan([(path, text)])["files"][0]


def entry_parser(text, script="train.py", path="train.py"):
    return scan([(path, text)], {"script": script, "args": []})["argparse"]


def by_line(items):
    return dict((item["line"], item) for item in items)


class SyntaxErrorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.result = scan([
            ("bad.py", "import os\ndef f(:\n    pass\n"),
            ("nul.py", "x = 1\ny = 2\0\n"),
            ("good.py", "import os\nname = '\u00fcber'\n"),
        ])
        cls.files = dict((f["path"], f) for f in cls.result["files"])

    def test_reports_the_python_that_parsed(self):
        self.assertEqual(self.result["python"], "%d.%d.%d" % sys.version_info[:3])

    def test_syntax_error_has_line_column_and_message(self):
        bad = self.files["bad.py"]
        self.assertEqual((bad["syntax_error"]["line"], bad["syntax_error"]["column"]), (2, 7))
        self.assertTrue(bad["syntax_error"]["message"])
        self.assertEqual(bad["imports"], [])

    def test_null_byte_is_a_syntax_error_where_it_is(self):
        problem = self.files["nul.py"]["syntax_error"]
        self.assertEqual((problem["line"], problem["column"]), (2, 6))
        self.assertIn("null bytes", problem["message"])

    def test_other_files_parse(self):
        good = self.files["good.py"]
        self.assertIsNone(good["syntax_error"])
        self.assertEqual([i["module"] for i in good["imports"]], ["os"])
        self.assertNotIn("error", good)


class ImportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.imports = by_line(scan_one("""\
            import os
            from a.b import c, d
            from . import sibling
            from ..pkg.mod import thing
            try:
                import apex
            except ImportError:
                apex = None
            try:
                import horovod
            except (ValueError, ModuleNotFoundError):
                pass
            try:
                import wandb
            except ValueError:
                import mlflow
            try:
                try:
                    import deepspeed
                except ValueError:
                    pass
            except:
                pass
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                import pandas
            else:
                import polars
            import typing
            if typing.TYPE_CHECKING:
                import numpy
            if sys.version_info >= (3, 8):
                import importlib.metadata
            else:
                import importlib_metadata
            if sys.platform == "win32":
                import msvcrt
            def load():
                import yaml
                try:
                    def later():
                        import h5py
                except ImportError:
                    pass
            class Model:
                import scipy
            """)["imports"])

    def test_module_level_imports(self):
        self.assertEqual(self.imports[1]["module"], "os")
        self.assertEqual(self.imports[2]["module"], "a.b")
        for line in (1, 2):
            entry = self.imports[line]
            self.assertEqual((entry["guarded"], entry["level"], entry["scope"]), (False, 0, "module"))

    def test_imports_that_may_not_run_are_conditional(self):
        imports = scan_one(textwrap.dedent("""\
            import torch
            if args.wandb:
                import wandb
            else:
                import csv
            for name in plugins:
                import plugin_a
            if __name__ == "__main__":
                import numpy
            """))["imports"]
        self.assertEqual([(i["module"], i["conditional"]) for i in imports],
                         [("torch", False), ("wandb", True), ("csv", True), ("plugin_a", True),
                          ("numpy", False)])

    def test_one_entry_per_imported_module(self):
        result = scan_one("import os, torch.nn\n")["imports"]
        self.assertEqual([i["module"] for i in result], ["os", "torch.nn"])

    def test_relative_imports_have_a_level(self):
        self.assertEqual((self.imports[3]["module"], self.imports[3]["level"]), ("", 1))
        self.assertEqual((self.imports[4]["module"], self.imports[4]["level"]), ("pkg.mod", 2))

    def test_try_except_import_error_guards(self):
        self.assertTrue(self.imports[6]["guarded"])
        self.assertTrue(self.imports[10]["guarded"])  # a tuple with ModuleNotFoundError
        self.assertEqual(self.imports[6]["scope"], "module")

    def test_other_handlers_do_not_guard(self):
        self.assertFalse(self.imports[14]["guarded"])
        self.assertFalse(self.imports[16]["guarded"])  # in the handler itself

    def test_an_outer_bare_except_guards(self):
        self.assertTrue(self.imports[19]["guarded"])

    def test_type_checking_guards_its_body_only(self):
        self.assertTrue(self.imports[26]["guarded"])
        self.assertFalse(self.imports[28]["guarded"])
        self.assertTrue(self.imports[31]["guarded"])

    def test_version_and_platform_tests_guard_both_branches(self):
        self.assertTrue(self.imports[33]["guarded"])
        self.assertTrue(self.imports[35]["guarded"])
        self.assertTrue(self.imports[37]["guarded"])

    def test_function_and_class_scope(self):
        self.assertEqual((self.imports[39]["scope"], self.imports[39]["guarded"]), ("function", False))
        self.assertEqual(self.imports[46]["scope"], "function")

    def test_a_try_around_a_def_does_not_guard_its_body(self):
        self.assertFalse(self.imports[42]["guarded"])


class ImportFollowingTest(unittest.TestCase):
    """What Preflight needs to follow imports from the entry script through the job's files."""

    @classmethod
    def setUpClass(cls):
        result = scan_one("""\
            import importlib, runpy
            from contextlib import suppress
            from .pkg.mod import a, b
            exec(open("configurator.py").read())
            exec(open(config_file).read())
            m = importlib.import_module("models." + name)
            n = importlib.import_module(f"plugins.{x}")
            o = __import__("literal")
            p = importlib.import_module(name)
            runpy.run_path("tools/x.py")
            with suppress(ImportError):
                import fancy
            with open("x") as f:
                import other
            try:
                import tracker
            finally:
                import cleanup
            if __name__ == "__main__":
                import main_only
            else:
                import imported_only
            """)
        cls.imports = by_line(result["imports"])
        cls.dynamic = by_line(result["dynamic"])

    def test_from_imports_name_what_they_take(self):
        self.assertEqual(self.imports[3]["names"], ["a", "b"])
        self.assertEqual(self.imports[1]["names"], [])

    def test_try_and_with_blocks_may_not_run(self):
        self.assertEqual((self.imports[12]["conditional"], self.imports[12]["guarded"]), (True, True))
        self.assertEqual((self.imports[14]["conditional"], self.imports[14]["guarded"]), (True, False))
        self.assertTrue(self.imports[16]["conditional"])
        self.assertFalse(self.imports[18]["conditional"])  # finally always runs

    def test_the_main_guard_runs_only_as_the_script(self):
        self.assertEqual((self.imports[20]["main"], self.imports[20]["conditional"]), (True, False))
        self.assertEqual((self.imports[22]["main"], self.imports[22]["conditional"]), (False, True))
        self.assertFalse(self.imports[1]["main"])

    def test_dynamic_imports_with_their_literal_part(self):
        self.assertEqual(self.dynamic[4], {"line": 4, "file": "configurator.py"})
        self.assertNotIn(5, self.dynamic)  # a file only the run knows: the command names it
        self.assertEqual((self.dynamic[6]["module"], self.dynamic[6]["exact"]), ("models.", False))
        self.assertEqual((self.dynamic[7]["module"], self.dynamic[7]["exact"]), ("plugins.", False))
        self.assertEqual((self.dynamic[8]["module"], self.dynamic[8]["exact"]), ("literal", True))
        self.assertEqual((self.dynamic[9]["module"], self.dynamic[9]["exact"]), ("", False))
        self.assertEqual(self.dynamic[10], {"line": 10, "file": "tools/x.py"})


class EnvironmentTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        result = scan([
            ("train.py", """\
                import os
                from os import environ, getenv as env
                rank = os.environ["RANK"]
                data = os.environ.get("DATA_DIR")
                out = os.environ.get("OUT_DIR", "/tmp/out")
                seed = os.environ.get("SEED", default=0)
                world = os.getenv("WORLD_SIZE")
                local = os.getenv("LOCAL_RANK", "0")
                node = environ["NODE_RANK"]
                host = env("HOSTNAME")
                debug = "DEBUG" in os.environ
                user = os.environ.get("USER") or "nobody"
                try:
                    port = os.environ["PORT"]
                except KeyError:
                    port = 80
                key = "DYNAMIC"
                value = os.environ[key]
                os.environ["MASTER_ADDR"] = "localhost"
                os.environ.setdefault("MASTER_PORT", "29500")
                del os.environ["CUDA_VISIBLE_DEVICES"]
                master = os.environ["MASTER_ADDR"]
                """),
            ("dist.py", """\
                import os
                port = os.environ["MASTER_PORT"]
                token = os.environ["TOKEN"]
                os.environ.update({"NCCL_DEBUG": "INFO"}, OMP_NUM_THREADS="4")
                """),
            ("late.py", """\
                import os
                debug = os.environ["NCCL_DEBUG"]
                """),
        ])
        cls.files = dict((f["path"], f) for f in result["files"])
        cls.env = dict((read["name"], read) for read in cls.files["train.py"]["env"])

    def read(self, name):
        read = self.env[name]
        return read["how"], read["default"]

    def test_subscript_has_no_default(self):
        self.assertEqual(self.read("RANK"), ("subscript", False))
        self.assertEqual(self.env["RANK"]["line"], 3)
        self.assertEqual(self.read("NODE_RANK"), ("subscript", False))

    def test_get_has_a_default_only_with_a_second_argument(self):
        self.assertEqual(self.read("DATA_DIR"), ("get", False))
        self.assertEqual(self.read("OUT_DIR"), ("get", True))
        self.assertEqual(self.read("SEED"), ("get", True))

    def test_getenv_imported_or_not(self):
        self.assertEqual(self.read("WORLD_SIZE"), ("getenv", False))
        self.assertEqual(self.read("LOCAL_RANK"), ("getenv", True))
        self.assertEqual(self.read("HOSTNAME"), ("getenv", False))

    def test_membership_test_guards_itself(self):
        self.assertEqual(self.read("DEBUG"), ("in", True))

    def test_or_fallback_is_a_default(self):
        self.assertEqual(self.read("USER"), ("get", True))

    def test_try_except_key_error_guards(self):
        self.assertEqual(self.read("PORT"), ("subscript", False))
        self.assertTrue(self.env["PORT"]["guarded"])
        self.assertFalse(self.env["RANK"]["guarded"])

    def test_only_literal_names(self):
        self.assertNotIn("key", self.env)
        self.assertNotIn("DYNAMIC", self.env)

    def test_writes_are_not_reads(self):
        self.assertNotIn("CUDA_VISIBLE_DEVICES", self.env)

    def test_names_the_job_sets_are_dropped_in_every_file(self):
        self.assertNotIn("MASTER_ADDR", self.env)
        self.assertEqual([r["name"] for r in self.files["dist.py"]["env"]], ["TOKEN"])
        self.assertEqual(self.files["late.py"]["env"], [])


class GuardedEnvironmentTest(unittest.TestCase):
    """Reads that cannot fail because the code tests for the variable first."""

    @classmethod
    def setUpClass(cls):
        cls.env = scan_one("""\
            import os, sys
            if "WORLD_SIZE" in os.environ:
                world = int(os.environ["WORLD_SIZE"])
            else:
                world = int(os.environ["FALLBACK_A"])
            if "RANK" not in os.environ:
                rank = 0
            else:
                rank = int(os.environ["RANK"])
            if os.environ.get("LOCAL_RANK"):
                local = int(os.environ["LOCAL_RANK"])
            if os.getenv("NODE") is not None and os.environ["NODE"] != "0":
                pass
            tag = os.environ["TAG"] if "TAG" in os.environ else "none"
            debug = "DEBUG" in os.environ and os.environ["DEBUG"] == "1"
            quiet = "QUIET" not in os.environ or os.environ["QUIET"] == "0"

            def init_distributed():
                if "MASTER_ADDR" not in os.environ:
                    return False
                addr = os.environ["MASTER_ADDR"]
                try:
                    port = os.environ["MASTER_PORT"]
                except (KeyError, ValueError):
                    port = "29500"
                try:
                    job = os.environ["JOB"]
                except ValueError:
                    job = None
                return os.environ["WORLD_SIZE_B"]

            for name in ["a"]:
                if "SKIP" not in os.environ:
                    continue
                skip = os.environ["SKIP"]
            if "SLURM" in os.environ and "NODES" in os.environ:
                nodes = os.environ["NODES"] + os.environ["SLURM"] + os.environ["OTHER"]
            if "EXIT" not in os.environ:
                sys.exit("set EXIT")
            exit_code = os.environ["EXIT"]

            class Config:
                home = os.environ["CONFIG_HOME"]
            ddp = int(os.environ.get("DDP_RANK", -1)) != -1
            if ddp:
                ddp_rank = int(os.environ["DDP_RANK"])
            single = os.environ.get("SINGLE", "0") == "0"
            if not single:
                who = os.environ["SINGLE"]
            flag = os.environ.get("FLAG", -1) != -1
            flag = False
            if flag:
                lost = os.environ["FLAG"]
            """)["env"]

    def reads(self, name, how="subscript"):
        return [(r["line"], r["guarded"] or r["default"], r["scope"]) for r in self.env
                if r["name"] == name and r["how"] == how]

    def test_membership_guards_its_branch(self):
        self.assertEqual(self.reads("WORLD_SIZE"), [(3, True, "module")])
        self.assertEqual(self.reads("FALLBACK_A"), [(5, False, "module")])
        self.assertEqual(self.reads("RANK"), [(9, True, "module")], "the else of `not in`")

    def test_get_as_a_test_guards_and_cannot_fail(self):
        self.assertEqual(self.reads("LOCAL_RANK"), [(11, True, "module")])
        self.assertEqual(self.reads("LOCAL_RANK", "get"), [(10, True, "module")])
        self.assertEqual(self.reads("NODE"), [(12, True, "module")])
        self.assertEqual(self.reads("NODE", "getenv"), [(12, True, "module")])

    def test_conditional_expression_and_boolean_chains(self):
        self.assertEqual(self.reads("TAG"), [(14, True, "module")])
        self.assertEqual(self.reads("DEBUG"), [(15, True, "module")])
        self.assertEqual(self.reads("QUIET"), [(16, True, "module")])

    def test_early_return_guards_the_rest_of_the_block(self):
        self.assertEqual(self.reads("MASTER_ADDR"), [(21, True, "function")])
        self.assertEqual(self.reads("SKIP"), [(35, True, "module")])
        self.assertEqual(self.reads("EXIT"), [(40, True, "module")])

    def test_try_catching_key_error_guards(self):
        self.assertEqual(self.reads("MASTER_PORT"), [(23, True, "function")])
        self.assertEqual(self.reads("JOB"), [(27, False, "function")], "ValueError is no KeyError")

    def test_unguarded_reads_keep_their_scope(self):
        self.assertEqual(self.reads("WORLD_SIZE_B"), [(30, False, "function")])
        self.assertEqual(self.reads("OTHER"), [(37, False, "module")])
        self.assertEqual(self.reads("NODES"), [(37, True, "module")])
        self.assertEqual(self.reads("CONFIG_HOME"), [(43, False, "module")], "a class body runs on load")

    def test_a_default_compared_guards_through_the_variable_holding_the_test(self):
        self.assertEqual(self.reads("DDP_RANK"), [(46, True, "module")])
        self.assertEqual(self.reads("SINGLE"), [(49, True, "module")])
        self.assertEqual(self.reads("FLAG"), [(53, False, "module")], "the variable was reassigned")


class PathUseTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        paths = scan_one("""\
            import os, torch, pandas as pd
            from transformers import AutoModel
            frame = pd.read_csv("/home/ana/data/train.csv")
            torch.save({}, os.path.join("/home/ana/runs", "model.pt"))
            with open("/home/ana/log.txt", "w") as log:
                pass
            with open("/home/ana/labels.txt") as labels:
                pass
            model = AutoModel.from_pretrained("/home/ana/bert")
            os.makedirs("/home/ana/out", exist_ok=True)
            print("/home/ana/elsewhere")
            CONSTANT = "/home/ana/plain"
            """)["paths"]
        cls.uses = dict((p["value"], p["use"]) for p in paths)

    def test_what_the_call_does_with_the_path(self):
        self.assertEqual(self.uses, {
            "/home/ana/data/train.csv": "read", "/home/ana/runs": "write", "/home/ana/log.txt": "write",
            "/home/ana/labels.txt": "read", "/home/ana/bert": "model", "/home/ana/out": "write",
            "/home/ana/elsewhere": "", "/home/ana/plain": ""})


class PathTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.paths = scan_one(textwrap.dedent('''\
            """Reads /home/ana/data/mnist, the module docstring."""
            import argparse, os, re
            DATA = "/home/ana/data/mnist"
            WINDOWS = ["C:\\\\Users\\\\ana\\\\data", "D:/datasets/coco"]
            HOME = os.path.expanduser("~/datasets")
            OTHER = "~bob/shared/data"
            UP = "../data/train.csv"
            SCRATCH = os.path.join("/tmp/scratch", "run")
            SHM = "/dev/shm/cache"

            def load(user):
                """Loads /data/imagenet."""
                return [
                    "/data",
                    "https://example.com/a/b",
                    "/data/{}/train".format(user),
                    "/data/%s/train" % user,
                    f"/home/{user}/data",
                    "/data/my images/x",
                    "#!/usr/bin/python3",
                    LONG_PATH,
                    "relative/path",
                    re.compile("/api/v1/items"),
                    re.sub("/a/b", "", user),
                ]

            class Loader:
                """Caches under /var/cache/loader."""

            parser = argparse.ArgumentParser()
            parser.add_argument("--data", default="/mnt/data/train", help="for example /mnt/data/train")
            '''.replace("LONG_PATH", '"/data/%s"' % ("x" * 300))))["paths"]
        cls.values = [p["value"] for p in cls.paths]

    def test_paths_a_platform_would_not_have(self):
        self.assertEqual(self.values, [
            "/home/ana/data/mnist", "C:\\Users\\ana\\data", "D:/datasets/coco", "~/datasets",
            "~bob/shared/data", "../data/train.csv", "/tmp/scratch", "/dev/shm/cache",
            "/mnt/data/train"])

    def test_lines(self):
        self.assertEqual(self.paths[0]["line"], 3)
        self.assertEqual(self.paths[-1]["line"], 31)

    def test_an_argparse_default_names_its_option(self):
        self.assertEqual(self.paths[-1]["option"], "--data")
        self.assertIsNone(self.paths[0]["option"])


class PerformanceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        result = scan([
            ("tf1.py", """\
                import tensorflow as tf
                sess = tf.Session()
                init = tf.global_variables_initializer()
                for step in range(100):
                    x = tf.constant(step)
                    y = tf.reduce_mean(x)
                    opt = tf.train.AdamOptimizer(0.1)
                    sess.run([x, y])
                for epoch in range(3):
                    z = tf.compat.v1.placeholder(tf.float32)
                    for step in range(10):
                        sess.run(z)
                for step in range(10):
                    w = tf.ones([2])
                    print(step)
                for step in range(10):
                    def build():
                        return tf.zeros([2])
                    sess.run(init)
                """),
            ("data.py", """\
                import tensorflow as tf
                ds = tf.data.Dataset.range(10)
                a = ds.map(parse).batch(32)
                b = ds.batch(32).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
                c = ds.interleave(read)
                d = ds.interleave(read, num_parallel_calls=4)
                e = ds.map(parse, tf.data.AUTOTUNE)
                """),
            ("pool.py", """\
                import multiprocessing
                results = multiprocessing.Pool(4).map(work)
                """),
            ("torch_data.py", """\
                import torch
                from torch.utils.data import DataLoader
                a = DataLoader(dataset, batch_size=32, shuffle=True)
                b = torch.utils.data.DataLoader(dataset, batch_size=32, num_workers=0, sampler=sampler)
                c = data.DataLoader(dataset, num_workers=4, shuffle=True)
                d = DataLoader(dataset, **loader_options)
                e = DataLoader(dataset, 32, True, None, None, 2)
                f = DataLoader(val_set, batch_size=256)
                g = DataLoader(test_set, 64, False, None)
                h = DataLoader(dataset, 32, shuffle=sampler is None)
                """),
        ])
        cls.perf = dict((f["path"], [(p["rule"], p["line"], p["detail"]) for p in f["perf"]])
                        for f in result["files"])

    def test_graph_ops_in_a_loop_that_runs_a_session(self):
        ops = [p for p in self.perf["tf1.py"] if p[0] == "tf-op-in-loop"]
        self.assertEqual(ops, [
            ("tf-op-in-loop", 5, "tf.constant"),
            ("tf-op-in-loop", 6, "tf.reduce_mean"),
            ("tf-op-in-loop", 7, "tf.train.AdamOptimizer"),
            ("tf-op-in-loop", 10, "tf.compat.v1.placeholder"),  # the inner loop runs the session
        ])

    def test_map_before_batch(self):
        self.assertIn(("tf-map-before-batch", 3, "map before batch"), self.perf["data.py"])
        self.assertEqual(len([p for p in self.perf["data.py"] if p[0] == "tf-map-before-batch"]), 1)

    def test_map_and_interleave_without_parallel_calls(self):
        unparallel = [p for p in self.perf["data.py"] if p[0] == "tf-map-without-parallel-calls"]
        self.assertEqual(unparallel, [("tf-map-without-parallel-calls", 3, "map"),
                                      ("tf-map-without-parallel-calls", 5, "interleave")])

    def test_map_outside_tensorflow_code_is_not_reported(self):
        self.assertEqual(self.perf["pool.py"], [])

    def test_data_loader_without_workers(self):
        self.assertEqual(self.perf["torch_data.py"], [
            ("torch-dataloader-no-workers", 3, "num_workers"),
            ("torch-dataloader-no-workers", 4, "num_workers"),
            # f and g feed no training (no shuffle, no sampler): an evaluation's loader
            ("torch-dataloader-no-workers", 10, "num_workers")])


class ArgparseTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.parser = entry_parser("""\
            import argparse, pathlib

            def main():
                parser = argparse.ArgumentParser(description="MNIST", allow_abbrev=False)
                parser.add_argument("--epochs", "-e", type=int, default=14, help="epochs")
                parser.add_argument("--lr", type=float, required=True)
                parser.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
                parser.add_argument("--layers", nargs="+", type=int)
                parser.add_argument("--size", nargs=2, type=int)
                parser.add_argument("--save-model", action="store_true")
                parser.add_argument("--out", type=pathlib.Path, dest="output")
                parser.add_argument("--level", choices=range(3), action=CustomAction)
                group = parser.add_mutually_exclusive_group()
                group.add_argument("-v", "--verbose", action="count")
                parser.add_argument("data")
                parser.add_argument("extra", nargs=argparse.REMAINDER, type=lambda s: s)
                args, unknown = parser.parse_known_args()

            if __name__ == "__main__":
                main()
            """, script="./train.py")
        cls.options = dict((o["dest"], o) for o in cls.parser["options"])

    def test_parser(self):
        self.assertEqual(self.parser["file"], "train.py")
        self.assertFalse(self.parser["allow_abbrev"])
        self.assertTrue(self.parser["parse_known"])
        self.assertFalse(self.parser["dynamic"])

    def test_option(self):
        self.assertEqual(self.options["epochs"], {
            "line": 5, "flags": ["--epochs", "-e"], "dest": "epochs", "type": "int", "required": False,
            "choices": None, "nargs": None, "action": "store", "has_default": True, "default": None})

    def test_a_text_default_is_given(self):
        self.assertEqual(self.options["optimizer"]["default"], "sgd")
        self.assertIsNone(self.options["lr"]["default"])

    def test_required_choices_nargs_action(self):
        self.assertTrue(self.options["lr"]["required"])
        self.assertEqual(self.options["optimizer"]["choices"], ["sgd", "adam"])
        self.assertEqual((self.options["layers"]["nargs"], self.options["layers"]["type"]), ("+", "int"))
        self.assertEqual(self.options["size"]["nargs"], 2)
        self.assertEqual(self.options["save_model"]["action"], "store_true")

    def test_dest_and_type_names(self):
        self.assertEqual((self.options["output"]["flags"], self.options["output"]["type"]),
                         (["--out"], "Path"))
        self.assertEqual(self.options["verbose"]["action"], "count")  # added to a group

    def test_non_literal_choices_and_action(self):
        self.assertIsNone(self.options["level"]["choices"])
        self.assertEqual(self.options["level"]["action"], "custom")

    def test_positionals(self):
        self.assertEqual(self.parser["positionals"], [
            {"line": 15, "dest": "data", "nargs": None, "type": None, "choices": None},
            {"line": 16, "dest": "extra", "nargs": "...", "type": None, "choices": None}])


class EntryMarksTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.files = dict((f["path"], f) for f in scan([
            ("train.py", """\
                import argparse, torch
                def main():
                    parser = argparse.ArgumentParser()
                    model = Net().to("cuda:0" if torch.cuda.is_available() else "cpu")
                if "__main__" == __name__:
                    main()
                """),
            ("lib.py", """\
                from argparse import ArgumentParser
                def build():
                    if __name__ == "__main__":
                        pass
                    return ArgumentParser()
                """),
            ("eval.py", "device = 'cuda'\nif __name__ == '__main__':\n    print(device)\n")])["files"])

    def test_main_guard_at_module_level_only(self):
        self.assertTrue(self.files["train.py"]["main"])
        self.assertFalse(self.files["lib.py"]["main"])
        self.assertTrue(self.files["eval.py"]["main"])

    def test_argument_parser_built(self):
        self.assertTrue(self.files["train.py"]["parser"])
        self.assertTrue(self.files["lib.py"]["parser"])
        self.assertFalse(self.files["eval.py"]["parser"])

    def test_first_cuda_line(self):
        self.assertEqual(self.files["train.py"]["cuda"], 4)
        self.assertEqual(self.files["lib.py"]["cuda"], 0)
        self.assertEqual(self.files["eval.py"]["cuda"], 1)


class ArgparseEntryTest(unittest.TestCase):
    SOURCE = "import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--lr')\n"

    def test_no_entry_no_parser(self):
        self.assertIsNone(scan([("train.py", self.SOURCE)])["argparse"])

    def test_entry_not_among_the_files(self):
        self.assertIsNone(entry_parser(self.SOURCE, script="main.py"))

    def test_entry_in_a_folder(self):
        parser = entry_parser(self.SOURCE, script="src/train.py", path="src/train.py")
        self.assertEqual([o["flags"] for o in parser["options"]], [["--lr"]])
        self.assertTrue(parser["allow_abbrev"])
        self.assertFalse(parser["parse_known"])


class ArgparseDynamicTest(unittest.TestCase):
    CASES = {
        "subparsers": """\
            parser = argparse.ArgumentParser()
            commands = parser.add_subparsers(dest="command")
            commands.add_parser("train").add_argument("--lr")
            """,
        "loop": """\
            parser = argparse.ArgumentParser()
            for name in ("lr", "momentum"):
                parser.add_argument("--" + name, type=float)
            """,
        "literal flags in a loop": """\
            parser = argparse.ArgumentParser()
            for i in range(2):
                parser.add_argument("--lr")
            """,
        "starred flags": """\
            parser = argparse.ArgumentParser()
            parser.add_argument(*FLAGS, type=int)
            """,
        "two parsers": """\
            base = argparse.ArgumentParser(add_help=False)
            parser = argparse.ArgumentParser()
            """,
        "a parser handed to another module": """\
            parser = argparse.ArgumentParser()
            parser = Trainer.add_argparse_args(parser)
            """,
    }

    def test_dynamic(self):
        for name, source in sorted(self.CASES.items()):
            with self.subTest(name):
                self.assertTrue(entry_parser("import argparse\n" + textwrap.dedent(source))["dynamic"])

    def test_a_parser_handed_to_a_local_function_is_static(self):
        parser = entry_parser("""\
            import argparse
            def add_model_args(parser):
                parser.add_argument("--depth", type=int)
            parser = argparse.ArgumentParser()
            add_model_args(parser)
            """)
        self.assertFalse(parser["dynamic"])
        self.assertEqual(parser["options"][0]["dest"], "depth")


class RobustnessTest(unittest.TestCase):
    def test_a_file_that_fails_to_scan_does_not_break_the_others(self):
        result = scan([
            ("deep.py", "x = a" + ".b" * 3000 + "\n"),  # deeper than the interpreter's recursion limit
            ("odd.py", 42),
            ("ok.py", "import os\nx = os.environ['RANK']\n"),
        ])
        deep, odd, ok = result["files"]
        self.assertTrue(deep["error"].startswith("RecursionError: "))
        self.assertTrue(odd["error"].startswith("TypeError: "))
        self.assertEqual((deep["imports"], odd["env"]), ([], []))
        self.assertEqual([i["module"] for i in ok["imports"]], ["os"])
        self.assertEqual([e["name"] for e in ok["env"]], ["RANK"])

    def test_not_a_request(self):
        run = subprocess.run([sys.executable, "-I", "-S", "-B", SCANNER], input=b"[1, 2",
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(run.returncode, 2)
        self.assertIn(b"not a JSON object", run.stderr)


if __name__ == "__main__":
    unittest.main()
