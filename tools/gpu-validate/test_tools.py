#!/usr/bin/env python3
"""Unit tests of the gpu-validate scripts (pure Python 3.11+, no GPU):
`python3 tools/gpu-validate/test_tools.py`. drivers/cli/tests/eval.rs runs
them, and runs prepare.py + `ptxeq eval` end to end on one case."""

import math
import struct
import sys
import unittest
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))

import compare  # noqa: E402
import prepare  # noqa: E402


class Generator(unittest.TestCase):
    def test_same_seed_same_values(self):
        a = [prepare.random_element(prepare.Rng(5), "f32") for _ in range(3)]
        b = [prepare.random_element(prepare.Rng(5), "f32") for _ in range(3)]
        self.assertEqual(a, b)

    def test_floats_lie_on_their_dtype_grid_in_range(self):
        rng = prepare.Rng(1)
        for dtype in ("f32", "f16", "bf16", "f64", "f8e4m3", "f8e5m2"):
            for _ in range(200):
                raw = prepare.random_element(rng, dtype)
                self.assertEqual(len(raw), prepare.SIZES[dtype])
                (x,) = compare.decode(raw, dtype)
                limit = 2.0 if dtype.startswith("f8") else 1.0
                self.assertTrue(-limit <= x <= limit and math.isfinite(x), (dtype, x))

    def test_integers_are_small(self):
        rng = prepare.Rng(2)
        for _ in range(200):
            (v,) = compare.decode(prepare.random_element(rng, "s32"), "s32")
            self.assertTrue(-100 <= v < 100)
            (u,) = compare.decode(prepare.random_element(rng, "u8"), "u8")
            self.assertTrue(0 <= u < 100)


class Decoding(unittest.TestCase):
    def test_fp8_values_from_the_isa(self):
        self.assertEqual(compare.fp8(0x38, "f8e4m3"), 1.0)
        self.assertEqual(compare.fp8(0x7E, "f8e4m3"), 448.0)
        self.assertTrue(math.isnan(compare.fp8(0x7F, "f8e4m3")))
        self.assertEqual(compare.fp8(0x3C, "f8e5m2"), 1.0)
        self.assertEqual(compare.fp8(0x7B, "f8e5m2"), 57344.0)
        self.assertEqual(compare.fp8(0x7C, "f8e5m2"), math.inf)

    def test_bf16_and_signed(self):
        self.assertEqual(compare.decode(b"\x40\x40", "bf16"), [3.0])
        self.assertEqual(compare.decode(b"\xfe\xff\xff\xff", "s32"), [-2])


class Params(unittest.TestCase):
    def test_entry_params_with_aggregates(self):
        ptx = """.visible .entry k(
            .param .u64 .ptr .global .align 1 k_param_0,
            .param .align 8 .b8 k_param_1[32],
            .param .f32 k_param_2
        )
        .reqntid 128, 1, 1
        {
            ret;
        }"""
        name, params, dirs = prepare.entry_params(ptx, "k")
        self.assertEqual(name, "k")
        self.assertEqual([(p[0], p[1], p[2], p[3]) for p in params],
                         [("k_param_0", "u64", 8, 1), ("k_param_1", "b8", 32, 8),
                          ("k_param_2", "f32", 4, 4)])
        self.assertEqual(dirs["reqntid"], [128, 1, 1])

    def test_scalar_bytes_follow_the_param_type(self):
        self.assertEqual(prepare.scalar_bytes(1.5, "f32"), struct.pack("<f", 1.5))
        self.assertEqual(prepare.scalar_bytes(-1, "s32"), b"\xff\xff\xff\xff")
        self.assertEqual(prepare.scalar_bytes(3, "f32"), struct.pack("<f", 3.0))
        self.assertEqual(prepare.scalar_bytes(7, "u64"), (7).to_bytes(8, "little"))


class Tolerance(unittest.TestCase):
    def test_rounding_passes_and_a_wrong_element_fails(self):
        gpu = struct.pack("<3f", 1.0000001, 2.0, 0.5)
        n, bad, worst = compare.compare_tensor("f32", gpu, [1.0, 2.0, 0.5], b"\x01\x01\x01")
        self.assertEqual((n, bad), (3, []))
        self.assertLess(worst, 1e-6)
        n, bad, _ = compare.compare_tensor("f32", gpu, [1.0, 2.1, 0.5], b"\x01\x01\x01")
        self.assertEqual([b[0] for b in bad], [1])

    def test_unwritten_gpu_element_is_named(self):
        gpu = b"\xff\xff\xff\xff" + struct.pack("<f", 1.0)
        _, bad, _ = compare.compare_tensor("f32", gpu, [1.0, 1.0], b"\x01\x01")
        self.assertEqual(bad[0][0], 0)
        self.assertIn("not written", bad[0][3])

    def test_only_written_elements_count_and_integers_are_exact(self):
        gpu = struct.pack("<2i", 5, 99)
        n, bad, _ = compare.compare_tensor("s32", gpu, [5.0, math.nan], b"\x01\x00")
        self.assertEqual((n, bad), (1, []))
        _, bad, _ = compare.compare_tensor("s32", gpu, [6.0, 0.0], b"\x01\x00")
        self.assertEqual(len(bad), 1)


if __name__ == "__main__":
    unittest.main()
