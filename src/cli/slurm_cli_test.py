#!/usr/bin/python3
"""The examples/slurm templates on a real one-node Slurm cluster (issue 24).

The cluster is the slurm_cluster CTest fixture's (scripts/slurm_cluster.sh start
IMGPIPE_SLURM_DIR); each test is skipped (exit status 77, the reason printed) when that
cluster did not start. Jobs are submitted with sbatch/srun and followed by polling
`squeue -h -j ID` until they leave the queue, then `scontrol show job` for their final
states. Every result is compared with one imgpipe process on the same data and options.
TemplatesTest needs no cluster: the sbatch scripts parse (bash -n), and the commands of
examples/k8s/convert-job.yaml, run here with its environment, write one process's bytes.

Run one test: slurm_cli_test.py test_convert_array (CTest passes the name); environment:
IMGPIPE_BINARY, IMGPIPE_SOURCE_DIR, IMGPIPE_TESTDATA_DIR, IMGPIPE_SLURM_DIR, TEST_TMPDIR.
Standard library only, plus python3-torch (train, extract) and PyYAML (which
python3-torch depends on; k8s) where present, else those tests are skipped.
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import unittest

BINARY = os.environ.get("IMGPIPE_BINARY", "imgpipe")
SOURCE = os.environ.get("IMGPIPE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
TESTDATA = os.environ.get("IMGPIPE_TESTDATA_DIR", os.path.join(SOURCE, "..", "shared", "testdata"))
CLUSTER = os.environ.get("IMGPIPE_SLURM_DIR", "")
TMP = os.environ.get("TEST_TMPDIR", "/tmp")
EXAMPLES = os.path.join(SOURCE, "examples", "slurm")
CLUSTER_SCRIPT = os.path.join(SOURCE, "scripts", "slurm_cluster.sh")
JOB_TIMEOUT_S = 300  # per wait; a job here takes seconds

# 3 train and 3 validation shards from 40 photos: 2 shards for each of 3 workers.
CONVERT_OPTIONS = "--split train=0.75,validation=0.25 --min-shards 3 --seed 5"


def cluster_environment():
    """The environment for Slurm's clients (SLURM_CONF of the fixture's cluster); raises
    SkipTest with the fixture's reason when no cluster runs."""
    if not CLUSTER:
        raise unittest.SkipTest("IMGPIPE_SLURM_DIR is not set (run under CTest)")
    env = dict(os.environ, SLURM_CONF=os.path.join(CLUSTER, "slurm.conf"))
    if subprocess.run(["bash", CLUSTER_SCRIPT, "status", CLUSTER], env=env).returncode != 0:
        reason_file = os.path.join(CLUSTER, "unavailable")
        reason = open(reason_file).read().strip() if os.path.exists(reason_file) else (
            "scripts/slurm_cluster.sh start " + CLUSTER + " did not leave a running cluster")
        raise unittest.SkipTest("no Slurm cluster: " + reason)
    return env


def python_has_torch():
    return subprocess.run(["/usr/bin/python3", "-c", "import torch, torchvision"],
                          capture_output=True).returncode == 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def output_files(folder, state_folder):
    """Every regular file under `folder` except the workers' `state_folder`: relative
    name -> bytes."""
    files = {}
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d != state_folder]
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, folder)] = f.read()
    return files


