#!/usr/bin/env bash
# The CUDA architectures a build by the scripts compiles for (CMAKE_CUDA_ARCHITECTURES): the
# GPUs of this machine where it has any (CMake's "native"), else Hopper's sm_90 alone, which
# checks that the CUDA sources compile without paying the full list's compile time (CMakeLists.txt
# gives the full list to builds that do not choose). LOCKSTEP_CUDA_ARCHITECTURES overrides both.
if [[ -n "${LOCKSTEP_CUDA_ARCHITECTURES:-}" ]]; then echo "$LOCKSTEP_CUDA_ARCHITECTURES"
elif nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then echo native
else echo 90
fi
