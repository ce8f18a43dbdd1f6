"""The measured points of Figure 2 (points.txt): parsed once for run.py (simulates them), measured.py
(joins the GPU's raw files with those simulations) and, through the results CSVs, plot.py.

points.txt has experiments/validation/grid.txt's format, the panel in the SET field:
  PANEL;NAME;KERNEL-REGEX;LAUNCHES;flags shared by `iosim simulate` and `iosim-kernels bench`
so that experiments/validation/run_grid.sh measures it (measure.sh). LAUNCHES: the kernels of one
pass, COUNT or COUNT@SKIP, as in the grid.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
POINTS_FILE = os.path.join(HERE, "points.txt")
PANELS = ("left", "middle", "right")
# The profiles simulated (run.py), by the short name the files use.
PROFILES = {"a100": "a100-sxm4-40gb", "h100": "h100-sxm5-80gb", "h200": "h200-sxm-141gb"}


class Point:
    def __init__(self, panel, name, regex, launches, flags, where):
        if panel not in PANELS:
            raise ValueError(f"{where}: panel '{panel}' is not one of {', '.join(PANELS)}")
        self.panel, self.name, self.regex, self.flags = panel, name, regex, flags
        count = launches.split("@")[0]
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"{where}: LAUNCHES '{launches}' is not COUNT or COUNT@SKIP with COUNT >= 1")
        self.launches = int(count)
        self.options = parse_flags(flags, where)

    def module_kwargs(self):
        """The flags as keyword arguments of the Python module's iosim.sweep (--pass -> pass_)."""
        return {("pass_" if k == "pass" else k.replace("-", "_")): v for k, v in self.options.items()}


def parse_flags(flags, where):
    """'--algo fa1 --causal --block-m 64' -> {'algo': 'fa1', 'causal': True, 'block-m': 64}."""
    words, out, i = flags.split(), {}, 0
    while i < len(words):
        w = words[i]
        if not w.startswith("--"):
            raise ValueError(f"{where}: '{w}' is not a --flag")
        if i + 1 < len(words) and not words[i + 1].startswith("--"):
            out[w[2:]] = number(words[i + 1])
            i += 2
        else:
            out[w[2:]] = True
            i += 1
    return out


def number(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_points(path=POINTS_FILE):
    out, names = [], set()
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            where = f"{path}:{n}"
            fields = [x.strip() for x in line.rstrip("\n").split(";")]
            if len(fields) != 5:
                raise ValueError(f"{where}: {len(fields)} fields, expected PANEL;NAME;KERNEL-REGEX;LAUNCHES;FLAGS")
            p = Point(*fields, where)
            if p.name in names:
                raise ValueError(f"{where}: point name '{p.name}' given twice")
            names.add(p.name)
            out.append(p)
    return out