class TestBase(unittest.TestCase):
    """A fresh folder per test (self.dir), processes, the photos, and comparisons."""

    def setUp(self):
        self.env = dict(os.environ)
        self.dir = os.path.join(TMP, "slurm_cli_test", self._testMethodName)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(os.path.join(self.dir, "logs"))
        self.started = time.monotonic()

    def tearDown(self):
        print("%s: %.1f s" % (self._testMethodName, time.monotonic() - self.started))

    def run_tool(self, args, env=None, check=True, timeout=JOB_TIMEOUT_S):
        result = subprocess.run(args, env=env or self.env, capture_output=True, text=True,
                                timeout=timeout, cwd=self.dir)
        if check and result.returncode != 0:
            self.fail("%s exited with %d:\n%s%s" % (" ".join(args), result.returncode,
                                                    result.stdout, result.stderr))
        return result

    # -- Data --------------------------------------------------------------------------

    def photos(self):
        """40 real photos, 20 ants and 20 bees (hymenoptera/train), linked into class
        folders."""
        source = os.path.join(TESTDATA, "images", "hymenoptera", "train")
        if not os.path.isdir(source):
            self.skipTest("no test photos in " + source)
        root = os.path.join(self.dir, "photos")
        for label in ("ants", "bees"):
            os.makedirs(os.path.join(root, label))
            names = sorted(n for n in os.listdir(os.path.join(source, label)) if n.endswith(".jpg"))
            for name in names[:20]:
                os.symlink(os.path.join(source, label, name), os.path.join(root, label, name))
        return root

    def imgpipe(self, args, env=None):
        return self.run_tool([BINARY] + args, env=env)

    def convert_one_process(self, photos, output):
        self.imgpipe(["convert", "--input", photos, "--output", output, "--threads", "1"]
                     + CONVERT_OPTIONS.split())

    def assert_same_output(self, reference, output, state_folder, expected_names):
        want = output_files(reference, state_folder)
        got = output_files(output, state_folder)
        for name in expected_names:
            self.assertIn(name, want)
        self.assertEqual(sorted(got), sorted(want))
        for name in want:
            self.assertTrue(got[name] == want[name], "%s differs from one process's" % name)

    def assert_same_shards(self, reference, output):
        names = ["dataset.json", "labels.txt"] + [
            "%s-%05d-of-00003.tfrecord%s" % (split, i, ext)
            for split in ("train", "validation") for i in range(3) for ext in ("", ".idx")]
        self.assert_same_output(reference, output, ".imgpipe", names)


