/* The one list of the `hk` API's calls with their signatures and doc lines:
 * help() prints from it, and the reference section of docs/lua-api.md is
 * generated from it (hk.docs("markdown"); tests/lua/test_help.lua fails when
 * the two differ, or when a function of hk or a method has no entry here). */
#include "docs.h"

#include <stddef.h>

const hkl_doc hkl_docs[] = {
    {"Devices", "hk.backends", "hk.backends()", "the backends, each {name, available, reason, toolchain, devices}"},
    {"Devices", "hk.devices", "hk.devices()", "the devices (1-based), each a table that prints as one line"},
    {"Devices", "hk.device", "hk.device([i | \"host\" | \"cuda:0\"])",
     "the current device; with an argument selects one for what is made after"},
    {"Devices", "hk.sync", "hk.sync()", "waits for the current device's work"},
    {"Devices", "hk.clock", "hk.clock()", "seconds on a monotonic clock (wall time, unlike os.clock)"},

    {"Buffers", "hk.alloc", "hk.alloc(n [, dtype [, mode]]) -> buffer",
     "n elements of dtype (default f32) in mode device, managed or host"},
    {"Buffers", "hk.from", "hk.from(table [, dtype [, mode]]) -> buffer", "a buffer holding a Lua table's numbers"},
    {"Buffers", "hk.mmap", "hk.mmap(path [, dtype [, {write, create, offset, length}]]) -> buffer",
     "a file's bytes as a buffer"},
    {"Buffers", "hk.load_npy", "hk.load_npy(path [, mode]) -> buffer, shape", "a NumPy .npy file"},
    {"Buffers", "b:totable", "b:totable([i [, j]]) -> table", "elements i..j (1-based, inclusive)"},
    {"Buffers", "b:fill", "b:fill(v) -> b", "sets every element to v"},
    {"Buffers", "b:iota", "b:iota([start [, step]]) -> b", "start, start + step, ..."},
    {"Buffers", "b:rand", "b:rand{seed=, dist=\"uniform\"|\"normal\", lo=, hi=, mean=, std=} -> b, seed",
     "reproducible random data"},
    {"Buffers", "b:copy", "b:copy(src) -> b", "copies src, of the same byte size, into b"},
    {"Buffers", "b:clone", "b:clone([mode]) -> buffer", "a new buffer with the same contents"},
    {"Buffers", "b:view", "b:view(dtype [, offset [, count]]) -> buffer",
     "the same memory as another dtype, from byte offset"},
    {"Buffers", "b:stats", "b:stats() -> {n, min, max, mean, std, nan, inf}", "statistics of the finite elements"},
    {"Buffers", "b:allclose", "b:allclose(other [, rtol [, atol]]) -> ok [, report, message]",
     "compares with a buffer, a table or a function of the index"},
    {"Buffers", "b:add", "b:add(x) -> b", "b = b + x elementwise (x a buffer or a number); b1 + b2 makes a new one"},
    {"Buffers", "b:sub", "b:sub(x) -> b", "b = b - x elementwise; b1 - b2 makes a new buffer"},
    {"Buffers", "b:mul", "b:mul(x) -> b", "b = b * x elementwise; b1 * b2 makes a new buffer"},
    {"Buffers", "b:div", "b:div(x) -> b", "b = b / x elementwise; b1 / b2 makes a new buffer"},
    {"Buffers", "b:save", "b:save(path)", "writes a NumPy .npy file"},
    {"Buffers", "b:plot", "b:plot{width=, rows=, shape=, color=, print=}",
     "a sparkline, or a heatmap with rows, on the terminal"},
    {"Buffers", "b:png", "b:png(path [, {kind, width, height, rows, shape}])", "a PNG chart or heatmap"},
    {"Buffers", "b:free", "b:free()", "frees the memory now; later use is an error"},
    {"Buffers", "b:dtype", "b:dtype() -> string", "the element type"},
    {"Buffers", "b:mode", "b:mode() -> string", "device, managed, host or mmap"},
    {"Buffers", "b:device", "b:device() -> string", "the device holding it, as \"host:0\""},
    {"Buffers", "b:bytes", "b:bytes() -> integer", "its size in bytes"},

    {"Modules and kernels", "hk.compile", "hk.compile(source [, {name, flags, defines, include_dirs, instantiate, cache}]) -> module",
     "compiles HIP source; hk.compile{path = FILE, ...} compiles a file"},
    {"Modules and kernels", "hk.load", "hk.load(path) -> module", "a code object built before for this backend"},
    {"Modules and kernels", "hk.inspect", "hk.inspect(path | {bytes = s}) -> table",
     "a code object's targets, kernels and resources, with no device"},
    {"Modules and kernels", "m:kernels", "m:kernels() -> list", "the names of the module's kernels"},
    {"Modules and kernels", "m:kernel", "m:kernel(name [, signature]) -> kernel",
     "a kernel (a template by name expression), with its signature when the code object lacks it"},
    {"Modules and kernels", "m:save", "m:save(path)", "writes the module's code object"},
    {"Modules and kernels", "m:reload", "m:reload() -> changed",
     "compiles the module's file again and makes it the module's code"},
    {"Modules and kernels", "m:free", "m:free()", "frees the module; its kernels refuse to launch after"},
    {"Modules and kernels", "k:launch", "k:launch(grid, block, args...)",
     "runs the kernel; grid and block are numbers or {x, y, z}"},
    {"Modules and kernels", "k:info", "k:info() -> table",
     "signature, parameters, registers, shared and local memory, origin"},
    {"Modules and kernels", "k:disasm", "k:disasm() -> string", "the kernel's machine code"},

    {"Kernel families", "hk.plugins", "hk.plugins() -> list", "the kernel families with their kernels and doc lines"},

    {"Timing", "hk.bench", "hk.bench(f [, {warmup, reps, bytes, flops, label, print}]) -> result",
     "times f between device events: median, min, max, GB/s, TFLOP/s"},

    {"Cache", "hk.cache.dir", "hk.cache.dir() -> string", "the compile cache's folder"},
    {"Cache", "hk.cache.stats", "hk.cache.stats() -> {dir, mode, entries, bytes, max_bytes}",
     "what the compile cache holds"},
    {"Cache", "hk.cache.clear", "hk.cache.clear()", "removes every entry"},
    {"Cache", "hk.cache.prune", "hk.cache.prune([max_bytes])", "evicts the least recently used entries"},

    {"Help", "help", "help([value | name])",
     "the doc line and signature of a call, or the methods of an object"},
    {"Help", "hk.docs", "hk.docs([\"markdown\"]) -> list | string",
     "the entries help() shows, or the reference of docs/lua-api.md"},
    {NULL, NULL, NULL, NULL},
};
