"""The comparison of benchmarks/gpu/compare.py: the kit's measurements on a GPU beside what
`preflight estimate --gpu` predicted, from files written here in the kit's and the estimate's
formats (no GPU, no PyTorch, no dry run): which jobs it asks estimates of, each ratio, and the
errors over the models.

Usage: python3 tests/gpu_kit/test_compare.py"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMPARE = os.path.join(ROOT, 'benchmarks', 'gpu', 'compare.py')
MiB = 1 << 20


def kit_model(name, step_ms, reserved_mib, context_mib=600, status='measured'):
    return {'name': name, 'job': 'benchmarks/models/%s/job.yaml' % name, 'status': status, 'batch_size': 16,
            'step_seconds': {'median': step_ms / 1e3},
            'memory': {'max_reserved_bytes': reserved_mib * MiB,
                       'nvidia_smi_at_start': {'process_mib': context_mib}}}


def estimate(gpus):
    """`preflight estimate --json` of one job: {gpu: (typical step in ms, need in MiB[, need on
    that GPU in MiB])}; the first GPU's need is the platform's."""
    need = next(iter(gpus.values()))[1]
    projections = []
    for gpu, figures in gpus.items():
        ms = figures[0]
        projections.append({'gpu': gpu, 'compute_seconds': {},
                            'step_seconds': {'low': ms / 2e3, 'typical': ms / 1e3, 'high': ms / 5e2}})
        if len(figures) > 2:
            projections[-1]['memory_needed_bytes'] = figures[2] * MiB
    return {'estimate': {'gpu_memory': {'needed_bytes': need * MiB, 'available_bytes': 80 << 30}},
            'gpus': projections}


class Compare(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.work)

    def write(self, name, data):
        path = os.path.join(self.work, name)
        with open(path, 'w') as f:
            json.dump(data, f)
        return path

    def compare(self, *args):
        done = subprocess.run([sys.executable, COMPARE] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def results(self, name, gpu, models):
        return self.write(name, {'environment': {'gpu': {'name': gpu}, 'torch': '2.11.0',
                                                 'nvidia_smi': {'driver': '580.1'}},
                                 'models': models})

    def test_each_prediction_is_set_beside_its_measurement(self):
        h200 = self.results('h200.json', 'NVIDIA H200', [
            kit_model('resnet18', 10.0, 400), kit_model('dcgan', 8.0, 100),
            kit_model('vgg11', 1.0, 100, status='failed')])
        h100 = self.results('h100.json', 'NVIDIA H100 80GB HBM3', [kit_model('resnet18', 12.0, 400)])
        # On the H100 its own need (its framework's bytes counted), else the platform GPU's.
        both = {'NVIDIA H200': (12.0, 1100), 'NVIDIA H100 80GB HBM3': (12.0, 1100, 1000)}
        self.write('resnet18.json', estimate(both))
        self.write('dcgan.json', estimate({'NVIDIA H200': (4.0, 700)}))

        # The estimates to make: each measured job once, with every GPU it was measured on.
        self.assertEqual(self.compare('jobs', h200, h100).splitlines(), [
            'benchmarks/models/resnet18/job.yaml\tNVIDIA H200\tNVIDIA H100 80GB HBM3',
            'benchmarks/models/dcgan/job.yaml\tNVIDIA H200'])

        section = self.compare('section', self.work, 'commit abc', h200, h100)
        self.assertTrue(section.startswith('## The GPU check kit against'), section)
        rows = [line for line in section.splitlines() if line.startswith(('| resnet18', '| dcgan'))]
        # Step 12 against 10 ms; memory 1100 against 400 reserved + 600 of context.
        self.assertEqual(rows, [
            '| resnet18 (fitted) | 16 | 10.00 ms | 12.00 ms (6.00–24.00) | 1.20× | 1000 MiB | 1100 MiB '
            '| 1.10× |',
            '| dcgan | 16 | 8.00 ms | 4.00 ms (2.00–8.00) | 0.50× | 700 MiB | 700 MiB | 1.00× |',
            '| resnet18 | 16 | 12.00 ms | 12.00 ms (6.00–24.00) | 1.00× | 1000 MiB | 1000 MiB | 1.00× |'])
        self.assertNotIn('vgg11', section)  # a model the kit could not measure has nothing to compare
        self.assertIn('- Step: mean absolute error 35%, largest 50% (0.50×), 0 of 2 within ±10%', section)
        self.assertIn('- Memory: mean absolute error 5%, largest 10% (1.10×), 2 of 2 within ±10%',
                      section)
        # ResNet-18 is among the models the GPU table was fitted to on the H200; dcgan is held back.
        self.assertIn('- Step, the models held back from the fit: mean absolute error 50%, '
                      'largest 50% (0.50×), 0 of 1 within ±10%', section)
        self.assertIn('- Step: mean absolute error 0%, largest 0% (1.00×), 1 of 1 within ±10%', section)

    def test_a_job_without_its_gpus_projection_stops_the_comparison(self):
        h200 = self.results('h200.json', 'NVIDIA H200', [kit_model('resnet18', 10.0, 400)])
        self.write('resnet18.json', estimate({'NVIDIA A100-SXM4-80GB': (12.0, 1100)}))
        done = subprocess.run([sys.executable, COMPARE, 'section', self.work, 'commit abc', h200],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn('resnet18: no projection on NVIDIA H200', done.stderr)


if __name__ == '__main__':
    unittest.main()