class SlurmTest(TestBase):
    """The examples/slurm templates on the fixture's cluster."""

    def setUp(self):
        env = cluster_environment()
        super().setUp()
        self.env = env
        self.jobs = []

    def tearDown(self):
        # Nothing of this test keeps running (a failed wait leaves jobs behind).
        if self.jobs:
            subprocess.run(["scancel"] + self.jobs, env=self.env, capture_output=True)
        super().tearDown()

    # -- Slurm -------------------------------------------------------------------------

    def sbatch(self, script, options, variables):
        """Submits `script` with sbatch `options` and `variables` added to the environment;
        returns the job id (an array's own id)."""
        env = dict(self.env, **variables)
        out = self.run_tool(["sbatch", "--parsable", "--chdir", self.dir] + options + [script],
                            env=env).stdout
        job = out.strip().split(";")[0]
        self.assertRegex(job, r"^\d+$", out)
        self.jobs.append(job)
        return job

    def wait(self, *jobs):
        """Polls squeue until none of `jobs` (array tasks included) is pending or running."""
        deadline = time.monotonic() + JOB_TIMEOUT_S
        ids = ",".join(jobs)
        while time.monotonic() < deadline:
            queued = self.run_tool(["squeue", "-h", "-j", ids, "-o", "%i %T %r"], check=False)
            if queued.returncode == 0 and not queued.stdout.strip():
                return
            time.sleep(0.5)
        self.fail("jobs %s still queued after %d s:\n%s\n%s" % (
            ids, JOB_TIMEOUT_S, queued.stdout, self.logs()))

    def states(self, job):
        """The final states of `job` from scontrol: {array task id or "": (state, exit
        code, reason)}."""
        out = self.run_tool(["scontrol", "-o", "show", "job", job]).stdout
        states = {}
        for line in out.splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            states[fields.get("ArrayTaskId", "")] = (
                fields["JobState"], fields["ExitCode"], fields.get("Reason", ""))
        return states

    def logs(self):
        text = ""
        for name in sorted(os.listdir(os.path.join(self.dir, "logs"))):
            with open(os.path.join(self.dir, "logs", name), errors="replace") as f:
                text += "----- %s\n%s" % (name, f.read()[-4000:])
        return text

    def assert_completed(self, job, tasks=("",)):
        states = self.states(job)
        expected = {task: ("COMPLETED", "0:0") for task in tasks}
        got = {task: states.get(task, ("missing",))[:2] for task in tasks}
        self.assertEqual(got, expected, "job %s: %s\n%s" % (job, states, self.logs()))

    def convert_variables(self, photos, output, imgpipe=BINARY):
        return {"INPUT": photos, "OUTPUT": output, "CONVERT_OPTIONS": CONVERT_OPTIONS,
                "IMGPIPE": imgpipe}

    def submit_convert(self, array, variables):
        """convert.sbatch as array `array`, then finalize.sbatch after it (afterok); the
        two job ids."""
        workers = self.sbatch(os.path.join(EXAMPLES, "convert.sbatch"),
                              ["--array=" + array, "--cpus-per-task=1",
                               "--output=logs/convert-%A_%a.out"], variables)
        finalize = self.sbatch(os.path.join(EXAMPLES, "finalize.sbatch"),
                               ["--dependency=afterok:" + workers, "--kill-on-invalid-dep=yes",
                                "--cpus-per-task=1", "--output=logs/finalize-%j.out"],
                               dict(variables, NUM_WORKERS="3"))
        return workers, finalize

    # -- Tests -------------------------------------------------------------------------

    def test_convert_array(self):
        """An array of 3 convert workers and a finalize job (afterok) write the bytes one
        process writes: every shard, index, dataset.json, labels.txt."""
        photos = self.photos()
        reference = os.path.join(self.dir, "one-process")
        self.convert_one_process(photos, reference)
        output = os.path.join(self.dir, "array")
        workers, finalize = self.submit_convert("0-2", self.convert_variables(photos, output))
        self.wait(workers, finalize)
        self.assert_completed(workers, ("0", "1", "2"))
        self.assert_completed(finalize)
        self.assert_same_shards(reference, output)

    def test_failed_task_cancels_finalize_and_a_rerun_completes(self):
        """Task 1 fails: finalize never runs, by hand it names worker 1; rerunning task 1
        alone (--array=1, NUM_WORKERS=3) and finalizing gives one process's bytes."""
        photos = self.photos()
        reference = os.path.join(self.dir, "one-process")
        self.convert_one_process(photos, reference)
        flag = os.path.join(self.dir, "FAIL")
        open(flag, "w").close()
        wrapper = os.path.join(self.dir, "imgpipe-fails-task-1")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\n'
                    'if [ "$SLURM_ARRAY_TASK_ID" = 1 ] && [ -e %s ]; then\n'
                    '  echo "task 1 fails on purpose" >&2; exit 3\n'
                    'fi\n'
                    'exec %s "$@"\n' % (flag, BINARY))
        os.chmod(wrapper, 0o755)
        output = os.path.join(self.dir, "array")
        variables = self.convert_variables(photos, output, imgpipe=wrapper)

        # 1. The array with a failing task: finalize is cancelled, never run.
        workers, finalize = self.submit_convert("0-2", variables)
        self.wait(workers, finalize)
        tasks = self.states(workers)
        self.assertEqual(tasks["0"][:2], ("COMPLETED", "0:0"), tasks)
        self.assertEqual(tasks["1"][:2], ("FAILED", "3:0"), tasks)
        self.assertEqual(tasks["2"][:2], ("COMPLETED", "0:0"), tasks)
        state, _, reason = self.states(finalize)[""]
        self.assertEqual(state, "CANCELLED", self.states(finalize))
        self.assertEqual(reason, "DependencyNeverSatisfied")
        self.assertFalse(os.path.exists(os.path.join(output, "dataset.json")))

        # 2. Finalize by hand fails, naming worker 1's shards and worker 1.
        by_hand = self.run_tool([BINARY, "convert", "--input", photos, "--output", output,
                                 "--finalize", "--num-workers", "3"] + CONVERT_OPTIONS.split(),
                                check=False)
        self.assertNotEqual(by_hand.returncode, 0)
        self.assertIn("train-00001-of-00003.tfrecord (worker 1)", by_hand.stderr)
        self.assertIn("rerun worker 1 of --num-workers 3", by_hand.stderr)
        self.assertFalse(os.path.exists(os.path.join(output, "dataset.json")))

        # 3. Task 1 again, alone (so SLURM_ARRAY_TASK_COUNT is 1: NUM_WORKERS says 3).
        os.remove(flag)
        workers, finalize = self.submit_convert("1", dict(variables, NUM_WORKERS="3"))
        self.wait(workers, finalize)
        self.assert_completed(workers, ("1",))
        self.assert_completed(finalize)
        self.assert_same_shards(reference, output)

    def training_data(self):
        """imgpipe synth's 4 classes x 16 images of 48 x 48, as shards (train 2,
        validation 2): train_cli_test's SmallTrainingSet."""
        images = os.path.join(self.dir, "images")
        shards = os.path.join(self.dir, "shards")
        self.imgpipe(["synth", "--out", images, "--classes", "4", "--per-class", "16",
                      "--size", "48x48", "--threads", "1"])
        self.imgpipe(["convert", "--input", images, "--output", shards, "--split",
                      "train=0.75,validation=0.25", "--min-shards", "2", "--threads", "1"])
        return shards

    def summary(self, stdout):
        """The rank 0 summary line of `imgpipe train --json` output."""
        for line in reversed(stdout.splitlines()):
            if '"event":"summary"' in line and '"rank":0' in line:
                return line
        self.fail("no summary in:\n" + stdout)

    def assert_same_parameters(self, a, b):
        """Every parameter and buffer of checkpoints `a` and `b` is equal, bit for bit
        (both ran 2 ranks adding the same halves in the same order)."""
        script = ("import sys, torch\n"
                  "a, b = (torch.load(p)['model'] for p in sys.argv[1:])\n"
                  "assert list(a) == list(b), (list(a), list(b))\n"
                  "bad = [k for k in a if not torch.equal(a[k], b[k])]\n"
                  "print(len(a), 'tensors;', 'differ:', bad)\n"
                  "sys.exit(1 if bad else 0)\n")
        result = self.run_tool(["/usr/bin/python3", "-c", script, a, b], check=False)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_srun_train_matches_local_processes(self):
        """`srun -n 2 imgpipe train` and train.sbatch (2 tasks) give the parameters of
        `imgpipe train --nproc 2` after the same 6 steps."""
        shards = self.training_data()
        options = ["--data", shards, "--model", "simple-cnn", "--no-augment", "--shuffle-buffer",
                   "0", "--image-size", "32", "--batch-size", "8", "--epochs", "1", "--lr",
                   "0.05", "--seed", "3", "--threads", "1", "--intra-op-threads", "1", "--json"]
        local = os.path.join(self.dir, "local")
        expected = self.summary(self.imgpipe(["train"] + options + ["--nproc", "2",
                                                                     "--checkpoint-dir", local]).stdout)

        # 1. srun straight from here: its own allocation of 2 tasks.
        direct = os.path.join(self.dir, "srun")
        env = dict(self.env, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
        run = self.run_tool(["srun", "--ntasks=2", "--cpus-per-task=1", "--kill-on-bad-exit=1",
                             BINARY, "train"] + options + ["--checkpoint-dir", direct], env=env)
        srun_summary = self.summary(run.stdout)

        # 2. train.sbatch on the CPU (--gres=none: this cluster has no GPUs).
        batch = os.path.join(self.dir, "sbatch")
        job = self.sbatch(os.path.join(EXAMPLES, "train.sbatch"),
                          ["--nodes=1", "--ntasks-per-node=2", "--cpus-per-task=1", "--gres=none",
                           "--output=logs/train-%j.out"],
                          {"DATA": shards, "CHECKPOINT_DIR": batch, "DEVICE": "cpu",
                           "IMGPIPE": BINARY, "MASTER_PORT": str(free_port()),
                           "TRAIN_OPTIONS": " ".join(options[2:])})
        self.wait(job)
        self.assert_completed(job)
        with open(os.path.join(self.dir, "logs", "train-%s.out" % job)) as f:
            batch_summary = self.summary(f.read())

        crc = re.compile(r'"parameters_crc32c":(\d+)')
        for got in (srun_summary, batch_summary):
            self.assertIn('"world_size":2', got)
            self.assertIn('"steps":6', got)
            self.assertEqual(crc.search(got).group(1), crc.search(expected).group(1), got)
        if python_has_torch():
            self.assert_same_parameters(os.path.join(local, "last.pt"), os.path.join(direct, "last.pt"))
            self.assert_same_parameters(os.path.join(local, "last.pt"), os.path.join(batch, "last.pt"))

    def test_extract_array(self):
        """An array of 2 extract workers and a finalize job write one process's .npy
        files and features.json."""
        if not python_has_torch():
            self.skipTest("/usr/bin/python3 has no torch/torchvision (for the model)")
        photos = self.photos()
        shards = os.path.join(self.dir, "shards")
        self.convert_one_process(photos, shards)
        model = os.path.join(self.dir, "resnet18.pt")
        self.run_tool(["/usr/bin/python3", "-c",
                       "import sys, torch, torchvision\n"
                       "torch.manual_seed(7)\n"
                       "m = torchvision.models.resnet18(num_classes=10).eval()\n"
                       "torch.jit.script(m).save(sys.argv[1])\n", model])
        options = "--image-size 64 --batch-size 8"
        reference = os.path.join(self.dir, "one-process")
        self.imgpipe(["extract", "--data", shards, "--model", model, "--out", reference,
                      "--threads", "1"] + options.split())
        output = os.path.join(self.dir, "array")
        variables = {"DATA": shards, "MODEL": model, "OUT": output, "EXTRACT_OPTIONS": options,
                     "IMGPIPE": BINARY}
        workers = self.sbatch(os.path.join(EXAMPLES, "extract.sbatch"),
                              ["--array=0-1", "--cpus-per-task=1", "--output=logs/extract-%A_%a.out"],
                              variables)
        finalize = self.sbatch(os.path.join(EXAMPLES, "finalize.sbatch"),
                               ["--dependency=afterok:" + workers, "--kill-on-invalid-dep=yes",
                                "--cpus-per-task=1", "--output=logs/finalize-%j.out"],
                               dict(variables, COMMAND="extract", NUM_WORKERS="2"))
        self.wait(workers, finalize)
        self.assert_completed(workers, ("0", "1"))
        self.assert_completed(finalize)
        names = ["features.json"] + ["%s-%05d.npy" % (kind, i) for kind in ("features", "ids", "labels")
                                     for i in range(6)]
        self.assert_same_output(reference, output, ".imgpipe-extract", names)


class TemplatesTest(TestBase):
    """The templates without a cluster: the Slurm scripts parse, and the commands of the
    Kubernetes convert Job, run here with the Job's environment, write one process's
    bytes."""

    def test_templates_parse(self):
        for name in ("convert.sbatch", "finalize.sbatch", "train.sbatch", "extract.sbatch"):
            result = subprocess.run(["bash", "-n", os.path.join(EXAMPLES, name)],
                                    capture_output=True, text=True)
            self.assertEqual(result.returncode, 0, name + ": " + result.stderr)

    def test_k8s_convert_commands(self):
        try:
            import yaml
        except ImportError:
            self.skipTest("no PyYAML (python3-yaml) to read examples/k8s/convert-job.yaml")
        with open(os.path.join(SOURCE, "examples", "k8s", "convert-job.yaml")) as f:
            jobs = {d["metadata"]["labels"]["step"]: d for d in yaml.safe_load_all(f)}
        self.assertEqual(jobs["convert"]["spec"]["completionMode"], "Indexed")
        os.makedirs(os.path.join(self.dir, "bin"))
        os.symlink(BINARY, os.path.join(self.dir, "bin", "imgpipe"))
        photos = self.photos()
        reference = os.path.join(self.dir, "one-process")
        self.convert_one_process(photos, reference)
        output = os.path.join(self.dir, "indexed")

        def run(job, index=None):
            container = job["spec"]["template"]["spec"]["containers"][0]
            env = dict(os.environ, PATH=os.path.join(self.dir, "bin") + ":" + os.environ["PATH"])
            env.update({e["name"]: e["value"] for e in container["env"]})
            env.update(INPUT=photos, OUTPUT=output, CONVERT_OPTIONS=CONVERT_OPTIONS, NUM_WORKERS="3")
            if index is not None:
                env["JOB_COMPLETION_INDEX"] = str(index)
            self.run_tool(container["command"] + container["args"], env=env)

        for index in range(3):
            run(jobs["convert"], index)
        run(jobs["finalize"])
        self.assert_same_shards(reference, output)


def main(names):
    loader = unittest.TestLoader()
    cases = (SlurmTest, TemplatesTest)
    suite = (unittest.TestSuite(c(n) for n in names for c in cases if hasattr(c, n)) if names
             else unittest.TestSuite(loader.loadTestsFromTestCase(c) for c in cases))
    if names and suite.countTestCases() != len(names):
        print("unknown test in: " + " ".join(names))
        return 2
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    if result.failures or result.errors:
        return 1
    if result.skipped and len(result.skipped) == result.testsRun:
        for test, reason in result.skipped:
            print("SKIPPED %s: %s" % (test, reason))
        return 77  # CTest's SKIP_RETURN_CODE
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
