#!/usr/bin/env python3
"""Condensed skeleton of a per-function listing: basic blocks with op histograms, branches."""
import re,sys,collections
INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\*")
def load(path):
    code=[]
    for ln in open(path):
        m=INSTR.match(ln)
        if m: code.append((int(m.group(1),16), m.group(2).rstrip(' ;')))
    return code
def parse(t):
    m=re.match(r'(@!?U?P\w+\s+)?(\S+)\s*(.*)',t); return (m.group(1) or '').strip(),m.group(2),m.group(3)
if __name__=='__main__':
    code=load(sys.argv[1])
    targets=set()
    for a,t in code:
        p,op,args=parse(t)
        if op.split('.')[0] in('BRA','CALL') and '0x' in args:
            targets.add(int(re.search(r'0x([0-9a-f]+)',args).group(1),16))
    blk=[];start=None
    def flush(end):
        if blk:
            c=collections.Counter(parse(t)[1].split('.')[0] for a,t in blk if not t.startswith('@!PT'))
            keys=[k for k in ('HMMA','LDSM','LDGSTS','BAR','STSM','LDS','STG','STS','LDG','MUFU','I2F','F2I','LDL','STL','DEPBAR','F2FP') if c[k]]
            print(f"{blk[0][0]:05x}-{blk[-1][0]:05x} n={len(blk):4d} "+' '.join(f"{k}{c[k]}" for k in keys)+ ("  | "+blk[-1][1] if parse(blk[-1][1])[1].split('.')[0] in ('BRA','EXIT','RET','CALL') else ''))
    for a,t in code:
        if a in targets and blk: flush(a); blk=[]
        if not t.startswith('@!PT') or True: blk.append((a,t))
        op=parse(t)[1].split('.')[0]
        if op in ('BRA','EXIT','RET','CALL','BSYNC','WARPSYNC') and op in ('BRA','EXIT','RET','CALL'):
            flush(a); blk=[]
    flush(0)
