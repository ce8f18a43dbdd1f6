"""`iosim replay --cold-l2` of a streaming schedule written by experiments/copy_trace.py: the predicted
seconds of its one kernel (stream_size_table.py, l2_write_table.py)."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def replay_seconds(iosim, profile, trace_args):
    """trace_args: copy_trace.py's arguments (BYTES CHUNK [MODE [ARG]])."""
    with tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False) as f:
        subprocess.run([sys.executable, os.path.join(HERE, "..", "copy_trace.py"), *trace_args], stdout=f, check=True)
    try:
        r = subprocess.run([iosim, "replay", f.name, "--profile", profile, "--cold-l2", "--json"],
                           capture_output=True, text=True, check=True)
    finally:
        os.unlink(f.name)
    return json.loads(r.stdout)["kernels"][0]["time"]["seconds"]
