// The order the compiler issues a warp program in.
//
// Warp programs (sim/schedule/warp_programs.cpp) are written in the kernels'
// source order: per score, its subtraction, exponential, packing and sum, one
// after another. nvcc does not issue them so: its instruction scheduler is a
// list scheduler that, within a basic block, starts every instruction as
// early as its operands and its pipe allow, ahead of instructions that wait
// (the FA2 forward's sm_90 SASS issues a row's 32 MUFU.EX2 back to back, then
// the packs and sums). An in-order issue model fed the source order would
// wait out each exponential's latency in turn.
//
// compiler_order() reorders a program the same way: a cycle-driven list
// schedule of one warp with the machine's pipe intervals and latencies, the
// longest latency path to the program's end first. What the compiler may not
// move stays in place: nothing crosses a barrier or an asynchronous MMA and
// its wait (wgmma / wgmma.wait_group fence the accumulators), and
// shared-memory and global accesses keep their order among themselves.
// Instructions, and so every instruction count, are unchanged: only their
// order and the indices of their sources move.
#pragma once
#include "sim/engine/sm_model.h"
#include "sim/schedule/warp_program.h"

namespace iosim::engine {

schedule::WarpProgram compiler_order(const schedule::WarpProgram& program, const SmMachine& m);

}  // namespace iosim::engine
