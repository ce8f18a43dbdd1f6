#!/usr/bin/env python3
"""Check the validation grid and its calibration / held-out split (run by ctest).

Usage: experiments/validation/check_split.py [GRID] [--quiet]   (default: grid.txt beside this)

Fails (exit 1) when
  - a held-out line shares (algorithm, d, tile, FLOPs per head) with a calibration line
    (FLOPs per head: 4 d x (attended (query, key) pairs) forward, 2.5x that backward; causal
    pairs counted exactly, bottom-right aligned; block-sparse: x density), or shares
    (algorithm, d, N_q, N_k): the per-set sequence lengths are disjoint;
  - two lines have the same name or the same flags;
  - a tile is not in the FULL kernel menu (sim/schedule/kernel_menu.h: IOSIM_FA2_*_FULL,
    IOSIM_FA1_BLOCKS_FULL with FA1's shared-memory limit, IOSIM_GEMM_TILES_FULL), parsed from
    that file;
  - coverage is short: < 60 lines; an (algorithm, pass) without both sets or without d 64 and
    128; an algorithm with < 3 tiles; no causal / block-sparse / GQA / ragged-N line in an
    (algorithm, pass); FA1 with N > 4096 or B*H < 128;
  - grid.txt differs from what make_grid.py writes.
Prints the coverage table (counts by algorithm, pass, d, feature and set).
"""
import collections, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def parse_flags(flags):
    t = flags.split()
    out, i = {}, 0
    while i < len(t):
        k = t[i][2:]
        if i + 1 < len(t) and not t[i + 1].startswith("--"):
            out[k] = t[i + 1]
            i += 2
        else:
            out[k] = True
            i += 1
    return out


class Config:
    def __init__(self, st, name, regex, launches, flags):
        self.set, self.name, self.regex, self.launches, self.flags = st, name, regex, launches, flags
        f = parse_flags(flags)
        self.f = f
        self.algo = f.get("algo", "fa2")
        self.pas = f.get("pass", "fwd")
        self.d = int(f["head-dim"])
        self.batch = int(f.get("batch", 1))
        self.heads = int(f.get("heads", 1))
        self.kv_heads = int(f.get("kv-heads", self.heads))
        if "seq" in f:
            self.seq_q = self.seq_k = int(f["seq"])
        else:
            self.seq_q, self.seq_k = int(f["seq-q"]), int(f["seq-k"])
        self.causal = bool(f.get("causal", False))
        self.density = float(f.get("block-density", 1.0))
        if self.algo == "standard":
            tm, tn, tk = int(f.get("gemm-m", 128)), int(f.get("gemm-n", 128)), int(f.get("gemm-k", 32))
            self.tile = (tm, tn, tk)
            self.block_m, self.block_n = tm, tn
        elif self.algo == "fa3":  # the kernel's one tile (Fa3ForwardSchedule)
            self.block_m, self.block_n = int(f.get("block-m", 128)), int(f.get("block-n", 128))
            self.tile = (self.block_m, self.block_n)
        else:
            self.block_m, self.block_n = int(f["block-m"]), int(f["block-n"])
            self.tile = (self.block_m, self.block_n)

    def tile_label(self):
        return "x".join(str(x) for x in self.tile)

    def pairs(self):
        nq, nk = self.seq_q, self.seq_k
        if not self.causal:
            return nq * nk
        # row r sees keys c <= r + nk - nq (bottom-right aligned)
        total = 0
        off = nk - nq
        # sum over r of clamp(r + off + 1, 0, nk)
        for r in range(nq):
            total += min(nk, max(0, r + off + 1))
        return total

    def flops_per_head(self):
        f = 4.0 * self.d * self.pairs() * self.density
        return f * (2.5 if self.pas == "bwd" else 1.0)

    def features(self):
        out = []
        if self.causal:
            out.append("causal")
        if self.density < 1:
            out.append("block-sparse")
        if self.kv_heads != self.heads:
            out.append("GQA")
        if self.seq_q != self.seq_k:
            out.append("Nq!=Nk")
        if any(n % 128 for n in (self.seq_q, self.seq_k)):
            out.append("ragged N")
        return out


