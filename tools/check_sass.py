"""Disassembles the op library and checks every main forward and backward kernel: WGMMA
present (HGMMA) and not serialized, TMA loads (UTMALDG), bulk reduce-adds (UBLKRED, backward), and no local-memory traffic
(LDL/STL, i.e. register spills) in the hot loops: the MMA warpgroups' main loop and the
producer warpgroup's (24-40 registers a thread) per-step loops, its TMA loads' and its dQ
writers'. Also reports spills elsewhere: in the MMA warps outside their loop (per task) and in
all of the producer's code (per task, once per CTA). Loops are the natural loops of each
kernel's control-flow graph (back edges to a dominating block), so a loop's body is what runs
in it wherever ptxas placed it. Serialized WGMMAs (ptxas's C7515 "wgmma.mma_async instructions are
serialized", a note in the build log that fails nothing) show as every HGMMA waiting on its own
group (gsb0): a kernel whose HGMMAs all carry gsb0 fails. Exit code 1 if a check fails.

  python tools/check_sass.py dash/_C.abi3.so
Uses cuobjdump from PATH, CUDA_HOME, or the copy Triton ships."""
import concurrent.futures
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile


def find_cuobjdump():
    candidates = [shutil.which("cuobjdump")]
    if os.environ.get("CUDA_HOME"):
        candidates.append(os.path.join(os.environ["CUDA_HOME"], "bin", "cuobjdump"))
    try:
        import triton
        candidates.append(str(pathlib.Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"))
    except ImportError:
        pass
    for c in candidates:
        if c and os.path.isfile(c):
            return c
    sys.exit("cuobjdump not found (install the CUDA toolkit or triton)")


def split_functions(sass):
    functions, name = {}, None
    for line in sass.splitlines():
        match = re.search(r"Function : (\S+)", line)
        if match:
            name = match.group(1)
            functions[name] = []
            continue
        match = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if name and match:
            functions[name].append((int(match.group(1), 16), match.group(2).strip()))
    return functions


def is_spill(ins):
    return re.search(r"\b(LDL|STL)\b", ins) is not None


_BRANCH = re.compile(r"^(?:@(!?)(U?P\w+)\s+)?(BRA|BRX|EXIT|RET|CALL|JMP|JMX)(\S*)\s*(.*)$")


def basic_blocks(code):
    """The control-flow graph of one function's SASS (`code`: (address, instruction) in address
    order): its blocks (index ranges into `code`) and each block's successors. A branch with a
    predicate (other than PT) also falls through, as do BRA.DIV / BRA.CONV / BRA.U.ANY and calls;
    BRX / JMX (jump tables) have no known targets: the blocks they reach have no predecessor
    here, and natural_loops takes every such block as an entry."""
    index = {a: i for i, (a, _) in enumerate(code)}
    starts, jumps = {0}, {}
    for i, (_, ins) in enumerate(code):
        m = _BRANCH.match(ins)
        if not m:
            continue
        negated, pred, op, suffix, rest = m.groups()
        conditional = pred is not None and not (pred in ("PT", "UPT") and not negated)
        conditional |= op == "BRA" and suffix in (".DIV", ".CONV", ".U.ANY")
        target = re.search(r"0x([0-9a-f]+)", rest) if op in ("BRA", "CALL", "JMP") else None
        targets = [index[int(target.group(1), 16)]] if target and int(target.group(1), 16) in index else []
        jumps[i] = (targets, conditional or op == "CALL")
        starts.update(targets)
        if i + 1 < len(code):
            starts.add(i + 1)
    order = sorted(starts)
    blocks = [(first, (order[b + 1] if b + 1 < len(order) else len(code)) - 1) for b, first in enumerate(order)]
    block_of = {first: b for b, (first, _) in enumerate(blocks)}
    succs = []
    for b, (_, last) in enumerate(blocks):
        targets, falls = jumps.get(last, ([], True))
        nxt = [block_of[t] for t in targets] + ([b + 1] if falls and b + 1 < len(blocks) else [])
        succs.append(sorted(set(nxt)))
    return blocks, succs


def natural_loops(blocks, succs):
    """The graph's natural loops, {header block: its body's blocks} (back edges t -> h with h
    dominating t, merged per header). Dominators below a virtual entry above block 0 and every
    block without a predecessor (jump-table targets), by the iterative algorithm in reverse
    postorder."""
    n = len(blocks)
    preds = [[] for _ in range(n)]
    for b, ss in enumerate(succs):
        for t in ss:
            preds[t].append(b)
    roots = [0] + [b for b in range(1, n) if not preds[b]]
    postorder, seen = [], [False] * n
    for root in roots + list(range(n)):  # then any block left (a cycle entered by a jump table only)
        if seen[root]:
            continue
        if root not in roots:
            roots.append(root)
        seen[root] = True
        stack = [(root, iter(succs[root]))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                postorder.append(node)
                stack.pop()
            elif not seen[child]:
                seen[child] = True
                stack.append((child, iter(succs[child])))
    rpo = postorder[::-1]
    virtual = n
    position = {b: i for i, b in enumerate(rpo)}
    position[virtual] = -1
    idom = {virtual: virtual, **{root: virtual for root in roots}}
    root_set = set(roots)

    def intersect(a, b):
        while a != b:
            while position[a] > position[b]:
                a = idom[a]
            while position[b] > position[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for b in rpo:
            if b in root_set:
                continue
            done = [p for p in preds[b] if p in idom]
            new = done[0]
            for p in done[1:]:
                new = intersect(p, new)
            if idom.get(b) != new:
                idom[b], changed = new, True

    def dominates(h, t):
        while t != virtual:
            if t == h:
                return True
            t = idom[t]
        return False

    loops = {}
    for t in range(n):
        for h in succs[t]:
            if dominates(h, t):
                body, work = loops.setdefault(h, {h}), [t]
                while work:
                    x = work.pop()
                    if x not in body:
                        body.add(x)
                        work.extend(preds[x])
    return loops


class FunctionLoops:
    """One function's natural loops (`code`: (address, instruction) in address order), for the
    questions below."""

    def __init__(self, code):
        self.code = code
        self.blocks, succs = basic_blocks(code)
        self.loops = natural_loops(self.blocks, succs)

    def body(self, header):
        return [self.code[i] for b in sorted(self.loops[header]) for i in range(self.blocks[b][0], self.blocks[b][1] + 1)]

    def issuing(self, opcode, region=None):
        """{header: body blocks} of the loops that issue `opcode`, headed in `region` (a set of
        addresses; None: anywhere)."""
        issues = re.compile(rf"\b{opcode}\b")
        blocks = {b for b, (first, last) in enumerate(self.blocks)
                  if any(issues.search(i) for _, i in self.code[first:last + 1])}
        return {h: body for h, body in self.loops.items()
                if body & blocks and (region is None or self.code[self.blocks[h][0]][0] in region)}

    def innermost_issuing(self, opcode, region=None):
        """Headers of the loops that issue `opcode` and contain no other loop that does (for a TMA
        load: a step loop, not the task loop around it, nor a wait's retry loop inside it)."""
        found = self.issuing(opcode, region)
        return sorted(h for h, body in found.items() if not any(o != h and o in body for o in found))

    def enclosing_issuing(self, opcode, region=None):
        """Headers of the smallest loops around the innermost ones that issue `opcode` (the dQ
        writer's step loop around its loop of bulk reduce-adds)."""
        found = self.issuing(opcode, region)
        headers = set()
        for h in self.innermost_issuing(opcode, region):
            around = [o for o, body in found.items() if o != h and h in body]
            if around:
                headers.add(min(around, key=lambda o: len(found[o])))
        return sorted(headers)


def analyse(instructions):
    count = lambda op, seq: sum(re.search(rf"\b{op}\b", i) is not None for _, i in seq)  # noqa: E731
    spills = lambda body: sum(is_spill(i) for _, i in body)  # noqa: E731
    dealloc = next((a for a, i in instructions if "USETMAXREG.DEALLOC" in i), None)
    mma = [(a, i) for a, i in instructions if dealloc is None or a < dealloc]
    producer = [(a, i) for a, i in instructions if dealloc is not None and a >= dealloc]
    loops = FunctionLoops(instructions)
    # The MMA main loop: the innermost (shortest) loop of the MMA warps' code that issues HGMMA.
    main_loop = min((loops.body(h) for h in loops.innermost_issuing("HGMMA", {a for a, _ in mma})), key=len,
                    default=[])
    main_spills = spills(main_loop)
    # The producer warpgroup's per-step loops: the innermost loops that issue a TMA load (one per
    # schedule, stream and dealing), and the dQ writers' step loops (around their bulk reduce-adds).
    region = {a for a, _ in producer}
    step_spills = [spills(loops.body(h)) for h in loops.innermost_issuing("UTMALDG", region)]
    writer_spills = [spills(loops.body(h)) for h in loops.enclosing_issuing("UBLKRED", region)]
    # An HGMMA that ends a commit group carries gsb0; with WGMMAs serialized every one does.
    hgmma_gsb0 = sum(re.search(r"\bHGMMA\b.*\bgsb0\b", i) is not None for _, i in instructions)
    return dict(hgmma=count("HGMMA", instructions), serialized=hgmma_gsb0 > 0 and hgmma_gsb0 == count("HGMMA", instructions),
                utmaldg=count("UTMALDG", instructions),
                ublkred=count("UBLKRED", instructions), main_loop_len=len(main_loop), main_spills=main_spills,
                mma_other_spills=sum(is_spill(i) for _, i in mma) - main_spills,
                producer_spills=sum(is_spill(i) for _, i in producer),
                producer_step_spills=max(step_spills, default=0), writer_step_spills=max(writer_spills, default=0))


def dump_sass(path):
    """The library's SASS: its cubins extracted (cuobjdump -xelf) and disassembled in parallel,
    one process each (the whole library in one cuobjdump call took ~1.5 minutes, one core)."""
    cuobjdump = find_cuobjdump()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([cuobjdump, "-xelf", "all", os.path.abspath(path)], cwd=tmp, capture_output=True, check=True)
        # In the library's order (cuobjdump numbers them: _C.abi3.<n>.sm_90.cubin).
        cubins = sorted(pathlib.Path(tmp).glob("*.cubin"),
                        key=lambda c: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", c.name)])
        if not cubins:
            return subprocess.run([cuobjdump, "--dump-sass", path], capture_output=True, text=True, check=True).stdout
        dump = lambda cubin: subprocess.run([cuobjdump, "--dump-sass", str(cubin)], capture_output=True,  # noqa: E731
                                            text=True, check=True).stdout
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            return "".join(pool.map(dump, cubins))


def main(path):
    sass = dump_sass(path)
    failed, found = False, False
    for name, instructions in split_functions(sass).items():
        kind = "bwd" if "attn_bwd_sm90_kernel" in name else "fwd" if "attn_fwd_sm90_kernel" in name else None
        if kind is None:
            continue
        found = True
        r = analyse(instructions)
        config = re.search(r"(?:Bwd|Fwd)ConfigILi(\d+)ELi(\d+)E", name)
        dtype = "fp16" if "half_t" in name else "bf16"
        mask = "band" if "BandMask" in name else "full"
        # The config's flags after the mask: the backward's softcap one; the forward's short-walk,
        # softcap and K / V multicast ones.
        flags = re.search(r"(?:Band|Full)MaskE((?:Lb[01]E)*)", name).group(1).replace("L", "").split("E")[:-1]
        names = ("softcap",) if kind == "bwd" else ("short", "softcap", "kv_multicast")
        flag = "".join(f" {n}" for n, f in zip(names, flags) if f == "b1")
        dims = (config.group(1) if config.group(1) == config.group(2) else f"{config.group(1)}x{config.group(2)}"
                if config else "")
        label = f"{kind} hdim{dims} {dtype} {mask}{flag}" if config else name[:40]
        ok = r["hgmma"] > 0 and not r["serialized"] and r["utmaldg"] > 0 and (kind == "fwd" or r["ublkred"] > 0) and \
            r["main_loop_len"] > 0 and r["main_spills"] == 0 and r["producer_step_spills"] == 0 and \
            r["writer_step_spills"] == 0
        failed |= not ok
        print(f"{label:32s} HGMMA {r['hgmma']:3d}{' SERIALIZED' if r['serialized'] else ''} UTMALDG {r['utmaldg']:3d} UBLKRED {r['ublkred']:2d} | "
              f"MMA main loop ({r['main_loop_len']} instr) LDL/STL {r['main_spills']} | "
              f"MMA per-task {r['mma_other_spills']} | producer warps {r['producer_spills']} "
              f"(a step loop <= {r['producer_step_spills']}, dQ writer step <= {r['writer_step_spills']}) | "
              f"{'ok' if ok else 'FAIL'}")
    if not found:
        print("no attention kernel found")
        failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(next(pathlib.Path("dash").glob("_C*.so"))))
