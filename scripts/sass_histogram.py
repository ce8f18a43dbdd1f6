#!/usr/bin/env python3
"""Static SASS opcode histogram of every kernel in a CUDA executable or object.

    cuobjdump -sass BINARY | scripts/sass_histogram.py OUT.json [--keep REGEX OUT_SASS.txt]

Reads cuobjdump's SASS listing on stdin and writes {function: {opcode: count}}
(opcode = the instruction's mnemonic with its modifiers, predicate stripped,
e.g. "HMMA.16816.F32", "MUFU.EX2", "LDSM.16.M88.4"), plus, with --keep, the
full listing of the functions whose (mangled) name matches REGEX. The counts
are static (instructions in the code, each unrolled copy counted once), for
reading what the compiler made of a loop body; ncu's inst_executed counters
give the dynamic counts.
"""
import json
import re
import sys

FUNC = re.compile(r"^\s*Function : (\S+)")
# "        /*0070*/                   HMMA.16816.F32 R24, R4, R16, RZ ;   /* ... */"
INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-9T]\s+)?([A-Z0-9_]+(?:\.[A-Z0-9_]+)*)")


def main():
    if len(sys.argv) not in (2, 5) or (len(sys.argv) == 5 and sys.argv[2] != "--keep"):
        sys.exit(__doc__)
    keep = re.compile(sys.argv[3]) if len(sys.argv) == 5 else None
    kept = open(sys.argv[4], "w") if keep else None
    hist = {}
    current = None
    keeping = False
    for line in sys.stdin:
        m = FUNC.match(line)
        if m:
            current = m.group(1)
            hist.setdefault(current, {})
            keeping = bool(keep and keep.search(current))
        elif current is not None:
            i = INSTR.match(line)
            if i:
                op = i.group(1)
                hist[current][op] = hist[current].get(op, 0) + 1
        if keeping:
            kept.write(line)
    with open(sys.argv[1], "w") as f:
        json.dump(hist, f, indent=0, sort_keys=True)
    print("%d functions, %d instructions" % (len(hist), sum(sum(h.values()) for h in hist.values())))


if __name__ == "__main__":
    main()
