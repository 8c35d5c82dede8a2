// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// NVML's opaque handles, declared at global scope as nvml.h declares them (its C ABI): the health
// check and the system monitor load NVML with dlopen and name these types the same way, so both
// refer to one type (also when the trainer is compiled as a unity build).
struct nvmlDevice_st;
struct nvmlEventSet_st;
