#!/usr/bin/python3
"""Estimated cycles of a program on a core model, from tb_profile counts (lab/tb_profile.c).

Each executed translation block is disassembled (llvm-mc) and run through llvm-mca for the core; its
steady-state cycles per iteration times its executions is its share. Blocks are summed per symbol (the
ELF symbol its code lies in), per phase (the runtime's per-op marks) and in total. llvm-mca assumes
every load hits L1, so a memory term (bytes that must come from DRAM / the modeled SoC's bandwidth)
is reported beside the compute estimate, and the roofline is the larger of the two.

  estimate.py PROFILE --core cortex-a76 [--dram-bytes N] [--json OUT]
  estimate.py --profile=2:B.tsv --profile=-2:A.tsv --core neoverse-v1    # 2 x (B - A), block by block

Profiles combine linearly, block by block (a block is its file, offset and bytes): the difference of
a run with two decode steps and one with one step is one decode step, whatever loading cost.
llvm-mca results are cached per (block bytes, core) in ~/.cache/tessel-lab, so reruns are fast.
"""

import argparse
import bisect
import collections
import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import sys

LLVM = os.environ.get("TESSEL_LAB_LLVM_SUFFIX", "-16")
# Every extension the lab's aarch64 code may use, so that each executed instruction disassembles and
# assembles; which ones the core runs is the qemu -cpu's business, how fast is the model's.
AARCH64_MATTR = "+v8.4a,+sve,+i8mm,+dotprod,+fullfp16,+bf16,+fp16fml,+rcpc,+lse,+crc,+aes,+sha2"

# The modeled cores. ghz and dram_gbps describe the SoC a core is modeled in; `source` says where
# each figure comes from. qemu_cpu is what the programs run on: qemu only needs the ISA right.
CORES = {
    "cortex-a55": {
        "triple": "aarch64", "mcpu": "cortex-a55", "mattr": AARCH64_MATTR,
        "label": "cortex-a55",
        "qemu_cpu": "cortex-a76",
        "gcc_mcpu": "cortex-a55",
        "ghz": 2.0, "dram_gbps": 12.8, "llc_bytes": 512 << 10,
        "source": "Cortex-A55 modeled in a Rockchip RK3568-class SoC: 2.0 GHz, 32-bit LPDDR4 at 3200 MT/s "
                  "(12.8 GB/s peak), 512 KiB L3 (figures as recalled from Rockchip's product brief, not "
                  "re-checked; override with --ghz / --dram-gbps). qemu has no cortex-a55 CPU: its cortex-a76 "
                  "has the same ISA (Armv8.2-A, dotprod, fp16, no SVE, no i8mm)",
    },
    "cortex-a76": {
        "triple": "aarch64", "mcpu": "cortex-a76", "mattr": AARCH64_MATTR,
        "label": "cortex-a76 (A57 model)",
        "qemu_cpu": "cortex-a76",
        "gcc_mcpu": "cortex-a76",
        "ghz": 2.4, "dram_gbps": 17.1, "llc_bytes": 2 << 20,
        "source": "Raspberry Pi 5 (BCM2712): Cortex-A76 at 2.4 GHz, 32-bit LPDDR4X-4267 (17.1 GB/s peak), "
                  "2 MiB L3. llvm-16 has no Cortex-A76 model: -mcpu=cortex-a76 schedules on the Cortex-A57 "
                  "model (an older, narrower out-of-order core), so A76 cycles are pessimistic",
    },
    "neoverse-v1": {
        "triple": "aarch64", "mcpu": "neoverse-v1", "mattr": AARCH64_MATTR,
        "label": "neoverse-v1",
        "qemu_cpu": "max,sve=on,sve256=on,sve-default-vector-length=32",
        "gcc_mcpu": "neoverse-v1",
        "ghz": 2.6, "dram_gbps": 307.2, "llc_bytes": 32 << 20,
        "source": "AWS Graviton3: Neoverse V1 at 2.6 GHz, 256-bit SVE, 8 channels of DDR5-4800 (307 GB/s per "
                  "socket: one core alone reaches a fraction of it), 32 MiB L3. qemu's max CPU with 256-bit "
                  "SVE stands in (it also reports SVE2, which V1 lacks; builds for -mcpu=neoverse-v1 do not "
                  "use it)",
    },
    "sapphirerapids": {
        "triple": "x86_64", "mcpu": "sapphirerapids", "mattr": "",
        "label": "sapphirerapids",
        "qemu_cpu": "max",
        "gcc_mcpu": None,
        "ghz": None, "dram_gbps": None, "llc_bytes": None,
        "source": "x86-64 validation model (Golden Cove core, as in Sapphire / Emerald Rapids hosts)",
    },
    "znver3": {
        "triple": "x86_64", "mcpu": "znver3", "mattr": "",
        "label": "znver3",
        "qemu_cpu": "max",
        "gcc_mcpu": None,
        "ghz": None, "dram_gbps": None, "llc_bytes": None,
        "source": "x86-64 validation model (Zen 3 hosts)",
    },
}

