"""Digest of an ncu source page (--page source --print-source sass --csv,
bench/ncu_stalls.sh): the SASS lines with the most warp-stall samples, the
share per opcode, and where the wgmma waits (WARPGROUP.DEPBAR) sit among the
exponentials (MUFU.EX2) of the hot loop.

    python3 bench/ncu_sass_digest.py FILE.csv[.gz] [TOP]
"""
import csv
import gzip
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(f))
    hdr = rows[1]
    return hdr, [r for r in rows[2:] if len(r) == len(hdr)]


def opcode(text):
    words = text.split()
    w = words[1] if words[0].startswith("@") else words[0]
    return w.split(".")[0]


def main():
    hdr, data = load(sys.argv[1])
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    i_s = hdr.index("Warp Stall Sampling (All Samples)")
    i_e = hdr.index("Instructions Executed")
    total = sum(int(r[i_s] or 0) for r in data)
    print(f"{len(data)} SASS lines, {total} samples")
    print("-- lines with the most samples")
    for r in sorted(data, key=lambda r: -int(r[i_s] or 0))[:top]:
        print(f"{100 * int(r[i_s]) / total:5.1f}%  {r[1].strip()[:72]}")
    share = {}
    for r in data:
        op = opcode(r[1].strip())
        share[op] = share.get(op, 0) + int(r[i_s] or 0)
    print("-- samples per opcode")
    for op, n in sorted(share.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{100 * n / total:5.1f}%  {op}")
    hot = max(int(r[i_e] or 0) for r in data if "GMMA" in r[1])
    print("-- main loop (lines executed %d times, as its HGMMAs): waits among the exponentials" % hot)
    seq, ex2 = [], 0
    for r in data:
        if int(r[i_e] or 0) != hot:
            continue
        t = r[1].strip()
        if "MUFU.EX2" in t:
            ex2 += 1
        elif "WARPGROUP.DEPBAR" in t or "GMMA" in t and "gsb0" in t:
            seq.append(f"[{ex2} ex2] {t[:40]} ({100 * int(r[i_s]) / total:.1f}%)")
            ex2 = 0
    seq.append(f"[{ex2} ex2] loop end")
    print("\n".join(seq))


if __name__ == "__main__":
    main()
