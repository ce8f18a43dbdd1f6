"""Prints the README's table from this folder's raw outputs: FA3 beside our FA2
(bench.txt: iosim-fa3-bench 20) and cuDNN through PyTorch SDPA (sdpa-cudnn.txt:
sdpa_bench.py 20, the same device call), with issue 11's targets per row
(d = 128, N >= 4k: FA3 >= 1.4x FA2 and >= 0.9x cuDNN).
    python3 summarize.py
"""
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1]))  # experiments/
from fa3_results import targets_table  # noqa: E402

if __name__ == "__main__":
    print(targets_table(HERE))
