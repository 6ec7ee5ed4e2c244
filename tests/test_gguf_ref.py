#!/usr/bin/env python3
"""hipkit against the `gguf` Python package (ggml's own reader, writer and
NumPy quantizers): a GGUF file of random tensors written by gguf's writer,
read by hk.gguf; every format's blocks dequantized by hipkit and by gguf,
compared value for value (exactly); f32 tensors quantized by hipkit and by
gguf (the formats gguf quantizes: q4_0 q4_1 q5_0 q5_1 q8_0, and the
k-quants where the installed gguf has their quantizers), compared byte for
byte; matvec against a float64 product of gguf's dequantized matrix.
TAP; SKIP with the reason when numpy or gguf cannot be imported.
Usage: test_gguf_ref.py HIPKIT"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import gguf
    from gguf import GGMLQuantizationType as T
    from gguf.quants import dequantize, quantize
except ImportError as e:
    print(f"1..0 # SKIP the gguf and numpy Python packages are not importable ({e})")
    sys.exit(0)

hipkit = sys.argv[1]
seed = int(os.environ.get("HK_TEST_SEED", "1"))
rng = np.random.default_rng(seed)
count = 0
failed = 0


def ok(cond, name, diag=None):
    global count, failed
    count += 1
    print(f"{'ok' if cond else 'not ok'} {count} - {name}")
    if not cond:
        failed += 1
        if diag:
            print("# " + str(diag).replace("\n", "\n# "))


ROWS, COLS32, COLS256 = 5, 96, 512
QUANTIZED = [T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0]
BLOCKS_ONLY = [T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K]
# each format's f16 scale fields (byte offsets in a block): kept finite
SCALES = {T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208]}


def random_blocks(qtype, rows, cols):
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, size=(rows, cols // block, size), dtype=np.uint8)
    for at in SCALES[qtype]:
        d = (rng.uniform(0.01, 2.0, size=raw.shape[:2]) * rng.choice([-1, 1], size=raw.shape[:2]))
        raw[..., at:at + 2] = d.astype(np.float16).view(np.uint8).reshape(raw.shape[:2] + (2,))
    return raw.reshape(rows, -1)


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "ref.gguf")
    w = gguf.GGUFWriter(path, "hipkit-test")
    w.add_string("test.note", "random tensors")
    w.add_uint32("test.rows", ROWS)
    tensors = {}
    for q in QUANTIZED:
        x = (rng.standard_normal((ROWS, COLS32)) * 3).astype(np.float32)
        x[1, :32] = 0  # a block of zeros: d = 0
        qb = quantize(x, q)
        w.add_tensor("x." + q.name, x)
        w.add_tensor("q." + q.name, qb, raw_dtype=q)
        tensors[q] = (x, qb)
    for q in BLOCKS_ONLY:
        qb = random_blocks(q, ROWS, COLS256)
        w.add_tensor("q." + q.name, qb, raw_dtype=q)
        tensors[q] = (None, qb)
    # the k-quants gguf can quantize (newer gguf packages): hipkit's
    # quantizer against gguf's bytes; the others SKIP below
    kquant = {}
    for q in BLOCKS_ONLY:
        x = (rng.standard_normal((ROWS, COLS256)) * 2).astype(np.float32)
        x[1, :256] = 0
        try:
            kquant[q] = (x, quantize(x, q))
        except NotImplementedError:
            continue
        w.add_tensor("kx." + q.name, x)
    xv = rng.uniform(-1, 1, COLS256).astype(np.float32)
    w.add_tensor("v", xv)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    names = [q.name for q in QUANTIZED + BLOCKS_ONLY]
    lua = f"""
local g = hk.gguf({path!r})
local Q = hk.ops.quantized
local out = {tmp!r}
assert(g.metadata["test.rows"] == {ROWS} and g.metadata["test.note"] == "random tensors")
for _, f in ipairs{{{", ".join(repr(n) for n in names)}}} do
    local w = g.tensors["q." .. f].buffer
    local y = hk.alloc(#w, "f32")
    Q.dequantize(y, w)
    y:save(out .. "/deq_" .. f .. ".npy")
    local x = g.tensors["x." .. f]
    if x then
        local qw = hk.alloc(#w, w:dtype())
        Q.quantize(qw, x.buffer)
        qw:view("u8"):save(out .. "/quant_" .. f .. ".npy")
    elseif g.tensors["kx." .. f] then
        local kx = g.tensors["kx." .. f].buffer
        local qw = hk.alloc(#kx, w:dtype())
        Q.quantize(qw, kx)
        qw:view("u8"):save(out .. "/kquant_" .. f .. ".npy")
    end
    if not x and #w % {COLS256} == 0 then
        local y2 = hk.alloc(#w // {COLS256}, "f32")
        Q.matvec(y2, w, g.tensors.v.buffer)
        y2:save(out .. "/mv_" .. f .. ".npy")
    end
end
"""
    script = os.path.join(tmp, "run.lua")
    with open(script, "w") as f:
        f.write(lua)
    run = subprocess.run([hipkit, script], capture_output=True, text=True, timeout=600)
    ok(run.returncode == 0, "hipkit reads gguf's file and runs every format", run.stdout + run.stderr)
    if run.returncode == 0:
        for q, (x, qb) in tensors.items():
            ref = dequantize(qb, q).reshape(-1)
            got = np.load(os.path.join(tmp, f"deq_{q.name}.npy"))
            bad = np.flatnonzero(got.view(np.uint32) != ref.astype(np.float32).view(np.uint32))
            ok(bad.size == 0, f"{q.name}: hipkit's dequantize equals gguf's, bit for bit",
               f"{bad.size} differ, first at {bad[:1]}: {got[bad[:1]]} vs {ref[bad[:1]]}")
            if x is not None:
                mine = np.load(os.path.join(tmp, f"quant_{q.name}.npy"))
                theirs = qb.reshape(-1)
                diff = np.flatnonzero(mine != theirs)
                ok(diff.size == 0, f"{q.name}: hipkit's quantize writes gguf's bytes",
                   f"{diff.size} bytes differ, first at {diff[:1]}")
            else:
                y = np.load(os.path.join(tmp, f"mv_{q.name}.npy")).astype(np.float64)
                m = ref.reshape(ROWS, COLS256).astype(np.float64)
                want = m @ xv.astype(np.float64)
                mag = np.abs(m) @ np.abs(xv.astype(np.float64))
                err = float(np.max(np.abs(y - want) / mag))
                ok(err < 2e-6, f"{q.name}: matvec within {err:.1e} of a float64 product")
        for q in BLOCKS_ONLY:
            if q not in kquant:
                count += 1
                print(f"ok {count} - {q.name}: quantize against gguf # SKIP this gguf has no {q.name} quantizer")
                continue
            mine = np.load(os.path.join(tmp, f"kquant_{q.name}.npy"))
            diff = np.flatnonzero(mine != kquant[q][1].reshape(-1))
            ok(diff.size == 0, f"{q.name}: hipkit's quantize writes gguf's bytes",
               f"{diff.size} bytes differ, first at {diff[:1]}")
print(f"1..{count}")
sys.exit(1 if failed else 0)
