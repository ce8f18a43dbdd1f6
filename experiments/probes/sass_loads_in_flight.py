#!/usr/bin/env python3
"""Loaded-but-unread registers along a loop body in the SASS of Nsight Compute's per-instruction CSV
(source_counters.sh's NAME-source.csv): the instructions executed COUNT times, in address order; a load
(LDS, LDSM, LDG, LDL) adds its destination registers (4 for .128 and LDSM .4, 2 for .64 and LDSM .2,
else 1); an instruction reading a register removes it. Prints the peak, mean and 90th percentile of
the registers in flight: what nvcc's schedule keeps loaded ahead of its use. The operand parsing is
approximate (register ranges of HMMA, STS and STG are taken as 4 from their first register).

    experiments/probes/sass_loads_in_flight.py SOURCE.csv COUNT
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import source_table as st
path, count = sys.argv[1], int(sys.argv[2])
hdr,ins=st.read(path)
body=[i for i in ins if i['n']==count]
body.sort(key=lambda i:int(i['addr'][-5:],16))
def regs_of(tok):
    m=re.match(r'R(\d+)(?:\.64)?',tok)
    return int(m.group(1)) if m else None
inflight={}  # reg -> load index
peak=0; hist=[]
for k,i in enumerate(body):
    t=i['text']
    if t.startswith('@'): t=t.split(None,1)[1]
    parts=t.split(None,1)
    op=parts[0]; args=parts[1] if len(parts)>1 else ''
    toks=[a.strip() for a in args.split(',')]
    # sources: every R in args except the first token for ops with a destination
    allregs=[int(x) for x in re.findall(r'\bR(\d+)\b',args)]
    isload=op.startswith(('LDS','LDSM','LDG','LDL')) 
    if isload or op.startswith(('HMMA','FFMA','FADD','FMUL','FMNMX','MUFU','F2FP','IMAD','IADD3','LOP3','SHF','FSEL','FSETP','ISETP','PRMT','MOV','HADD2','SHFL','LEA','SEL','I2F','F2I','CS2R','VIADD')):
        dest=allregs[:1]; srcs=allregs[1:]
    else:
        dest=[]; srcs=allregs
    # consume
    for r in srcs:
        for q in (r,):
            inflight.pop(q,None)
    if op.startswith('HMMA'):
        # HMMA reads A (4 regs), B (2 regs) register ranges: Rd, Ra, Rb, Rc -> expand ranges
        m=re.findall(r'\bR(\d+)\b',args)
        if len(m)>=3:
            a=int(m[1]); b=int(m[2])
            for q in range(a,a+4): inflight.pop(q,None)
            for q in range(b,b+2): inflight.pop(q,None)
    if op.startswith('STS') or op.startswith('STG'):
        m=re.findall(r'\bR(\d+)\b',args)
        for x in m:
            for q in range(int(x),int(x)+4): inflight.pop(q,None)
    if isload and dest:
        n=4 if ('.128' in op or op.startswith('LDSM') and '.4' in op) else (2 if '.64' in op or ('LDSM' in op and '.2' in op) else 1)
        for q in range(dest[0],dest[0]+n): inflight[q]=k
    peak=max(peak,len(inflight)); hist.append(len(inflight))
import statistics
print(path.split('/')[-1], 'body',len(body),'peak loaded regs in flight',peak,'mean',round(statistics.mean(hist),1),'p90',sorted(hist)[int(0.9*len(hist))])
