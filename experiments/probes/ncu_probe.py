"""What ncu_probe.sh left in OUT, per profiled launch in launch order: the probe's own line
(configs.csv, a dict) and Nsight Compute's metric values (a function of the metric's name)."""
import csv
import os


def launches(out):
    cfg = list(csv.DictReader(open(os.path.join(out, "configs.csv"))))
    rows = [r for r in csv.DictReader(l for l in open(os.path.join(out, "ncu.csv")) if l.startswith('"'))
            if r.get("Kernel Name")]
    return [(c, lambda k, r=r: float(r[k].replace(",", ""))) for c, r in zip(cfg, rows)]
