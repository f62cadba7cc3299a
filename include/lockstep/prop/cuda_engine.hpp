// The CUDA engine: a whole lockstep batch on one GPU (docs/PROPAGATION.md §3).
//
// The batch's fields live on the device as (members × points) arrays. Each stage input is one
// fused element-wise kernel (the interaction-picture combination of stepper.hpp, exponentials
// per group of members sharing L(ω)); each evaluation of N is one batched cuFFT plan over all
// members plus three element-wise kernels (intensity, Kerr + Raman product, and the iγs(ω)
// factor, which also writes k_j = D·N_j where the stepper needs it) and, with Raman, a batched
// real transform pair around the H_R product; each member's error norm is one block of a
// segmented reduction that forms the error estimate on the fly. The kernels read h from device
// memory, so a trial is captured once as a CUDA graph and replayed for every step length. A
// trial copies 2 doubles per member back to the host (norm, finiteness), an acceptance 4 (the
// measures); the fields cross only when planes are saved or the run ends, and planes stream to
// the host on a second stream while the stepping goes on.
//
// Where the build has it for the grid (CudaOptions::fused_evaluation, the default), each
// evaluation of N is instead one kernel: a thread block per member forms the stage input, and
// transforms, multiplies and transforms back in registers and shared memory with cuFFTDx
// (cuda/fused_evaluation.cu); the measures of an accepted step are one such kernel too. With an
// FSAL stage and an error estimate, the FSAL evaluation, whose input is the candidate, also forms
// each member's error norm, so no reduction pass rereads the stage rows. The members split into
// CudaOptions::lanes contiguous ranges whose trials run on streams of their own (branches of the
// one captured graph), so that one range's memory-bound passes run beside another's evaluations.
// The evaluation kernel holds one member per multiprocessor and reads its rows before its
// transforms; while the transforms run, it asks L2 for the rows of the member whose block comes
// next (CudaOptions::l2_prefetch), so that the memory does not idle meanwhile.
//
// Precision: float64 by default; float32 (the same kernels and cuFFT's single-precision plans;
// exponentials and reductions still in double) as an option.
//
// Synchronisation: what each call of the CUDA engine leaves in flight when it returns, and what
// the caller's memory must outlive (Engine's calls, engine.hpp, state it for every engine).
//  - The engine runs on streams of its own (cudaStreamNonBlocking) and on the device current
//    when it was made; every call is made with that device current. Nothing of it runs on the
//    legacy default stream or waits for other streams: other work on the GPU (another engine,
//    another process, torch) neither orders with it nor can reorder it.
//  - make_cuda_engine: returns with every table on the device (its copies complete); no caller
//    memory is read later.
//  - load(): copies the spectrum into the engine before it returns; the upload itself is queued
//    by the next call that needs it, in order before that call's work.
//  - start_trial(): queues the trial and returns; nothing of the caller's is read later.
//    finish_trial(): returns when the trial's kernels and its per-member results are complete.
//  - accept(): queues the swap's kernels (windows); measures() returns the measures on the host,
//    waiting for them where they are still being computed.
//  - read_solutions() / read_dense_output(): queue a copy of the state as it is at the call (later
//    trials and acceptances do not change it) and return; any number may be in flight. The rows
//    are written by a host function of the copy stream; they must stay valid, and unread, until
//    finish_reads() returns (or the engine is destroyed, which waits for them).
//  - The destructor waits for everything still in flight (a trial that an error left unfinished,
//    rows on their way) before it frees anything; every buffer, stream, event and graph is
//    released with the engine, also when its construction fails part way.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "lockstep/core/tensor.hpp"
#include "lockstep/prop/config.hpp"
#include "lockstep/prop/engine.hpp"

namespace lockstep::prop {

/// The CUDA engine of `configs` (one member each, one grid), stepping with `tableau`, in
/// `precision` (f64 or f32), on the current CUDA device; options.graphs: each trial replayed as
/// a CUDA graph. std::runtime_error when this build has no CUDA or no device is visible;
/// DeviceMemoryExhausted (a std::runtime_error) when the device memory does not suffice (the
/// message gives the MiB needed and free), whether the estimate refuses or an allocation fails.
std::unique_ptr<Engine> make_cuda_engine(std::span<const Config* const> configs, const Tableau& tableau,
                                         DType precision = DType::f64, const CudaOptions& options = {});

/// Returns where this build and machine can make a CUDA engine; std::runtime_error saying why
/// not otherwise (a build without CUDA, no visible device). make_cuda_engine checks it first.
void require_cuda_engine();

/// Device bytes the CUDA engine with `options` needs per member (select_batch's budget),
/// counting each member's own exponentials and physics (a scan's worst case).
std::int64_t cuda_engine_bytes_per_member(const Tableau& tableau, std::int64_t points, DType precision,
                                          const CudaOptions& options = {});

/// What build_summary() says of the CUDA engine: "" without CUDA, else ", CUDA" and whether
/// the fused evaluation of N is built.
std::string cuda_engine_summary();

/// Free memory of the current CUDA device in bytes (0 without CUDA).
std::int64_t cuda_free_memory();

/// Whether the fused evaluation of N (CudaOptions::fused_evaluation) runs here for grids of
/// `points` points in `precision`: the build has it (cuFFTDx, compiled for sm_90), the current
/// device has compute capability 9.0, and the size is one of 1024, 2048, 4096 or 8192 points
/// (float32: not 8192).
bool cuda_fused_evaluation_available(std::int64_t points, DType precision = DType::f64);

}  // namespace lockstep::prop
