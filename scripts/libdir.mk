# SPDX-License-Identifier: GPL-2.0
#
# Where libdevmem installs its libraries, for the top Makefile and
# libdevmem's own: include this after PREFIX is set. LIBDIR defaults to
# Debian's multiarch directory (PREFIX/lib/x86_64-linux-gnu) where the
# compiler names one (gcc -print-multiarch), else PREFIX/lib.

MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
LIBDIR ?= $(PREFIX)/lib$(if $(MULTIARCH),/$(MULTIARCH))