def read_grid(path):
    out = []
    for ln in open(path):
        if not ln.strip() or ln.startswith("#"):
            continue
        parts = [x.strip() for x in ln.rstrip("\n").split(";")]
        if len(parts) != 5:
            raise SystemExit(f"{path}: bad line (want SET;NAME;REGEX;LAUNCHES;FLAGS): {ln.strip()}")
        out.append(Config(*parts))
    return out


# ---------------------------------------------------------------- kernel menus (full)
def _macro_bodies(text):
    """#define NAME(...) body, with backslash continuations joined."""
    text = text.replace("\\\n", " ")
    return text


MENU_H = "sim/schedule/kernel_menu.h"  # the one list the kernels instantiate


def fa2_full_menu():
    block = _macro_bodies(open(os.path.join(ROOT, MENU_H)).read())
    menu = {}
    for pas, key in (("fwd", "FWD"), ("bwd", "BWD")):
        for d in (64, 128):
            mm = re.search(rf"#define IOSIM_FA2_{key}_MENU_D{d}_FULL\(X\)(.*)", block)
            body = mm.group(1)
            tiles = set()
            if "IOSIM_FA2_GRID_16" in body:
                tiles |= {(a, b) for a in (16, 32, 64, 128) for b in (16, 32, 64, 128)}
            for a, b in re.findall(rf"X\(\s*{d}\s*,\s*(\d+)\s*,\s*(\d+)\s*\)", body):
                tiles.add((int(a), int(b)))
            menu[(pas, d)] = tiles
    return menu


def fa1_full_menu():
    src = open(os.path.join(ROOT, MENU_H)).read()
    m = re.search(r"#define IOSIM_FA1_BLOCKS_FULL\(X\)(.*)", _macro_bodies(src))
    pairs = [(int(a), int(b)) for a, b in re.findall(r"X\((\d+),\s*(\d+)\)", m.group(1))]
    limit = int(re.search(r"kFa1MaxSmemBytes\s*=\s*(\d+)", src).group(1))

    def fwd(d, br, bc):  # fa1_forward_smem_bytes
        return (2 * bc + 2 * br) * (d + 8) * 2 + 2 * br * 4

    def bwd(d, br, bc):  # fa1_backward_smem_bytes
        return (2 * bc + 3 * br) * (d + 8) * 2 + 2 * br * (bc + 8) * 2 + br * (d + 4) * 4 + 3 * br * 4

    menu = {}
    for d in (64, 128):
        menu[("fwd", d)] = {p for p in pairs if fwd(d, *p) <= limit}
        menu[("bwd", d)] = {p for p in pairs if bwd(d, *p) <= limit}
    return menu


def gemm_full_menu():
    src = open(os.path.join(ROOT, MENU_H)).read()
    m = re.search(r"#define IOSIM_GEMM_TILES_FULL\(X\)(.*?)\n", src)
    return {tuple(int(x) for x in t) for t in re.findall(r"X\((\d+),\s*(\d+),\s*(\d+)\)", m.group(1))}


