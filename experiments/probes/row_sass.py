#!/usr/bin/env python3
"""Instruction counts of FA2's row kernels (fa2_bwd_preprocess_kernel, fa2_bwd_convert_dq_kernel) by
region of their SASS: the straight-line pieces between loops, and each loop's body (one trip). A
region is split at every backward branch's target and after the branch, so a piece runs once and a
body once per trip. Pipes as Nsight Compute counts them on sm_90 (experiments/probes/gemm_sass/
path.py's map: IMAD/VIADD/FFMA/FMUL/FADD/F2FP... fma, MUFU/I2F/F2I mufu, LDG/STG global, SHFL shfl),
`uniform` = uniform-datapath, branch and control opcodes (iosim's Pipe::uniform), alu the rest.
Usage: experiments/probes/row_sass.py fa2_rows.sass [FUNCTION-SUBSTRING]"""
import re, sys

INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\*")
FMA = {'FFMA', 'FMUL', 'FADD', 'IMAD', 'IMUL', 'HADD2', 'HFMA2', 'HMUL2', 'VIADD', 'F2FP'}
MUFU = {'MUFU', 'FCHK', 'I2F', 'F2I'}
GLOBAL = {'LDG', 'STG', 'LDGSTS', 'RED'}
UNIFORM_CONTROL = {'BRA', 'BSSY', 'BSYNC', 'EXIT', 'LDC', 'S2R', 'S2UR', 'NOP', 'DEPBAR', 'WARPSYNC', 'CS2R'}


def pipe(op):
    base = op.split('.')[0]
    if base in FMA: return 'fma'
    if base in MUFU: return 'mufu'
    if base in GLOBAL: return 'global'
    if base == 'SHFL': return 'shfl'
    if base.startswith('U') or base in UNIFORM_CONTROL: return 'uniform'
    return 'alu'


def functions(path):
    out, name, code = {}, None, []
    for line in open(path):
        if 'Function :' in line:
            if name: out[name] = code
            name, code = line.split('Function :')[1].strip(), []
            continue
        m = INSTR.match(line)
        if m and name:
            text = m.group(2).rstrip(' ;')
            if text.startswith('@!PT'): continue  # never issued
            op = re.match(r'(@!?U?P\w+\s+)?(\S+)', text).group(2)
            if op == 'BRA' and re.search(r'0x([0-9a-f]+)', text) and int(re.search(r'0x([0-9a-f]+)', text).group(1), 16) == int(m.group(1), 16):
                continue  # the trailing self-loop after EXIT: never reached
            out_text = (int(m.group(1), 16), op, text)
            code.append(out_text)
    if name: out[name] = code
    return out


def regions(code):
    cuts = set()
    for a, op, text in code:
        if op.startswith('BRA'):
            t = int(re.search(r'0x([0-9a-f]+)', text).group(1), 16)
            if t <= a:
                cuts.add(t)
                cuts.add(a + 16)
    addrs = [a for a, _, _ in code]
    starts = sorted({addrs[0]} | {c for c in cuts if c in set(addrs)})
    out = []
    for i, s in enumerate(starts):
        e = starts[i + 1] if i + 1 < len(starts) else addrs[-1] + 16
        ins = [(a, op, t) for a, op, t in code if s <= a < e]
        back = any(op.startswith('BRA') and int(re.search(r'0x([0-9a-f]+)', t).group(1), 16) == s and a >= s
                   for a, op, t in ins)
        out.append((s, e, back, ins))
    return out


def main():
    fns = functions(sys.argv[1])
    want = sys.argv[2] if len(sys.argv) > 2 else ''
    for name, code in fns.items():
        if want not in name: continue
        print(f"## {name}")
        print("| region | kind | total | fma | alu | mufu | shfl | global (LDG/STG) | uniform |")
        print("|---|---|---|---|---|---|---|---|---|")
        for s, e, back, ins in regions(code):
            c = {}
            for _, op, _ in ins:
                c[pipe(op)] = c.get(pipe(op), 0) + 1
            ldg = sum(1 for _, op, _ in ins if op.startswith('LDG'))
            stg = sum(1 for _, op, _ in ins if op.startswith('STG'))
            print(f"| {s:04x}-{e - 16:04x} | {'loop body (per trip)' if back else 'once'} | {len(ins)} | {c.get('fma', 0)} | "
                  f"{c.get('alu', 0)} | {c.get('mufu', 0)} | {c.get('shfl', 0)} | {c.get('global', 0)} ({ldg}/{stg}) | {c.get('uniform', 0)} |")
        print()


if __name__ == '__main__':
    main()
