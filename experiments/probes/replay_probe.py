"""Replays a probe's iosim trace: runs a trace writer script (beside this file) with its arguments,
then `iosim replay` of its output under a profile with a cold L2, and returns the first kernel's
JSON object. Shared by the probes' *_compare.py scripts."""
import json, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def replay_kernel(iosim, profile, writer, *args):
    trace = subprocess.run([sys.executable, os.path.join(HERE, writer), *map(str, args)], check=True,
                           capture_output=True, text=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False) as f:
        f.write(trace)
        path = f.name
    try:
        out = subprocess.run([iosim, "replay", path, "--profile", profile, "--cold-l2", "--json"], check=True,
                             capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    return json.loads(out)["kernels"][0]
