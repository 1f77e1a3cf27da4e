#!/usr/bin/env python3
"""The JSON Schemas of schemas/ checked with a real validator (Debian's python3-jsonschema, draft 2020-12).

Every shipped scenario, profile and measurement file validates. Mutated files (a misspelled key, a string
where a number goes, an unknown enum value, ...) are refused by the schema and by trainsim (exit 2). And
for every scenario key, a set of probe values is given to both: what the schema refuses trainsim refuses,
and what trainsim refuses as a wrong type or bound of that key the schema refuses too.

usage: schemas_test.py SOURCE_DIR TRAINSIM_BINARY
"""
import copy
import csv
import glob
import io
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

try:
    import jsonschema
except ImportError:
    sys.exit("schemas_test: needs Debian's python3-jsonschema (scripts/install_packages.sh installs it)")

SOURCE, TRAINSIM = sys.argv[1], sys.argv[2]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def validator(name):
    schema = load(os.path.join(SOURCE, "schemas", name))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


SCENARIO = validator("scenario.schema.json")
PROFILE = validator("profile.schema.json")
MEASUREMENTS = validator("measurements.schema.json")


def errors(schema, document):
    return ["%s: %s" % (e.json_path, e.message) for e in schema.iter_errors(document)]


def relative(path):
    return os.path.relpath(path, SOURCE)


# --- Shipped files -------------------------------------------------------------------------------------
# Scenarios: every JSON file under scenarios/ but the profiles (hardware/), sweep specs (sweeps/) and
# validation case lists (validation/), which have shapes of their own; and calibrate's test scenario.
scenarios = [p for p in glob.glob(os.path.join(SOURCE, "scenarios", "**", "*.json"), recursive=True)
             if relative(p).split(os.sep)[1] not in ("hardware", "sweeps", "validation")]
scenarios.append(os.path.join(SOURCE, "calibrate", "tests", "data", "tiny-scenario.json"))
check(len(scenarios) >= 35, "only %d scenarios found" % len(scenarios))
profiles = glob.glob(os.path.join(SOURCE, "scenarios", "hardware", "*.json"))
check(len(profiles) >= 5, "only %d profiles found" % len(profiles))
# The profile names the scenario schema offers an editor are the shipped ones.
offered = SCENARIO.schema["$defs"]["hardware"]["properties"]["profile"]["examples"]
check(sorted(offered) == sorted(os.path.basename(p)[:-len(".json")] for p in profiles),
      "hardware.profile's examples %s are not the shipped profiles" % offered)
measurement_files = [p for p in glob.glob(os.path.join(SOURCE, "calibrate", "**", "*.json"), recursive=True)
                     if load(p).get("schema") == "trainsim-measurements/1"]
check(len(measurement_files) >= 2, "only %d measurement files found" % len(measurement_files))
for schema, paths in ((SCENARIO, scenarios), (PROFILE, profiles), (MEASUREMENTS, measurement_files)):
    for path in sorted(paths):
        for e in errors(schema, load(path)):
            failures.append("%s: %s" % (relative(path), e))