Block = collections.namedtuple("Block", "key vaddr instructions offset file hexbytes")
REP_STRING_CYCLES_PER_ELEMENT = 0.5


def cache_dir():
    return os.environ.get("TESSEL_LAB_CACHE", os.path.expanduser("~/.cache/tessel-lab"))


def read_profile(path):
    """(target, {key: Block}, {key: executions}, {label: {key: executions}}) of one tb_profile file."""
    target = "unknown"
    blocks, executions, by_id = {}, {}, {}
    phases = collections.defaultdict(lambda: collections.defaultdict(int))
    with open(path) as f:
        for line in f:
            if line.startswith("# target "):
                target = line.split()[2]
                continue
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if parts[0] == "B":
                _, bid, vaddr, execs, insns, offset, file, hexbytes = parts
                anon = file == "-"
                key = ("-", int(vaddr, 16), hexbytes) if anon else (file, int(offset, 16), hexbytes)
                b = Block(key, int(vaddr, 16), int(insns), None if anon else int(offset, 16), file, hexbytes)
                blocks[key] = b
                executions[key] = executions.get(key, 0) + int(execs)
                by_id[bid] = key
            elif parts[0] == "P":
                _, label, bid, execs = parts
                phases[label][by_id[bid]] += int(execs)
    return target, blocks, executions, phases


def combine(terms):
    """Sum of coef x profile, block by block. terms: [(coef, path)]."""
    target, blocks = None, {}
    executions = collections.defaultdict(float)
    phases = collections.defaultdict(lambda: collections.defaultdict(float))
    for coef, path in terms:
        t, b, e, p = read_profile(path)
        if target is not None and t != target:
            sys.exit("estimate.py: %s is a %s profile, the others %s" % (path, t, target))
        target = t
        blocks.update(b)
        for k, v in e.items():
            executions[k] += coef * v
        for label, counts in p.items():
            for k, v in counts.items():
                phases[label][k] += coef * v
    return target, blocks, executions, phases


