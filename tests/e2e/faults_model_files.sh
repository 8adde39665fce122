#!/usr/bin/env bash
# Hostile model files (docs/model-files.md): a DVAE checkpoint or a mel-norms file that would
# run code under torch.load, or that lies about its sizes, is refused with exit 2 and one line
# naming the file and the key or offset, and runs nothing. The files are made here with
# Python's own pickle and zipfile (no torch needed): pickles whose __reduce__ calls
# os.system or eval (the classic exploit), storages larger than their entries or offsets past
# them, sizes whose product overflows, a zip bomb, duplicate entry names, a truncated file,
# the legacy format. The reader is driven through the test helper dvae-codes, which reads a
# DVAE and its norms as the codes program will; the golden DVAE gives Coqui's codes.
set -euo pipefail
source "$(dirname "$0")/faults_lib.bash"

G="$HERE/tests/golden/dvae"
TOOL="$BUILD/tests/tools/dvae-codes"
[ -x "$TOOL" ] || die "$TOOL not built"
printf 'clip\t61\t%s\n' "$G/mel.f32" > "$T/clips.tsv"

# the golden files: Coqui's codes
expect_rc 0 "$TOOL" "$G/dvae_small.pth" "$G/mel_stats.pth" "$T/clips.tsv"
want=$(grep -v '^#' "$G/codes.txt" | cut -f1 | tr '\n' ' ' | sed 's/ $//')
[ "$(cut -f2 "$T/out.txt")" = "$want" ] || die "codes $(cut -f2 "$T/out.txt"), Coqui's $want"

"$PY" - "$T" "$G/dvae_small.pth" <<'EOF'
import collections, os, pickle, sys, types, warnings, zipfile
T, golden = sys.argv[1], sys.argv[2]

# stand-ins named as torch's own, so pickle writes the GLOBALs torch.save writes
torch = types.ModuleType("torch"); utils = types.ModuleType("torch._utils")
sys.modules["torch"], sys.modules["torch._utils"] = torch, utils
class FloatStorage: pass
FloatStorage.__module__ = "torch"; torch.FloatStorage = FloatStorage
def _rebuild_tensor_v2(*args): pass
_rebuild_tensor_v2.__module__ = "torch._utils"; utils._rebuild_tensor_v2 = _rebuild_tensor_v2

class Storage:
    def __init__(self, key, numel): self.key, self.numel = key, numel
class Tensor:
    def __init__(self, storage, offset, size, stride): self.args = (storage, offset, size, stride)
    def __reduce__(self):
        return (_rebuild_tensor_v2, self.args + (False, collections.OrderedDict()))
class Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", FloatStorage, obj.key, "cpu", obj.numel)
        return None
def dumps(obj):
    import io
    buf = io.BytesIO(); Pickler(buf, protocol=2).dump(obj); return buf.getvalue()

class System:
    def __reduce__(self): return (os.system, (f"touch {T}/pwned",))
class Eval:
    def __reduce__(self): return (eval, (f"open('{T}/pwned', 'w')",))

def pth(name, pkl, entries=(("archive/data/0", bytes(24)),), method=zipfile.ZIP_STORED):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(f"{T}/{name}", "w", method) as z:
            z.writestr("archive/data.pkl", pkl)
            for n, d in entries:
                z.writestr(n, d)

def sd(tensor):
    return dumps(collections.OrderedDict([("encoder.0.0.weight", tensor)]))

pth("os_system.pth", dumps(collections.OrderedDict([("encoder.0.0.weight", System())])))
pth("eval.pth", pickle.dumps(Eval(), protocol=2))
pth("eval4.pth", pickle.dumps({"w": Eval()}, protocol=4))
pth("past_entry.pth", sd(Tensor(Storage("0", 1000), 0, (10, 100), (100, 1))))
pth("past_storage.pth", sd(Tensor(Storage("0", 6), 4, (2, 3), (3, 1))))
pth("overflow.pth", sd(Tensor(Storage("0", 6), 0, (2**40, 2**40), (2**40, 1))))
pth("missing_storage.pth", sd(Tensor(Storage("7", 6), 0, (6,), (1,))))
pth("bomb.pth", bytes(100 << 20), method=zipfile.ZIP_DEFLATED)
pth("duplicate.pth", sd(Tensor(Storage("0", 6), 0, (6,), (1,))),
    entries=(("archive/data/0", bytes(24)), ("archive/data/0", bytes(24))))
with open(f"{T}/legacy.pth", "wb") as f:
    f.write(pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2) + pickle.dumps({"w": 1}, protocol=2))
data = open(golden, "rb").read()
open(f"{T}/truncated.pth", "wb").write(data[: len(data) // 2])
open(f"{T}/norms_system.pth", "wb").write(open(f"{T}/os_system.pth", "rb").read())
EOF

check() { # FILE PATTERN: as the DVAE, exit 2 with one line naming the file; nothing ran
  expect_rc 2 "$TOOL" "$T/$1" "$G/mel_stats.pth" "$T/clips.tsv"
  one_line_error "^dvae-codes: $T/$1: .*$2"
  [ ! -e "$T/pwned" ] || die "$1 ran code"
}
check os_system.pth "data.pkl offset [0-9]+: global posix.system not allowed"
check eval.pth "data.pkl offset [0-9]+: global __builtin__.eval not allowed"
check eval4.pth "data.pkl offset [0-9]+: global builtins.eval not allowed"
check past_entry.pth "tensor 'encoder.0.0.weight': storage '0' declares 1000 float32 values, its entry holds 24 bytes"
check past_storage.pth "tensor 'encoder.0.0.weight': 6 values from offset 4 run past storage '0' \(6 values\)"
check overflow.pth "data.pkl offset [0-9]+: tensor of storage '0': sizes overflow"
check missing_storage.pth "its storage entry 'archive/data/7' is missing"
check bomb.pth "entry 'archive/data.pkl' claims 104857600 bytes, over the limit of 67108864"
check duplicate.pth "duplicate entry name 'archive/data/0'"
check legacy.pth "the legacy torch.save format"
check truncated.pth "truncated"
# the norms file too
expect_rc 2 "$TOOL" "$G/dvae_small.pth" "$T/norms_system.pth" "$T/clips.tsv"
one_line_error "^dvae-codes: $T/norms_system.pth: data.pkl offset [0-9]+: global posix.system not allowed"
# a DVAE given as the norms, and the norms as the DVAE
expect_rc 2 "$TOOL" "$G/dvae_small.pth" "$G/dvae_small.pth" "$T/clips.tsv"
one_line_error "dvae_small.pth: not a single tensor"
expect_rc 2 "$TOOL" "$G/mel_stats.pth" "$G/mel_stats.pth" "$T/clips.tsv"
one_line_error "mel_stats.pth: key 'encoder.0.0.weight' missing: not a DiscreteVAE state dict"
[ ! -e "$T/pwned" ] || die "a model file ran code"
echo "ok: hostile model files refused, one line each, nothing run"
