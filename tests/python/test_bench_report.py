#!/usr/bin/env python3
"""experiments/bench_report.py --standard: the targets of issue 11 computed
from made-up benchmark lines (no GPU): each ratio from the right records,
each target's boundary, and missing peers left unjudged."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "experiments"))
import bench_report  # noqa: E402

SHAPE = {"batch": 2, "heads": 4, "seq_q": 1024, "head_dim": 64}


def ours(algo, pass_, ms, kernels=()):
    return dict(SHAPE, algo=algo, **{"pass": pass_}, median_ms=ms, kernels=list(kernels))


def kernel(name, ms, flops=0, read=0, write=0):
    return {"name": name, "median_ms": ms, "tensor_flops": flops, "read_bytes": read, "write_bytes": write}


def cublas(name, ms):
    return dict(SHAPE, source="cublas", kernel=name, median_ms=ms, tflops=1.0, api="x", verified=True,
                m=1, n=1, k=1, batches=1)


def torch(variant, pass_, ms):
    return {"source": "torch", "variant": variant, "pass": pass_, "batch": 2, "heads": 4, "seq": 1024,
            "head_dim": 64, "median_ms": ms}


class StandardTargets(unittest.TestCase):
    def rows(self, ours_lines, peer_lines, torch_lines):
        return bench_report.standard_rows(ours_lines, peer_lines, torch_lines)

    def test_gemm_ratio_is_cublas_time_over_ours_and_meets_at_070(self):
        full = ours("standard", "fwdbwd", 10.0, [kernel("std_fwd_qk", 1.0, flops=10**12), kernel("std_fwd_pv", 2.0, flops=10**12)])
        _, gemms, _, _, _ = self.rows([full], [cublas("std_fwd_qk", 0.7), cublas("std_fwd_pv", 1.38)], [])
        by = {g["kernel"]: g for g in gemms}
        self.assertAlmostEqual(by["std_fwd_qk"]["ratio"], 0.7)
        self.assertTrue(by["std_fwd_qk"]["meets_target"])
        self.assertAlmostEqual(by["std_fwd_pv"]["ratio"], 0.69)
        self.assertFalse(by["std_fwd_pv"]["meets_target"])
        self.assertAlmostEqual(by["std_fwd_qk"]["ours_tflops"], 1000.0)

    def test_gemm_without_a_cublas_record_is_not_judged(self):
        full = ours("standard", "fwdbwd", 10.0, [kernel("std_bwd_dk", 1.0, flops=1)])
        _, gemms, _, _, _ = self.rows([full], [], [])
        self.assertNotIn("meets_target", gemms[0])

    def test_softmax_bandwidth_is_trace_bytes_over_time_against_the_faster_copy(self):
        full = ours("standard", "fwdbwd", 10.0, [kernel("std_fwd_softmax", 1.0, read=2 * 10**9, write=10**9)])
        copy = [{"source": "copy", "gbps": 3500.0}, {"source": "copy", "gbps": 3750.0}]
        bw, _, softmax, _, _ = self.rows([full], copy, [])
        self.assertEqual(bw, 3750.0)
        self.assertAlmostEqual(softmax[0]["ours_gbps"], 3000.0)
        self.assertAlmostEqual(softmax[0]["ratio"], 0.8)
        self.assertTrue(softmax[0]["meets_target"])

    def test_pass_ratio_is_ours_over_eager_torch_and_meets_at_1_2(self):
        lines = [ours("standard", "fwd", 1.2), ours("standard", "fwdbwd", 3.7)]
        _, _, _, passes, _ = self.rows(lines, [], [torch("eager", "fwd", 1.0), torch("eager", "fwdbwd", 3.0)])
        by = {p["pass"]: p for p in passes}
        self.assertTrue(by["fwd"]["meets_target"])
        self.assertFalse(by["fwdbwd"]["meets_target"])

    def test_standard_eager_is_compared_with_the_gpt2_variant_without_a_target(self):
        lines = [ours("standard-eager", "fwdbwd", 5.0)]
        _, _, _, passes, eager = self.rows(lines, [], [torch("gpt2", "fwdbwd", 4.0), torch("eager", "fwdbwd", 1.0)])
        self.assertEqual(passes, [{"shape": (2, 4, 1024, 64), "pass": "fwdbwd", "ours_ms": None, "torch_ms": 1.0}])
        self.assertAlmostEqual(eager[0]["ratio"], 1.25)
        self.assertNotIn("meets_target", eager[0])


if __name__ == "__main__":
    unittest.main()
