# The standard GEMM variant bench shared by gemm_overlap_run.sh and gemm_overlap_run2.sh, sourced on the
# GPU machine with $out and $tile set:
#   bench VARIANT SHAPE_FLAGS EXE [ENV=VALUE ...]
# appends one JSON line (`iosim-kernels bench ... --per-kernel --json`, forward+backward, labelled
# with VARIANT) to $out/variants.jsonl; stderr goes to $out/bench.err.
label() { python3 -c "import json, sys; r = json.loads(sys.stdin.readline()); r['variant'] = sys.argv[1]; print(json.dumps(r))" "$1"; }
bench() {  # variant shape exe env...
  local v=$1 sh=$2 exe=$3
  shift 3
  env "$@" "$exe" bench --algo standard --pass fwdbwd $sh $tile --per-kernel --warmup 3 --iters 20 --json 2>> "$out/bench.err" |
    label "$v" >> "$out/variants.jsonl"
}
