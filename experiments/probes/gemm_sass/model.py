#!/usr/bin/env python3
"""Replica of sim/schedule/warp_programs.cpp gemm_chunk / gemm_epilogue / emit_gemm_operand_copy
instruction counts by pipe (fp16, elem 2)."""
import collections, math
def cdiv(a, b): return -(-a // b)
def warps_m(tm): return tm // 16 if tm // 16 < 4 else 4
def unroll(tm, tn, tk, bkc): return 1 if (tm, tn, tk) == (128, 128, 64) and not bkc else 2

def copy(c, n, guarded):
    if guarded:
        c['alu'] += 20; c['fma'] += 10
        for k in range(n): c['alu'] += 11; c['fma'] += 3; c['global'] += 1
        return
    c['alu'] += 13; c['fma'] += 8
    for k in range(n): c['alu'] += 1 if k == 0 else 2; c['global'] += 1

def dims(tm, tn):
    wm = max(1, warps_m(tm)); wn = 8 // wm
    return max(1, tm // wm // 16), max(1, tn // wn // 8)

def one_barrier(tm, tn, tk, lay, tiles):
    return tiles > 1 and tm * tn <= (tm + tn) * tk and lay == 'kk'

def chunk(tm, tn, tk, lay, tiles=1, gA=False, gB=False):
    c = collections.Counter(); fm, fn = dims(tm, tn)
    c['alu'] += 30; c['fma'] += 12
    copy(c, cdiv(tm * tk * 2 // 16, 256), gA); copy(c, cdiv(tn * tk * 2 // 16, 256), gB)
    c['alu'] += 2; c['barrier'] += 1
    u = unroll(tm, tn, tk, lay == 'kk')
    for kk in range(tk // 16):
        if kk > 0 and kk % u == 0: c['alu'] += 2
        for _ in range(fm): c['fma'] += 1; c['alu'] += 2; c['smem'] += 1
        for _ in range(fn // 2):
            c['fma'] += 1; c['alu'] += 2; c['smem'] += 1
            c['tensor'] += 2 * fm
    if not one_barrier(tm, tn, tk, lay, tiles): c['barrier'] += 1
    c['alu'] += 2
    return c

def prologue(tm, tn, tk, gA=False, gB=False):
    c = collections.Counter()
    c['alu'] += 60; c['fma'] += 20
    for _ in range(4): c['mufu'] += 3; c['alu'] += 8; c['fma'] += 7
    c['alu'] += 30; c['fma'] += 12
    copy(c, cdiv(tm * tk * 2 // 16, 256), gA); copy(c, cdiv(tn * tk * 2 // 16, 256), gB)
    return c

def epilogue(tm, tn, tk, lay, tiles=1, last=True):
    c = collections.Counter(); fm, fn = dims(tm, tn); ob = one_barrier(tm, tn, tk, lay, tiles)
    c['fma'] += 6; c['alu'] += 8
    if ob: c['barrier'] += 1
    for _ in range(max(1, fm * fn // 2)): c['alu'] += 2; c['fma'] += 4; c['smem'] += 1
    c['barrier'] += 1
    for _ in range(cdiv(tm * tn // 8, 256)):
        c['fma'] += 4; c['alu'] += 8; c['smem'] += 1; c['global'] += 1
    if not ob and not last: c['barrier'] += 1
    c['alu'] += 4
    return c

if __name__ == '__main__':
    for t in [(128,128,32),(64,64,32),(128,64,32),(64,128,32),(128,128,64)]:
        for lay in ['kk','kn','nn']:
            ch = chunk(*t, lay); e = epilogue(*t, lay); p = prologue(*t)
            print(t, lay, sum(ch.values()), dict(ch), sum(e.values()), sum(p.values()))
