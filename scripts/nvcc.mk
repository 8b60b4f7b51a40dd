# SPDX-License-Identifier: GPL-2.0
#
# NVCC: CUDA's compiler where one is installed (on PATH or in
# /usr/local/cuda), else empty; NVCC= on the command line turns the CUDA
# parts off.
NVCC ?= $(firstword $(shell command -v nvcc 2>/dev/null) \
		    $(wildcard /usr/local/cuda/bin/nvcc))