# ---------------------------------------------------------------- checks
def check(configs):
    errors = []
    err = errors.append
    cal = [c for c in configs if c.set == "calibration"]
    held = [c for c in configs if c.set == "heldout"]
    for c in configs:
        if c.set not in ("calibration", "heldout"):
            err(f"{c.name}: set '{c.set}' is neither calibration nor heldout")
    names = collections.Counter(c.name for c in configs)
    flags = collections.Counter(c.flags for c in configs)
    err_dups = [n for n, k in names.items() if k > 1] + [f for f, k in flags.items() if k > 1]
    for x in err_dups:
        err(f"duplicate: {x}")
    # The split.
    key = lambda c: (c.algo, c.d, c.tile, round(c.flops_per_head()))
    shape = lambda c: (c.algo, c.d, c.seq_q, c.seq_k)
    cal_keys = {key(c): c.name for c in cal}
    cal_shapes = {shape(c): c.name for c in cal}
    for c in held:
        if key(c) in cal_keys:
            err(f"held-out {c.name} shares (algorithm, d, tile, FLOPs/head) with calibration {cal_keys[key(c)]}")
        if shape(c) in cal_shapes:
            err(f"held-out {c.name} shares (algorithm, d, N_q, N_k) with calibration {cal_shapes[shape(c)]}")
    # Menus.
    fa2, fa1, gemm = fa2_full_menu(), fa1_full_menu(), gemm_full_menu()
    for c in configs:
        if c.algo == "fa2" and c.tile not in fa2[(c.pas, c.d)]:
            err(f"{c.name}: FA2 {c.pas} d{c.d} tile {c.tile_label()} not in the full menu")
        if c.algo == "fa2" and c.pas == "bwd" and c.density < 1 and c.tile not in fa2[("fwd", c.d)]:
            err(f"{c.name}: a block-sparse backward runs its forward on the same tile, not in the forward menu")
        if c.algo == "fa1" and c.tile not in fa1[(c.pas, c.d)]:
            err(f"{c.name}: FA1 {c.pas} d{c.d} tile {c.tile_label()} not in the full menu")
        if c.algo == "standard" and c.tile not in gemm:
            err(f"{c.name}: GEMM tile {c.tile_label()} not in the full menu")
        if c.algo == "fa1" and (max(c.seq_q, c.seq_k) > 4096 or c.batch * c.heads < 128):
            err(f"{c.name}: FA1 lines keep N <= 4096 and B*H >= 128")
        if c.heads % c.kv_heads:
            err(f"{c.name}: heads not divisible by kv-heads")
    # Coverage.
    if len(configs) < 60:
        err(f"only {len(configs)} configurations (want >= 60)")
    for algo in ("fa2", "fa1", "standard"):
        tiles = {c.tile for c in configs if c.algo == algo}
        if len(tiles) < 3:
            err(f"{algo}: only {len(tiles)} tiles")
        for pas in ("fwd", "bwd"):
            sub = [c for c in configs if c.algo == algo and c.pas == pas]
            for st in ("calibration", "heldout"):
                if not any(c.set == st for c in sub):
                    err(f"{algo} {pas}: no {st} line")
            for d in (64, 128):
                if not any(c.d == d for c in sub):
                    err(f"{algo} {pas}: no d={d} line")
            for st in ("calibration", "heldout"):
                for feat in ("causal", "block-sparse", "GQA", "ragged N", "Nq!=Nk"):
                    if not any(feat in c.features() for c in sub if c.set == st):
                        err(f"{algo} {pas} {st}: no {feat} line")
    ns = {n for c in configs for n in (c.seq_q, c.seq_k)}
    if min(ns) > 512 or max(ns) < 16384:
        err(f"N spans {min(ns)}..{max(ns)}, want 512..16384")
    return errors


def coverage(configs):
    out = []
    p = out.append
    p(f"{len(configs)} configurations: "
      f"{sum(c.set == 'calibration' for c in configs)} calibration, {sum(c.set == 'heldout' for c in configs)} held-out")
    p("| algorithm | pass | set | lines | d64 | d128 | causal | block-sparse | GQA | ragged N | Nq!=Nk | tiles | N | B*H |")
    p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for algo in ("fa2", "fa1", "standard"):
        for pas in ("fwd", "bwd"):
            for st in ("calibration", "heldout"):
                sub = [c for c in configs if c.algo == algo and c.pas == pas and c.set == st]
                feat = lambda f: sum(f in c.features() for c in sub)
                tiles = sorted({c.tile_label() for c in sub})
                ns = sorted({c.seq_q if c.seq_q == c.seq_k else f"{c.seq_q}/{c.seq_k}" for c in sub}, key=str)
                bh = sorted({c.batch * c.heads for c in sub})
                p(f"| {algo} | {pas} | {st} | {len(sub)} | {sum(c.d == 64 for c in sub)} | {sum(c.d == 128 for c in sub)} | "
                  f"{feat('causal')} | {feat('block-sparse')} | {feat('GQA')} | {feat('ragged N')} | {feat('Nq!=Nk')} | "
                  f"{' '.join(tiles)} | {' '.join(map(str, ns))} | {bh[0]}-{bh[-1]} |")
    return "\n".join(out)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quiet = "--quiet" in sys.argv
    path = args[0] if args else os.path.join(HERE, "grid.txt")
    configs = read_grid(path)
    errors = check(configs)
    if not args:  # the committed grid must be what the generator writes
        r = subprocess.run([sys.executable, os.path.join(HERE, "make_grid.py"), "--check", "--out", path],
                           capture_output=True, text=True)
        if r.returncode:
            errors.append(r.stdout.strip() or r.stderr.strip())
    if not quiet:
        print(coverage(configs))
    for e in errors:
        print("ERROR:", e)
    print(f"{path}: {'OK' if not errors else f'{len(errors)} error(s)'}")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
