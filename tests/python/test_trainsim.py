"""The Python module against the CLI: the same numbers, the same errors (run by ctest as python.trainsim)."""
import json
import os
import subprocess
import tempfile
import unittest

import trainsim

SOURCE = os.environ["TRAINSIM_SOURCE_DIR"]
BINARY = os.environ["TRAINSIM_BINARY"]
K22B = os.path.join(SOURCE, "scenarios", "korthikanti-22b.json")
# Under the sanitizers the interpreter is started with the ASan runtime preloaded (for the module); the
# sanitized CLI carries its own copy, and two copies in one process abort, so the CLI runs without it.
CLI_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def cli(args, **kwargs):
    return subprocess.run([BINARY, *args], env=CLI_ENV, capture_output=True, text=True, **kwargs)


def cli_json(*args):
    return json.loads(cli([*args, "--format", "json"], check=True).stdout)


class Run(unittest.TestCase):
    def test_path_gives_the_cli_json(self):
        self.assertEqual(trainsim.run(K22B), cli_json("run", K22B))

    def test_readme_line_prints_the_cli_number(self):
        # The README's one-liner, from the source tree as a user runs it.
        line = "import trainsim; print(trainsim.run('scenarios/korthikanti-22b.json')['iteration_time_s'])"
        env = dict(os.environ)
        py = subprocess.run(["/usr/bin/python3", "-c", line], cwd=SOURCE, env=env, check=True,
                            capture_output=True, text=True)
        self.assertEqual(float(py.stdout), cli_json("run", K22B)["iteration_time_s"])

    def test_dict_and_overrides_match_set(self):
        with open(K22B) as f:
            scenario = json.load(f)
        got = trainsim.run(scenario, overrides={"training.recompute_granularity": "selective",
                                                "model.num_layers": 12})
        want = cli_json("run", K22B, "--set", "training.recompute_granularity=selective",
                        "--set", "model.num_layers=12")
        self.assertEqual(got["iteration_time_s"], want["iteration_time_s"])
        self.assertEqual(got["peak_memory_bytes"], want["peak_memory_bytes"])

    def test_critical_path(self):
        got = trainsim.run(K22B, critical_path=True)
        self.assertEqual(got["critical_path"], cli_json("run", K22B, "--critical-path")["critical_path"])

    def test_bad_input_raises_the_one_line_message(self):
        with self.assertRaises(trainsim.InputError) as e:
            trainsim.run(K22B, overrides={"parallelism.tensor_model_parallel_size": 6})
        self.assertIsInstance(e.exception, ValueError)
        message = str(e.exception)
        self.assertNotIn("\n", message)
        refused = cli(["run", K22B, "--set", "parallelism.tensor_model_parallel_size=6"])
        self.assertEqual(refused.returncode, 2)
        self.assertEqual(refused.stderr.strip(), "trainsim: " + message)
        with self.assertRaises(trainsim.InputError):
            trainsim.run("/nonexistent/scenario.json")


class Sweep(unittest.TestCase):
    def test_rows_are_the_cli_csv_typed(self):
        spec = {"base": K22B, "axes": {"training.recompute_granularity": ["none", "selective"],
                                       "model.num_layers": [8, 12]}}
        rows = trainsim.sweep(spec, jobs=2)
        self.assertEqual(len(rows), 4)
        self.assertEqual(rows[0]["training.recompute_granularity"], "none")
        self.assertEqual(rows[1]["model.num_layers"], 12)
        self.assertIsInstance(rows[0]["fits_in_memory"], bool)
        self.assertIsNone(rows[0]["error"])
        for row in rows:
            want = cli_json("run", K22B, "--set",
                            "training.recompute_granularity=" + row["training.recompute_granularity"],
                            "--set", "model.num_layers=%d" % row["model.num_layers"])
            self.assertAlmostEqual(row["iteration_time_s"], want["iteration_time_s"], delta=1e-9 * want["iteration_time_s"])
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(spec, f)
        try:
            self.assertEqual(trainsim.sweep(f.name, jobs=1), rows)
        finally:
            os.unlink(f.name)

    def test_bad_sweep_raises(self):
        with self.assertRaises(trainsim.InputError):
            trainsim.sweep({"base": K22B, "axes": {"no.such_key": [1]}})


class WhatIf(unittest.TestCase):
    def test_matches_the_cli(self):
        sets = ["--set", "model.num_layers=8", "--set", "parallelism.pipeline_model_parallel_size=2",
                "--set", "training.global_batch_size=8"]
        got = trainsim.whatif(K22B, overrides={"model.num_layers": 8,
                                               "parallelism.pipeline_model_parallel_size": 2,
                                               "training.global_batch_size": 8}, jobs=2)
        want = cli_json("whatif", K22B, *sets, "--jobs", "2")
        self.assertEqual(got["sensitivities"], want["sensitivities"])


if __name__ == "__main__":
    unittest.main()