# --- trainsim on a document ------------------------------------------------------------------------------
def run_trainsim(document, scenario_name="schema-probe.json", profile=None):
    """trainsim run on `document` (and a profile document written as its file); (exit status, stderr)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, scenario_name)
        if profile is not None:
            profile_path = os.path.join(tmp, profile["name"] + ".json")
            with open(profile_path, "w", encoding="utf-8") as f:
                json.dump(profile, f)
            document = copy.deepcopy(document)
            document["hardware"]["profile"] = profile_path
        with open(path, "w", encoding="utf-8") as f:
            json.dump(document, f)
        done = subprocess.run([TRAINSIM, "run", path], capture_output=True, text=True, timeout=120)
        err = done.stderr.strip()
        return done.returncode, err[len("trainsim: "):] if err.startswith("trainsim: ") else err


# One GPU, two small layers: trainsim simulates it in milliseconds when it accepts it.
MINIMAL = {
    "model": {"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "seq_length": 32,
              "padded_vocab_size": 128},
    "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1},
    "training": {"micro_batch_size": 1, "global_batch_size": 1},
    "hardware": {"profile": "a100-80gb-selene"},
}
status, err = run_trainsim(MINIMAL)
check(status == 0 and not errors(SCENARIO, MINIMAL), "the minimal scenario: exit %d %s" % (status, err))
with_reference = dict(MINIMAL, **{"$schema": "../schemas/scenario.schema.json"})
status, err = run_trainsim(with_reference)
check(status == 0 and not errors(SCENARIO, with_reference), "a scenario with $schema: exit %d %s" % (status, err))


def mutated(base, path, value, rename=None):
    """`base` with the key at dotted `path` set to `value` (or renamed to `rename`)."""
    document = copy.deepcopy(base)
    *parents, key = path.split(".")
    at = document
    for p in parents:
        at = at.setdefault(p, {})
    if rename is not None:
        at[rename] = at.pop(key)
    else:
        at[key] = value
    return document


# --- Mutated files: refused by the schema and by trainsim ------------------------------------------------
korthikanti = load(os.path.join(SOURCE, "scenarios", "korthikanti-22b.json"))
scenario_mutations = [
    ("a misspelled key", mutated(korthikanti, "model.hidden_size", None, rename="hiden_size"),
     "model.hiden_size: unknown key"),
    ("a string where a number goes", mutated(korthikanti, "training.micro_batch_size", "4"),
     "training.micro_batch_size: expected a positive integer"),
    ("an unknown enum value", mutated(korthikanti, "training.recompute_granularity", "selectiv"),
     "training.recompute_granularity: expected one of"),
    ("a misspelled section", mutated(korthikanti, "trainig", {}), "trainig: unknown key"),
    ("a string where a boolean goes", mutated(korthikanti, "parallelism.sequence_parallel", "true"),
     "parallelism.sequence_parallel: expected a JSON boolean"),
    ("a number below its bound", mutated(korthikanti, "hardware.topology.oversubscription", 0.5),
     "hardware.topology.oversubscription: expected a number >= 1"),
    ("$schema inside a section", mutated(korthikanti, "model.$schema", "x"), "model.$schema: unknown key"),
    ("$schema not a string", mutated(korthikanti, "$schema", 1), "$schema: expected a string"),
]
for what, document, message in scenario_mutations:
    check(errors(SCENARIO, document), "scenario with %s: the schema accepts it" % what)
    status, err = run_trainsim(document)
    check(status == 2 and err.startswith(message) and "\n" not in err,
          "scenario with %s: trainsim exit %d, %r (expected exit 2, %r)" % (what, status, err, message))

h100 = load(os.path.join(SOURCE, "scenarios", "hardware", "h100-80gb-dgx.json"))
profile_mutations = [
    ("a misspelled key", mutated(h100, "gpu.hbm_GBps", None, rename="hbm_GBs"), "gpu.hbm_GBs is not a known key"),
    ("a string where a number goes", mutated(h100, "gpu.hbm_GBps.value", "3350"),
     "gpu.hbm_GBps.value must be a number"),
    ("an unknown kind", mutated(h100, "gpu.hbm_GBps.kind", "estimated"), "gpu.hbm_GBps.kind must be one of"),
    ("an efficiency above 1", mutated(h100, "compute.attention.score_efficiency.value", 1.5),
     "compute.attention.score_efficiency.value must be an efficiency in (0, 1]"),
]
for what, document, message in profile_mutations:
    check(errors(PROFILE, document), "profile with %s: the schema accepts it" % what)
    status, err = run_trainsim(MINIMAL, profile=document)
    check(status == 2 and ("profile h100-80gb-dgx: " + message) in err and "\n" not in err,
          "profile with %s: trainsim exit %d, %r (expected exit 2, %r)" % (what, status, err, message))

a100_measurements = load(os.path.join(SOURCE, "calibrate", "data", "a100-published.measurements.json"))
for what, document in (
        ("a misspelled key", mutated(a100_measurements, "descripton", "x")),
        ("an unknown kernel", {**a100_measurements, "kernels": [dict(a100_measurements["kernels"][0], kernel="gelu")]}),
        ("a string where a number goes", {**a100_measurements, "gemm": [dict(a100_measurements["gemm"][0], m="8192")]})):
    check(errors(MEASUREMENTS, document), "measurements with %s: the schema accepts it" % what)


# --- Every scenario key, probed on the schema and on trainsim ----------------------------------------------
def key_paths(schema):
    """Each key of each section of the scenario schema, as dotted paths."""
    defs = schema["$defs"]

    def resolve(node):
        while "$ref" in node:
            node = defs[node["$ref"].split("/")[-1]]
        return node

    out = []

    def walk(node, prefix):
        for key, sub in resolve(node).get("properties", {}).items():
            path = prefix + key
            if resolve(sub).get("type") == "object":
                walk(sub, path + ".")
            elif key != "$schema":
                out.append(path)

    walk(schema, "")
    return out


# MoE and MLA keys are read only in a model that has them (otherwise refused as not applying).
MOE = mutated(MINIMAL, "model.num_experts", 4)
MLA = mutated(MINIMAL, "model.multi_latent_attention", True)
PROBES = ["x", 1.5, True, None, 0, 2, [], {}]


def probe_key(path):
    """Each of PROBES at `path`: [(value, schema_refuses, trainsim's exit status, its error)].

    trainsim reads all eight in one process, a sweep with the key as its one axis: each point's document
    is the base with the value set at `path` (sim/config/overrides.cc; the same reader `run` gives a
    file), its row's error is what `run` prints after "trainsim: " (sim/sweep/point_runner.cc), and the
    status is the one `run` exits with for that kind of error (sim/cli/main.cc). One process per key
    instead of per value: ~820 sanitized starts and LeakSanitizer exit scans were 20 s of this test."""
    base = MOE if path.startswith("model.moe_") else MLA if path.split(".")[-1] in (
        "q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim") else MINIMAL
    with tempfile.TemporaryDirectory() as tmp:
        spec_path = os.path.join(tmp, "schema-probe.json")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump({"base": base, "axes": {path: PROBES}}, f)
        done = subprocess.run([TRAINSIM, "sweep", spec_path, "--jobs", "1", "--quiet"], capture_output=True,
                              text=True, timeout=120)
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    if done.returncode != 0 or len(rows) != len(PROBES):
        failures.append("%s: trainsim sweep exit %d, %d rows: %s" % (path, done.returncode, len(rows),
                                                                      done.stderr.strip()))
        return []
    out = []
    for value, row in zip(PROBES, rows):
        # The row's axis cell as sim/sweep/csv.cc value_text prints it: the rows come in PROBES' order.
        cell = ("" if value is None else value if isinstance(value, str)
                else json.dumps(value, separators=(",", ":")))
        check(row[path] == cell, "%s: row %r is not the probe %r" % (path, row[path], cell))
        document = mutated(base, path, value)
        # The key's own verdict: errors elsewhere (a section's required keys) are not the key's.
        schema_refuses = any(e.json_path.startswith("$." + path) or e.json_path == "$" + "".join(
            "." + p for p in path.split(".")[:-1]) for e in SCENARIO.iter_errors(document))
        err = row["error"]
        status = (0 if not err else 3 if err.startswith("simulation cannot finish: ") else
                  1 if err.startswith("internal error: ") else 2)
        out.append((value, schema_refuses, status, err))
    return out


keys = key_paths(SCENARIO.schema)
check(len(keys) > 90, "only %d scenario keys probed" % len(keys))
with ThreadPoolExecutor(max_workers=2) as pool:
    results = [(path, *r) for path, rs in zip(keys, pool.map(probe_key, keys)) for r in rs]
check(len(results) == len(keys) * len(PROBES),
      "%d of %d probes came back" % (len(results), len(keys) * len(PROBES)))
for path, value, schema_refuses, status, err in results:
    shown = "%s=%s" % (path, json.dumps(value))
    if schema_refuses:
        check(status == 2, "%s: the schema refuses it, trainsim accepts it (exit %d)" % (shown, status))
    elif status == 2 and (err.startswith(path + ": expected") or err.startswith(path + "[")):
        failures.append("%s: trainsim refuses it (%s), the schema accepts it" % (shown, err))
    check(status in (0, 2), "%s: trainsim exit %d: %s" % (shown, status, err))

print("schemas_test: %d scenarios, %d profiles, %d measurement files, %d scenario keys x %d probes"
      % (len(scenarios), len(profiles), len(measurement_files), len(keys), len(PROBES)))
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
