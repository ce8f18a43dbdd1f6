#!/usr/bin/env python3
"""Loops of a kernel's SASS and their instructions by pipe (static counts).

    cuobjdump -sass OBJ > OBJ.sass.txt   (on the GPU machine: no cuobjdump here)
    scripts/sass_loops.py OBJ.sass.txt FUNCTION_REGEX

For each function whose mangled name matches, every backward branch (BRA to
an earlier address) is a loop [target, branch]; its instructions are counted
by the pipe the SM model puts them on (HMMA tensor; LDSM/LDS/STS smem;
FFMA/FMUL/FADD/IMAD fma; MUFU; SHFL; BAR; LDG/STG/LDGSTS/RED global; the rest
alu), with the most frequent opcodes of the larger loops. The warp programs
(sim/schedule/warp_programs.cpp) take per-chunk address costs from this.
"""
import re,sys,collections
FUNC=re.compile(r"^\s*Function : (\S+)")
INSTR=re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z0-9_]+(?:\.[A-Z0-9_]+)*)(.*)")
def funcs(path):
    cur=None; out={}
    for line in open(path):
        m=FUNC.match(line)
        if m: cur=m.group(1); out[cur]=[]; continue
        if cur:
            i=INSTR.match(line)
            if i: out[cur].append((int(i.group(1),16), i.group(3), i.group(4)))
    return out
PIPE={'HMMA':'tensor','LDSM':'smem','LDS':'smem','STS':'smem','FFMA':'fma','FMUL':'fma','FADD':'fma','HADD2':'fma','HFMA2':'fma','HMUL2':'fma','IMAD':'fma','IMUL':'fma','MUFU':'mufu','SHFL':'shfl','BAR':'barrier','LDG':'global','STG':'global','LDGSTS':'global','RED':'global','FMNMX':'alu','F2FP':'alu'}
def pipe(op):
    base=op.split('.')[0]
    return PIPE.get(base,'alu')
def loops(ins):
    addr=[a for a,_,_ in ins]
    res=[]
    for a,op,rest in ins:
        if op.startswith('BRA'):
            m=re.search(r'0x([0-9a-f]+)',rest)
            if m:
                t=int(m.group(1),16)
                if t<a: res.append((t,a))
    return res
if __name__=='__main__':
    path,pat=sys.argv[1],sys.argv[2]
    for f,ins in funcs(path).items():
        if not re.search(pat,f): continue
        print(f[-90:], len(ins))
        for (t,a) in loops(ins):
            body=[(x,op) for x,op,_ in ins if t<=x<=a]
            c=collections.Counter(pipe(op) for _,op in body)
            ops=collections.Counter(op.split('.')[0] for _,op in body)
            print('  loop %05x-%05x n=%d'%(t,a,len(body)), dict(c))
            if len(body)>50: print('     ', ops.most_common(14))
