# SPDX-License-Identifier: GPL-2.0
#
# The tree's user ABI for user-space builds (scripts/uapi-headers.sh):
# include this with REPO set, make $(UAPI_STAMP) a prerequisite of every
# object that needs the ABI, and compile with -I$(UAPI_INC). No kernel
# tree is needed: the host's installed 6.1 headers plus uapi/.

UAPI_DIR ?= $(REPO)/build/uapi
UAPI_INC := $(UAPI_DIR)/include
UAPI_STAMP := $(UAPI_DIR)/stamp
UAPI_SRCS := $(REPO)/scripts/uapi-headers.sh \
	     $(wildcard $(REPO)/uapi/patches/*.patch) \
	     $(shell find $(REPO)/uapi -name '*.h' 2>/dev/null)

$(UAPI_STAMP): $(UAPI_SRCS)
	@$(REPO)/scripts/uapi-headers.sh $(UAPI_INC)
	@touch $@
