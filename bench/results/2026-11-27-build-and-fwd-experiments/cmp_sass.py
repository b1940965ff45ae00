# Compares each kernel of the objects / libraries given after the first with the same kernel in the first (SASS text).
import subprocess, sys, re
sys.path.insert(0, 'tools')
from check_sass import split_functions, find_cuobjdump
cu = find_cuobjdump()
def funcs(path):
    out = subprocess.run([cu, '-sass', path], capture_output=True, text=True).stdout
    return {k: [i for _, i in v] for k, v in split_functions(out).items()}
lib = funcs(sys.argv[1])
for obj in sys.argv[2:]:
    f = funcs(obj)
    for name, code in f.items():
        if name not in lib:
            print(obj, name[:60], 'MISSING in lib'); continue
        print(obj.split('/')[-1], name[:70], 'identical' if lib[name] == code else f'DIFFERENT ({len(code)} vs {len(lib[name])})')
