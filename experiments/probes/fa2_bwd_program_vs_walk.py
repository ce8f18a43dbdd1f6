#!/usr/bin/env python3
"""FA2 backward: per-warp step and epilogue counts of the current programs (two iosim simulate runs
solved for step and epilogue) beside the SASS walk, per pipe.  fa2_bwd_program_vs_walk.py [IOSIM]"""
import sys, json, subprocess, importlib.util, collections
spec = importlib.util.spec_from_file_location("w", "" + __import__("os").path.join(__import__("os").path.dirname(__file__), "fa2_bwd_walk.py") + "")
w = importlib.util.module_from_spec(spec); spec.loader.exec_module(w)
IOSIM=__import__("sys").argv[1] if len(__import__("sys").argv) > 1 else "build/sim/iosim"
P=['tensor','fma','alu','mufu','smem','global','barrier']
def sim(d,bm,bn,seq):
    o=json.loads(subprocess.run([IOSIM,"simulate","--algo","fa2","--pass","bwd","--batch","1","--heads","1","--seq",str(seq),"--head-dim",str(d),"--block-m",str(bm),"--block-n",str(bn),"--profile","h100","--json"],capture_output=True,text=True,check=True).stdout)
    k=[k for k in o['kernels'] if k['name']=='fa2_bwd_main'][0]
    return k['sm_model']['instructions']
def warps(d,bm,bn): return min(8,(bm//16)*(bn//16),(bn//16)*(d//16),(bm//16)*(d//16))
for listing,d,tiles in (("/work/sass/fa2_bwd_fp16_d64.sass",64,['64x64','64x128','128x64','128x128','64x256']),("/work/sass/fa2_bwd_fp16_d128.sass",128,['64x64','64x128','128x64','128x128'])):
    for t in tiles:
        bm,bn=map(int,t.split('x')); W=warps(d,bm,bn)
        s1,s2=4*256,8*256
        a,b=sim(d,bm,bn,s1),sim(d,bm,bn,s2)
        res={}
        for p in P+['total']:
            # total = (S/bn)*W*((S/bm)*x + e)
            c1,c2=(s1//bn)*W,(s2//bn)*W
            # a/c1 = (s1/bm) x + e ; b/c2 = (s2/bm) x + e
            x=(b[p]/c2 - a[p]/c1)/((s2-s1)/bm); e=a[p]/c1-(s1/bm)*x
            res[p]=(x,e)
        out=w.run(listing,d,bm,bn)
        ws=w.by_pipe(out['step']); we=w.by_pipe(out['epilogue'])
        ws['mufu']=ws.pop('xu',0); we['mufu']=we.pop('xu',0)
        print(f"d{d} {t:8} step sim {res['total'][0]:7.0f} walk {sum(ws.values()):5d} | " + " ".join(f"{p}:{res[p][0]:.0f}/{ws.get(p,0)}" for p in P))
        print(f"{'':13} epi  sim {res['total'][1]:7.0f} walk {sum(we.values()):5d} | " + " ".join(f"{p}:{res[p][1]:.0f}/{we.get(p,0)}" for p in P))
