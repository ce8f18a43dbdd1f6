"""The Python module `iosim` returns what the CLI prints for the same flags.

Run by ctest (tests/CMakeLists.txt) with PYTHONPATH at the built module:
    test_module.py --cli PATH/iosim --module-built ON|OFF
Exits 77 (ctest SKIP) with "SKIPPED: ..." when the module was not built.
"""
import argparse
import json
import subprocess
import sys
import unittest

SKIP = 77
ARGS = None


def cli_json(*flags):
    return subprocess.run([ARGS.cli, *flags], check=True, capture_output=True, text=True).stdout


def without_host_time(result):
    """The object less engine.host_seconds: the simulator's own wall time, different every run."""
    engine = {k: v for k, v in result["engine"].items() if k != "host_seconds"}
    return {**result, "engine": engine}


class ModuleMatchesCli(unittest.TestCase):
    def test_simulate_equals_cli_json_for_the_same_flags(self):
        got = iosim.simulate(algo="fa2", seq=512, heads=2, head_dim=64, causal=True, pass_="fwdbwd",
                             set={"sm.smem_per_block": "100KiB"})
        want = json.loads(cli_json("simulate", "--algo", "fa2", "--seq", "512", "--heads", "2",
                                   "--head-dim", "64", "--causal", "--pass", "fwdbwd",
                                   "--set", "sm.smem_per_block=100KiB", "--json"))
        self.assertEqual(without_host_time(got), without_host_time(want))
        self.assertGreater(got["dram"]["read_bytes"], 0)  # the engine ran (not --counts-only)

    def test_sweep_returns_one_dict_per_point_in_grid_order(self):
        rows = iosim.sweep(algo=["standard", "fa1"], seq="256:1024:x2", head_dim=64, counts_only=True)
        self.assertEqual([(r["arg.algo"], r["arg.seq"]) for r in rows],
                         [(a, s) for a in ("standard", "fa1") for s in ("256", "512", "1024")])
        want = [json.loads(line) for line in cli_json(
            "sweep", "--algo", "standard,fa1", "--seq", "256:1024:x2", "--head-dim", "64", "--counts-only",
            "--format", "jsonl").splitlines()]
        self.assertEqual(rows, want)

    def test_explore_equals_cli_json_for_the_same_flags(self):
        got = iosim.explore(algo="fa2", pass_="fwd", batch=1, heads=2, seq=512, head_dim=64, compiled_only=True)
        want = json.loads(cli_json("explore", "--algo", "fa2", "--pass", "fwd", "--batch", "1", "--heads", "2",
                                   "--seq", "512", "--head-dim", "64", "--compiled-only", "--format", "json"))
        self.assertEqual(got, want)
        self.assertGreater(len(got["candidates"]), 1)

    def test_bad_flag_raises_value_error_naming_it(self):
        with self.assertRaisesRegex(ValueError, "--no-such-flag"):
            iosim.simulate(no_such_flag=1)
        with self.assertRaisesRegex(ValueError, "--seq"):
            iosim.simulate(seq="many")

    def test_flags_the_module_sets_are_refused(self):
        with self.assertRaisesRegex(ValueError, "'format' is set by the module"):
            iosim.sweep(format="csv")

    def test_profiles_lists_every_profile_of_the_cli(self):
        names = [p["name"] for p in iosim.profiles()]
        self.assertEqual(names, [p["name"] for p in json.loads(cli_json("profiles", "--json"))])
        self.assertIn("a100-sxm4-40gb", names)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--module-built", required=True)
    ARGS, rest = parser.parse_known_args()
    if ARGS.module_built.upper() not in ("ON", "1", "TRUE", "YES"):
        print("SKIPPED: the Python module was not built (pybind11-dev not found, or IOSIM_WITH_PYTHON=OFF)")
        sys.exit(SKIP)
    import iosim  # noqa: E402  (a module that was built must import: no skip here)
    unittest.main(argv=[sys.argv[0], *rest], verbosity=1)