class Symbolizer:
    """File offset -> (symbol, address) through the ELF's load segments and symbol table. Stripped
    libraries (Debian's libXNNPACK exports its API and some assembly microkernels only) fall back to
    the function ranges of .eh_frame, then to "after the previous symbol"."""

    def __init__(self):
        self.files = {}
        self.cache = {}

    def _load(self, path):
        segments, symbols, fdes = [], [], []
        try:
            out = subprocess.run(["llvm-readelf" + LLVM, "-lW", path], capture_output=True, text=True).stdout
            for m in re.finditer(r"^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", out, re.M):
                segments.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)))
            for dynamic in ([], ["-D"]):
                out = subprocess.run(["llvm-nm" + LLVM, "-n", "-S", "-C", "--defined-only"] + dynamic + [path],
                                     capture_output=True, text=True).stdout
                for line in out.splitlines():
                    m = re.match(r"([0-9a-f]+) (?:([0-9a-f]+) )?([tTwWiI]) (.*)", line)
                    if m:
                        symbols.append((int(m.group(1), 16), int(m.group(2) or "0", 16), m.group(4)))
                if symbols:
                    break
            # Dynamic symbols carry their version ("name@@GLIBCXX_3.4.21"), which stops -C demangling.
            raw = [n.split("@")[0] for _, _, n in symbols]
            mangled = sorted({n for n in raw if n.startswith("_Z")})
            if mangled:
                out = subprocess.run(["llvm-cxxfilt" + LLVM], input="\n".join(mangled) + "\n", capture_output=True,
                                     text=True).stdout.splitlines()
                demangled = dict(zip(mangled, out)) if len(out) == len(mangled) else {}
                symbols = [(a, sz, demangled.get(n, n)) for (a, sz, _), n in zip(symbols, raw)]
            out = subprocess.run(["llvm-dwarfdump" + LLVM, "--eh-frame", path], capture_output=True, text=True).stdout
            for m in re.finditer(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.\.([0-9a-f]+)", out):
                fdes.append((int(m.group(1), 16), int(m.group(2), 16)))
        except FileNotFoundError:
            sys.exit("estimate.py: llvm-readelf%s / llvm-nm%s / llvm-dwarfdump%s not found (apt-get install llvm-16)"
                     % (LLVM, LLVM, LLVM))
        symbols.sort()
        fdes.sort()
        self.files[path] = (segments, symbols, [s[0] for s in symbols], fdes, [f[0] for f in fdes])

    def lookup(self, path, offset):
        if path == "-" or offset is None:
            return "[anonymous]", None
        key = (path, offset)
        if key not in self.cache:
            self.cache[key] = self._lookup(path, offset)
        return self.cache[key]

    def _lookup(self, path, offset):
        if path not in self.files:
            self._load(path)
        segments, symbols, addrs, fdes, fde_starts = self.files[path]
        vaddr = offset
        for off, va, size in segments:
            if off <= offset < off + size:
                vaddr = offset - off + va
                break
        base = os.path.basename(path)
        i = bisect.bisect_right(addrs, vaddr) - 1
        if i >= 0:
            addr, size, name = symbols[i]
            # Symbols of size 0 (assembly without .size) own everything up to the next symbol.
            if size == 0 or vaddr < addr + size:
                return short_name(name), vaddr
        j = bisect.bisect_right(fde_starts, vaddr) - 1
        if j >= 0 and vaddr < fdes[j][1]:
            return "[%s function at 0x%x]" % (base, fdes[j][0]), vaddr
        if i >= 0:
            return "[%s code after %s]" % (base, short_name(symbols[i][2])), vaddr
        return "[%s, unnamed code]" % base, vaddr


def short_name(name):
    """A demangled C++ name without its parameter list, return type or long template arguments."""
    name = name.replace("(anonymous namespace)", "{anon}")
    depth, cut, start = 0, len(name), 0
    for i, c in enumerate(name):
        if c in "<(":
            if c == "(" and depth == 0:
                cut = i
                break
            depth += 1
        elif c in ">)":
            depth -= 1
        elif c == " " and depth == 0 and not name[:i].endswith("operator"):
            start = i + 1  # what precedes is a return type
    name = name[start:cut]
    if len(name) > 90:
        name = re.sub(r"<[^<>]*>", "<..>", name)
    return name


def disassemble(blocks, core):
    """{key: [asm lines]} for the blocks, through llvm-mc's disassembler."""
    triple = core["triple"]
    cmd = ["llvm-mc" + LLVM, "--disassemble", "-triple=" + triple]
    if core["mattr"]:
        cmd.append("-mattr=" + core["mattr"])

    def run(hexbytes):
        text = " ".join("0x" + hexbytes[i:i + 2] for i in range(0, len(hexbytes), 2))
        r = subprocess.run(cmd, input=text, capture_output=True, text=True)
        return [l.strip() for l in r.stdout.splitlines() if l.strip() and not l.strip().startswith(".")], r.stderr

    out = {}
    # One llvm-mc call for many blocks: they are whole instructions, so their concatenation decodes to
    # the same instructions; a count that does not add up falls back to one call per block.
    batch = list(blocks)
    for start in range(0, len(batch), 400):
        chunk = batch[start:start + 400]
        lines, _ = run("".join(b.hexbytes for b in chunk))
        if len(lines) == sum(b.instructions for b in chunk):
            at = 0
            for b in chunk:
                out[b.key] = lines[at:at + b.instructions]
                at += b.instructions
        else:
            for b in chunk:
                out[b.key] = run(b.hexbytes)[0]
    return out


def mca_version():
    r = subprocess.run(["llvm-mca" + LLVM, "--version"], capture_output=True, text=True)
    return r.stdout.strip()


def run_mca(regions, core):
    """Cycles per iteration for each region ([asm lines]); unsupported instructions are dropped and
    returned. llvm-mca models each region as a loop body in steady state."""
    dropped = set()
    lines_of = [list(r) for r in regions]
    for _ in range(50):
        text, owner = [], []
        for i, lines in enumerate(lines_of):
            text.append("# LLVM-MCA-BEGIN r%d" % i)
            owner.append(None)
            body = [l for l in lines if l not in dropped] or ["nop"]
            text.extend(body)
            owner.extend([i] * len(body))
            text.append("# LLVM-MCA-END")
            owner.append(None)
        cmd = ["llvm-mca" + LLVM, "-mtriple=" + core["triple"], "-mcpu=" + core["mcpu"], "--json", "-iterations=100"]
        if core["mattr"]:
            cmd.append("-mattr=" + core["mattr"])
        r = subprocess.run(cmd, input="\n".join(text) + "\n", capture_output=True, text=True)
        if r.returncode == 0:
            data = json.loads(r.stdout)
            cycles = []
            for reg in data["CodeRegions"]:
                s = reg["SummaryView"]
                cycles.append(s["TotalCycles"] / max(1, s["Iterations"]))
            return cycles, dropped
        bad = set()
        for m in re.finditer(r"<stdin>:(\d+):\d+: error", r.stderr):
            bad.add(text[int(m.group(1)) - 1].strip())
        for m in re.finditer(r"note: instruction:\s*(.*)", r.stderr):
            bad.add(m.group(1).strip())
        bad -= dropped
        if not bad:
            raise RuntimeError("llvm-mca failed: %s" % r.stderr[-2000:])
        dropped |= bad
    raise RuntimeError("llvm-mca: too many unsupported instructions")


def block_cycles(asm, core):
    """{key: cycles per execution} with the on-disk cache; returns (cycles, dropped instructions)."""
    version = mca_version()
    path = os.path.join(cache_dir(), "mca-%s.jsonl" % core["mcpu"])
    cache = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    d = json.loads(line)
                    cache[d["k"]] = (d["c"], d.get("d", []))
                except (ValueError, KeyError):
                    pass
    digest = {}
    for key, lines in asm.items():
        h = hashlib.sha1("\n".join([version, core["mcpu"], core["mattr"]] + lines).encode()).hexdigest()
        digest[key] = h
    todo = sorted({h: key for key, h in digest.items() if h not in cache}.items())
    dropped_all = set()
    if todo:
        chunks = [todo[i:i + 250] for i in range(0, len(todo), 250)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(lambda c: run_mca([asm[k] for _, k in c], core), chunks))
        os.makedirs(cache_dir(), exist_ok=True)
        with open(path, "a") as f:
            for chunk, (cycles, dropped) in zip(chunks, results):
                for (h, key), c in zip(chunk, cycles):
                    d = sorted(l for l in dropped if l in asm[key])
                    cache[h] = (c, d)
                    f.write(json.dumps({"k": h, "c": c, "d": d}) + "\n")
    out = {}
    for key, h in digest.items():
        c, d = cache[h]
        out[key] = c
        dropped_all.update(d)
    return out, dropped_all


def _a64_ends_in_jump(b):
    """Whether an aarch64 block's last instruction always leaves the straight line: B, BL, BR, BLR, RET
    and the other unconditional branches, or an exception (SVC, BRK). Conditional branches do not."""
    insn = int.from_bytes(bytes.fromhex(b.hexbytes[-8:]), "little")
    return ((insn & 0x7C000000) == 0x14000000 or (insn & 0xFE000000) == 0xD6000000 or
            (insn & 0xFF000000) == 0xD4000000)


def merge_fallthrough(blocks, executions, phases):
    """qemu ends a translation block where the code does not branch: at a 4 KiB page boundary and after
    a bounded number of instructions (a long SVE sequence splits every ~140). Priced one by one, the
    pieces of one straight-line run each pay their own pipeline fill, and where the cut falls moves with
    unrelated code (the layout). Here a block B is joined to the blocks that run straight on into it
    (they end at B's address without an unconditional jump) when their executions add up to B's, so
    that B is entered nowhere else: each of them gets its own copy of B (a loop whose first pass is a
    translation block of its own has two), chains included; llvm-mca then prices each run as one.
    aarch64 profiles only (fixed-size instructions). Returns the number of blocks joined away."""
    at_end = collections.defaultdict(list)
    for k, b in blocks.items():
        if b.file != "-" and executions.get(k, 0) > 0 and not _a64_ends_in_jump(b):
            at_end[(b.file, b.vaddr + len(b.hexbytes) // 2)].append(k)
    nxt = {}
    for k, b in blocks.items():
        e = executions.get(k, 0)
        preds = [p for p in at_end.get((b.file, b.vaddr), []) if p != k] if b.file != "-" and e > 0 else []
        if preds and abs(sum(executions[p] for p in preds) - e) <= 1e-9 * max(1.0, e):
            for p in preds:
                nxt[p] = k
    successors = set(nxt.values())
    joined = set()
    for head in [k for k in nxt if k not in successors]:
        chain, seen = [head], {head}
        while chain[-1] in nxt and nxt[chain[-1]] not in seen:
            chain.append(nxt[chain[-1]])
            seen.add(chain[-1])
        parts = [blocks[k] for k in chain]
        h = parts[0]
        key = (h.file, h.offset, "".join(b.hexbytes for b in parts))
        blocks[key] = Block(key, h.vaddr, sum(b.instructions for b in parts), h.offset, h.file, key[2])
        for counts in [executions] + list(phases.values()):
            if head in counts:
                counts[key] = counts.get(key, 0) + counts[head]
        joined.update(chain)
    for counts in [executions] + list(phases.values()):
        for k in joined:
            counts.pop(k, None)
    return len(joined) - len([k for k in nxt if k not in successors])


def estimate(terms, core, coverage=0.9995, max_blocks=20000, phase_filter=None):
    """The estimate as a dict (see print_report for the fields). phase_filter(label) -> bool restricts
    the totals and symbols to the matching phases (e.g. the ops of an inference, not the loading)."""
    target, blocks, executions, phases = combine(terms)
    if target == "aarch64":
        merge_fallthrough(blocks, executions, phases)
    if phase_filter is not None:
        executions = collections.defaultdict(float)
        for label, counts in phases.items():
            if phase_filter(label):
                for k, v in counts.items():
                    executions[k] += v
    want = "aarch64" if core["triple"] == "aarch64" else "x86_64"
    if target != want:
        sys.exit("estimate.py: the profile is of a %s program, core %s models %s" % (target, core["mcpu"], want))
    weight = {k: executions[k] * blocks[k].instructions for k in executions}
    order = sorted((k for k in weight if weight[k] > 0), key=lambda k: -weight[k])
    total_insns = sum(weight.values())
    positive = sum(weight[k] for k in order)
    chosen, acc = [], 0.0
    for k in order:
        if len(chosen) >= max_blocks or (positive > 0 and acc >= coverage * positive):
            break
        chosen.append(k)
        acc += weight[k]
    # Blocks whose combined count is negative (a difference of runs) are modeled too: they subtract.
    chosen += [k for k in weight if weight[k] < 0]
    asm = disassemble([blocks[k] for k in chosen], core)
    cpe, dropped = block_cycles(asm, core)
    # qemu runs an x86 rep-prefixed string instruction as a block per element, and llvm-mca has no data
    # for string moves (it charges 100 cycles): price each element instead, at half a cycle (8-byte
    # elements at 16 bytes a cycle, a fair steady state for a long rep movsq / stosq; an assumption).
    for k in chosen:
        if len(asm.get(k, [])) == 1 and asm[k][0].split()[0] in ("rep", "repe", "repne"):
            cpe[k] = REP_STRING_CYCLES_PER_ELEMENT
    covered_insns = sum(weight[k] for k in chosen)
    covered_cycles = sum(executions[k] * cpe[k] for k in chosen)
    cpi = covered_cycles / covered_insns if covered_insns else 0.0
    sym = Symbolizer()

    def cycles_of(k, execs):
        return execs * cpe[k] if k in cpe else execs * blocks[k].instructions * cpi

    per_symbol = collections.defaultdict(lambda: [0.0, 0.0])
    for k, e in executions.items():
        if e == 0:
            continue
        name, _ = sym.lookup(blocks[k].file, blocks[k].offset)
        per_symbol[name][0] += e * blocks[k].instructions
        per_symbol[name][1] += cycles_of(k, e)
    per_phase = {}
    for label, counts in phases.items():
        c = sum(cycles_of(k, e) for k, e in counts.items())
        i = sum(e * blocks[k].instructions for k, e in counts.items())
        syms = collections.defaultdict(float)
        for k, e in counts.items():
            syms[sym.lookup(blocks[k].file, blocks[k].offset)[0]] += cycles_of(k, e)
        top = sorted(syms.items(), key=lambda x: -x[1])[:3]
        per_phase[label] = {"instructions": i, "cycles": c, "top": [[n, v] for n, v in top]}
    total_cycles = sum(v[1] for v in per_symbol.values())
    return {
        "core": core["mcpu"],
        "core_label": core["label"],
        "instructions": total_insns,
        "cycles": total_cycles,
        "modeled_fraction": covered_insns / total_insns if total_insns else 0.0,
        "cycles_per_instruction": cpi,
        "symbols": sorted(([n, v[0], v[1]] for n, v in per_symbol.items()), key=lambda x: -x[2]),
        "phases": per_phase,
        "dropped_instructions": sorted(dropped),
    }


def add_memory_term(result, core, dram_bytes, ghz=None, dram_gbps=None):
    ghz = ghz or core["ghz"]
    dram_gbps = dram_gbps or core["dram_gbps"]
    result["ghz"] = ghz
    result["dram_gbps"] = dram_gbps
    result["dram_bytes"] = dram_bytes
    result["soc_source"] = core["source"]
    if ghz:
        result["compute_ms"] = result["cycles"] / (ghz * 1e6)
    if dram_gbps and dram_bytes is not None:
        result["memory_ms"] = dram_bytes / (dram_gbps * 1e6)
    if "compute_ms" in result and "memory_ms" in result:
        result["roofline_ms"] = max(result["compute_ms"], result["memory_ms"])
        result["bound"] = "memory" if result["memory_ms"] > result["compute_ms"] else "compute"
    return result


def print_report(r, top=15, out=sys.stdout):
    p = lambda *a: print(*a, file=out)
    p("estimate for %s (llvm-mca %s model; ESTIMATE, not a measurement)" % (r["core_label"], r["core"]))
    p("  instructions %.4g, estimated cycles %.4g (%.3f per instruction); %.2f%% of instructions in "
      "blocks modeled one by one, the rest at the mean" % (r["instructions"], r["cycles"], r["cycles_per_instruction"],
                                                          100 * r["modeled_fraction"]))
    if "compute_ms" in r:
        line = "  at %.2f GHz: compute %.3f ms" % (r["ghz"], r["compute_ms"])
        if "memory_ms" in r:
            line += "; memory %.3f ms (%.1f MB from DRAM at %.1f GB/s); roofline %.3f ms (%s-bound)" % (
                r["memory_ms"], r["dram_bytes"] / 1e6, r["dram_gbps"], r["roofline_ms"], r["bound"])
        p(line)
    if r["dropped_instructions"]:
        p("  not modeled (no scheduling data): %s" % ", ".join(r["dropped_instructions"][:8]))
    p("  %-70s %12s %12s %6s" % ("symbol", "instructions", "cycles", "share"))
    for name, insns, cycles in r["symbols"][:top]:
        p("  %-70s %12.4g %12.4g %5.1f%%" % (name[:70], insns, cycles, 100 * cycles / r["cycles"] if r["cycles"] else 0))


def parse_terms(args):
    terms = [(1.0, p) for p in args.profiles]
    for t in args.profile or []:
        coef, _, path = t.partition(":")
        terms.append((float(coef), path))
    if not terms:
        sys.exit("estimate.py: give a profile")
    return terms


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profiles", nargs="*", help="tb_profile files (coefficient 1)")
    ap.add_argument("--profile", action="append", help="COEF:FILE, a profile with a coefficient")
    ap.add_argument("--core", required=True, choices=sorted(CORES))
    ap.add_argument("--dram-bytes", type=float, help="bytes that must come from DRAM (memory term)")
    ap.add_argument("--ghz", type=float, help="clock of the modeled core (default: the modeled SoC's)")
    ap.add_argument("--dram-gbps", type=float, help="DRAM bandwidth (default: the modeled SoC's)")
    ap.add_argument("--coverage", type=float, default=0.9995,
                    help="fraction of instructions whose blocks are modeled one by one")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--json", help="write the whole estimate here as JSON")
    args = ap.parse_args()
    core = CORES[args.core]
    r = estimate(parse_terms(args), core, coverage=args.coverage)
    add_memory_term(r, core, args.dram_bytes, args.ghz, args.dram_gbps)
    print_report(r, args.top)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f)


if __name__ == "__main__":
    main()
