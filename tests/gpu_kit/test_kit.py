"""The GPU check kit (benchmarks/gpu/kit.py) on the CPU, where the test suite can run it: the JSON
it writes for two small models (one warm-up and one measured step each), and how it fails: an
unknown model is bad usage before anything runs; a model that fails, one whose job needs a missing
torchvision, and one that outlasts its time are each recorded while the kit goes on with the
others. Needs PyTorch: tests/integration/gpu_kit.sh runs it inside the pytorch image (the job
tests/gpu_kit/job.yaml); on a host without PyTorch every case is skipped.

Usage: python3 tests/gpu_kit/test_kit.py"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KIT = os.path.join(ROOT, 'benchmarks', 'gpu', 'kit.py')
MODELS = os.path.join(ROOT, 'benchmarks', 'models')

try:
    import torch  # noqa: F401  (only whether it is there)
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def run_kit(*args):
    """The kit's exit status, its output and its JSON report (None when it wrote none)."""
    out = os.path.join(run_kit.work, 'report.json')
    if os.path.exists(out):
        os.remove(out)
    done = subprocess.run([sys.executable, KIT, '--device', 'cpu', '--warmup', '1', '--steps', '1',
                           '--out', out] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120)
    report = None
    if os.path.exists(out):
        with open(out) as text:
            report = json.load(text)
    return done.returncode, done.stdout + done.stderr, report


def write_job(models, name, code, command):
    os.makedirs(os.path.join(models, name))
    with open(os.path.join(models, name, 'job.yaml'), 'w') as job:
        job.write(f'name: {name}\ncode: {code}\ncommand: {command}\n'
                  'environment_variables: {OMP_NUM_THREADS: "1"}\n')


@unittest.skipUnless(HAVE_TORCH, 'no PyTorch here (tests/integration/gpu_kit.sh runs this in the image)')
class GpuKitOnTheCpu(unittest.TestCase):
    def setUp(self):
        run_kit.work = tempfile.mkdtemp(prefix='gpu-kit-test-')
        self.addCleanup(shutil.rmtree, run_kit.work)

    def test_report_of_two_models(self):
        status, output, report = run_kit('--models', 'lstm_lm,dcgan')
        self.assertEqual(status, 0, output)
        self.assertEqual(report['schema'], 'preflight.gpu_kit/v1')
        self.assertEqual(report['device'], 'cpu')
        self.assertEqual(report['settings']['steps'], 1)
        self.assertEqual(report['environment']['status'], 'probed')
        self.assertEqual(report['environment']['torch'], torch.__version__)
        self.assertIn('tf32', report['environment'])
        self.assertEqual([m['name'] for m in report['models']], ['lstm_lm', 'dcgan'])
        for model, batch in zip(report['models'], (20, 16)):
            self.assertEqual(model['status'], 'measured', model)
            self.assertEqual(model['batch_size'], batch)
            self.assertEqual(model['precision'], 'fp32')
            self.assertGreater(model['parameters'], 0)
            self.assertEqual(len(model['step_seconds']['all']), 1)
            self.assertGreater(model['step_seconds']['median'], 0)
            self.assertNotIn('memory', model)  # no memory figures on the CPU
            # The profiled step's operators; kernels only on a GPU.
            self.assertGreater(model['launches']['top_level_operators'], 0, model['launches'])
            self.assertGreaterEqual(model['launches']['operators'], model['launches']['top_level_operators'])
            self.assertNotIn('kernels', model['launches'])
            self.assertEqual(model['job'], os.path.join('benchmarks', 'models', model['name'], 'job.yaml'))
        self.assertIn('lstm_lm: ', output)
        self.assertIn('ms a step', output)
        self.assertGreater(report['wall_seconds'], 0)

    def test_unknown_model_is_bad_usage(self):
        status, output, report = run_kit('--models', 'lstm_lm,no_such_model')
        self.assertEqual(status, 2, output)
        self.assertIn("unknown model 'no_such_model'", output)
        self.assertIsNone(report)

    def test_failures_are_recorded_and_the_kit_goes_on(self):
        models = os.path.join(run_kit.work, 'models')
        lstm = os.path.relpath(os.path.join(MODELS, 'lstm_lm'), os.path.join(models, 'x'))
        # A batch of 0: the DataLoader refuses it once the child has started.
        write_job(models, 'a_broken', lstm, 'python train.py --batch-size 0')
        # A classifier whose train.py cannot import torchvision.
        write_job(models, 'b_no_torchvision', '../classifier', 'python train.py --arch resnet18')
        os.makedirs(os.path.join(models, 'classifier'))
        with open(os.path.join(models, 'classifier', 'train.py'), 'w') as script:
            script.write("raise ImportError(\"No module named 'torchvision'\", name='torchvision')\n")
        write_job(models, 'c_unknown_script', '.', 'python other.py')
        status, output, report = run_kit('--models-dir', models)
        self.assertEqual(status, 1, output)
        by_name = {m['name']: m for m in report['models']}
        self.assertEqual(list(by_name), ['a_broken', 'b_no_torchvision', 'c_unknown_script'])
        self.assertEqual(by_name['a_broken']['status'], 'failed')
        self.assertIn('ValueError', by_name['a_broken']['error'])
        self.assertIn('batch_size', by_name['a_broken']['error'])
        self.assertEqual(by_name['b_no_torchvision']['status'], 'skipped')
        self.assertIn('torchvision is not installed', by_name['b_no_torchvision']['reason'])
        self.assertEqual(by_name['c_unknown_script']['status'], 'skipped')
        self.assertIn('does not know how to train', by_name['c_unknown_script']['reason'])
        self.assertIn('1 failed (a_broken)', output)

    def test_a_model_that_outlasts_its_time_is_stopped(self):
        status, output, report = run_kit('--models', 'lstm_lm', '--model-limit', '0.5')
        self.assertEqual(status, 1, output)
        self.assertEqual(report['models'][0]['status'], 'timeout')
        self.assertIn('stopped after', report['models'][0]['error'])


if __name__ == '__main__':
    unittest.main(verbosity=2)
