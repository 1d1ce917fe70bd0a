"""The hostile and oversized inputs of test_cli_safety.py and test_cli_limits.py, plain data
(no test machinery), so that ``python -m benchmarks rejections`` times the same inputs."""

# Hostile programs, by kind. ``{c}`` is a canary file's path: each payload would create it if
# any part of it ran. Each pair is (program, what the error must say).
HOSTILE_PROGRAMS = {
    # attribute chains
    "subclasses": ("y = ().__class__.__bases__[0].__subclasses__()", "attribute access ('.')"),
    "globals-chain": (
        "y = x.__class__.__init__.__globals__['os'].system('touch {c}')",
        "attribute access ('.')",
    ),
    "import-call": ("y = __import__('os').system('touch {c}')", "attribute access ('.')"),
    "method": ("y = x.system('ls')", "attribute access ('.')"),
    "literal-attr": ("y = (1).__class__", "attribute access ('.')"),
    # dunder and private names
    "dunder-name": ("y = __builtins__", "names may not start with '_'"),
    "dunder-target": ("__x = x", "names may not start with '_'"),
    "internal-helper": ("y = _index(x, 0)", "unknown function '_index'"),
    "internal-marker": ("y = x * _none", "names may not start with '_'"),
    "dunder-call": ("y = __import__('os')", "unknown function '__import__'"),
    # builtins
    "open": ("y = open('{c}', 'w')", "unknown function 'open'"),
    "getattr": ("y = getattr(x, '__class__')", "unknown function 'getattr'"),
    "globals": ("y = globals()", "unknown function 'globals'"),
    "breakpoint": ("y = breakpoint()", "unknown function 'breakpoint'"),
    "compile": ("y = compile('1', 'f', 'eval')", "unknown function 'compile'"),
    # eval, exec, import
    "eval": ("y = eval(\"open('{c}', 'w')\")", "unknown function 'eval'"),
    "exec": ("y = exec(\"open('{c}', 'w')\")", "unknown function 'exec'"),
    "import": ("import os", "it does not import 'os'"),
    "from-import": ("from os import system", "it does not import 'os'"),
    "bare-call": ("__import__('os').system('touch {c}')", "found an expression with no"),
    # lambdas and comprehensions
    "lambda": ("y = lambda: 1", "a lambda is not allowed"),
    "lambda-call": ("y = (lambda: open('{c}', 'w'))()", "only named functions can be called"),
    "list-comp": ("y = [open('{c}', 'w') for i in x]", "a 'for' loop is not allowed"),
    "set-comp": ("y = {{open('{c}', 'w') for i in x}}", "a 'for' loop is not allowed"),
    "generator": ("y = sum(open('{c}', 'w') for i in x)", "a 'for' loop is not allowed"),
    "walrus": ("y = (z := open('{c}', 'w'))", "':=' is not allowed"),
    # strings, f-strings and format strings
    "string": ("y = 'abc'", "a string is not allowed"),
    "bytes": ("y = b'abc'", "a string is not allowed"),
    "f-string": ('y = f\'{{open("{c}", "w")}}\'', "a string is not allowed"),
    "format-method": ("y = '{{0.__class__}}'.format(x)", "attribute access ('.')"),
    "percent-format": ("y = '%s' % x", "a string is not allowed"),
    # unicode look-alikes and invisible characters
    "minus-sign": ("y = x \u2212 1", "U+2212 MINUS SIGN"),
    "fullwidth-plus": ("y = x \uff0b 1", "U+FF0B FULLWIDTH PLUS SIGN"),
    "fullwidth-eval": (
        "y = \uff45\uff56\uff41\uff4c(\"open('{c}', 'w')\")",
        "unknown function 'eval'",
    ),
    "fullwidth-underscores": (
        "y = \uff3f\uff3fimport\uff3f\uff3f('os')",
        "U+FF3F FULLWIDTH LOW LINE is not part of the language",
    ),
    "bidi-override": ("y = x # \u202e ; z = open('{c}')", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    "zero-width": ("y = x\u200b+1", "U+200B ZERO WIDTH SPACE"),
    "cyrillic-x": ("y = \u0445 + 1", "U+0445 CYRILLIC SMALL LETTER HA"),
    # very long or deeply nested text
    "nested-parentheses": ("y = " + "(" * 500 + "x" + ")" * 500, "too many nested parentheses"),
    "nested-minus": ("y = " + "-" * 50_000 + "x", "nested too deeply to parse"),
    "long-chain": ("y = " + "+".join(["x"] * 300), "nests operations more than 100 deep"),
    "too-long": ("y = x" + " " * 100_001, "the limit is 100,000"),
    "huge-integer": ("y = x * 9" + "9" * 5000, "a whole number of more than 4,300 digits"),
    # smuggling through statements, keywords, indices, unpacking and constructors
    "semicolon": ("y = x; __import__('os').system('touch {c}')", "statement 2"),
    "newline": ("y = x\n__import__('os').system('touch {c}')", "line 2"),
    "keyword": (
        "y = sum(x, dim=__import__('os'))",
        "dim of sum must be an int, a tuple of ints, or None",
    ),
    "index": ("y = x[__import__('os')]", "unknown function '__import__'"),
    "star-args": ("y = sum(*x)", "'*' unpacking is not allowed"),
    "star-kwargs": ("y = sum(**x)", "'**' unpacking is not allowed"),
    "constructor": (
        "w = ones(__import__('os').system('touch {c}')); y = w * x",
        "not allowed in a value",
    ),
    "constructor-keyword": (
        "w = randn(2, requires_grad=open('{c}', 'w')); y = w * x",
        "a nested call is not allowed in a value",
    ),
    "attribute-target": ("x.y = 1", "the left-hand side must be a single name"),
    "subscript-of-a-call": ("f(x)[0] = 1", "the left-hand side must be a single name"),
    "if-expression": ("y = x if x else x", "an if-expression"),
    "comparison": ("y = x in x", "'in' is not a comparison of the language"),
}

# Hostile values and options: (arguments after the program, what the error must say).
HOSTILE_OPTIONS = {
    "value-import": (["--x", "__import__('os').system('touch {c}')"], "not allowed in a value"),
    "value-constructor": (["--x", "ones(open('{c}', 'w'))"], "a nested call"),
    "value-open": (["--x", "open('{c}', 'w')"], "unknown constructor 'open'"),
    "value-lambda": (["--x", "(lambda: 1)()"], "unknown constructor (only names)"),
    "input-eval": (["-i", "x=eval('1')"], "unknown constructor 'eval'"),
    "v-exec": (["--x", "1", "--v", "exec('1')"], "unknown constructor 'exec'"),
    "value-huge": (["--x", "randn(100000, 100000)"], "the limit is 50,000,000"),
    "value-eye": (["--x", "eye(100000)"], "eye(100000,) would have 10,000,000,000"),
    "value-deep": (["--x", "[" * 1000 + "]" * 1000], "too many nested parentheses"),
    "file-device": (["--x", "@/dev/zero"], "is not a regular file"),
    "file-proc": (["--x", "@/proc/self/environ"], "unknown file type"),
    "file-pickle": (["--x", "@{pickle}"], "holds Python objects"),
    "wrt-code": (["--x", "1", "--wrt", "__import__('os')"], "--wrt names"),
    "of-dunder": (["--x", "1", "--of", "__class__"], "--of names '__class__'"),
    "dtype": (["--x", "1", "--dtype", "object"], "--dtype: 'object' is not one of"),
    "format": (["--x", "1", "--format", "{{0.__class__}}"], "--format: '{0.__class__}' is not"),
}

# Powers and exponentials far beyond float range: each is a float inf (with a warning), never
# an exact number of a billion digits.
HUGE_POWERS = [
    "y = x * 2**2**2**30",
    "y = x * 10**100000",
    "y = x ** 2**2**2**30",
    "y = x ** 10**100000",
    "y = exp(exp(exp(x * 1e308)))",
]

# --batch ... --out that would remove what gradcli did not write, each run from a working
# folder ``work`` beside ``home`` ($HOME), holding: points.npy, p.npz, p.zarr and p.parquet
# (the same points), data/points.npy, outdir/thesis.txt (a user's folder), store.zarr (a
# user's Zarr store). Each is (--batch, --out, what the error must say); nothing may change.
HOSTILE_OUTPUTS = {
    "users-folder": ("@points.npy", "outdir", "is a folder that gradcli did not write"),
    "users-folder-slash": ("@points.npy", "outdir/", "is a folder that gradcli did not write"),
    "users-zarr-store": ("@points.npy", "store.zarr", "is a folder that gradcli did not write"),
    "inputs-folder": ("@data/points.npy", "data/", "holds the command's input data/points.npy"),
    "working-folder": ("@points.npy", "./", "is the working folder"),
    "working-folder-dot": ("@points.npy", ".", "is the working folder"),
    "parent-folder": ("@points.npy", "..", "holds the working folder"),
    "root-folder": ("@points.npy", "/", "holds the working folder"),
    "home-folder": ("@points.npy", "{home}/", "is your home folder"),
    "input-npy": ("@points.npy", "points.npy", "is one of the command's input files"),
    "input-npz": ("@p.npz", "p.npz", "is one of the command's input files"),
    "input-parquet": ("@p.parquet", "p.parquet", "is one of the command's input files"),
    "input-zarr": ("@p.zarr", "p.zarr", "is one of the command's input files"),
    "input-folder-of-parts": ("@data", "data/", "holds the command's input data/points.npy"),
}

# Chunked points whose metadata declares blocks far larger than the file (a Zarr store of
# metadata alone, a Parquet file of a constant column): each refused, before a block is read,
# under the --max-memory given. (kind, rows of the block, --max-memory, what the error says)
EXPANDING_STORES = {
    "zarr-metadata-alone": ("zarr", 2_000_000, "20MB", "a chunk of the array x"),
    "zarr-chunk-beyond-shape": ("zarr-wide", 2_000_000, "20MB", "shape (2000000, 2) of float64"),
    "parquet-constant-column": ("parquet", 1_000_000, "20MB", "declares 1,000,000 rows"),
}

# ``gradcli run`` scripts that would build a huge text (run under ``--max-memory 50MB``, after
# ``x = torch.tensor(2.0, requires_grad=True)``), or build text in ways gradcli run does not
# take: (the statements, the exit code, what stderr must say). Widths and precisions beyond
# sys.maxsize are Python's own ValueError (exit 1), as Python raises it before making anything.
HOSTILE_SCRIPTS = {
    "huge-width": ('print(f"{x.item():>100000000}")', 2, "up to 100,000,438 characters"),
    "huge-precision": ('print(f"{x.item():.100000000f}")', 2, "the spec '.100000000f' makes"),
    "huge-grouped-precision": ('print(f"{x.item():,.100000000e}")', 2, "the spec ',.100000000e'"),
    "huge-width-of-text": ("print(f\"{'a':>100000000}\")", 2, "the spec '>100000000' makes"),
    "huge-width-of-int": ('print(f"{x.numel():_>100000000b}")', 2, "the spec '_>100000000b'"),
    "huge-width-repr": ('f"{x.item()!r:^100000000}"', 2, "the spec '^100000000' makes"),
    "nested-fstrings": (
        "print(f\"{f'{x.item():>30000000}':>30000000}\")",
        2,
        "the spec '>30000000' makes up to 30,000,438 characters",
    ),
    "widths-that-add-up": (
        'print(f"{x.item():>4000000}" f"{x.item():>4000000}" f"{x.item():>4000000}" '
        'f"{x.item():>4000000}")',
        2,
        "the budget is 50.0 MB (--max-memory)",
    ),
    "huge-tolist": ("y = torch.zeros(1000000)\nprint(y.tolist())", 2, "tolist() of 1,000,000"),
    "width-beyond-maxsize": ('print(f"{x.item():>9223372036854775808}")', 1, "Too many decimal"),
    "huge-width-unknown-code": (
        'print(f"{x.item():>100000000q}")',
        1,
        "ValueError: Unknown format code 'q' for object of type 'float'",
    ),
    "huge-width-of-none": (
        'print(f"{x.grad:>100000000}")',
        1,
        "TypeError: unsupported format string passed to NoneType.__format__",
    ),
    "nested-spec": ('w = 100000000\nprint(f"{x:>{w}}")', 2, "the spec '>100000000' makes"),
    "repetition": ('print("a" * 10**10)', 2, "str * 10,000,000,000 would have"),
    "doubling": ("s = 'ab'\nfor i in range(40):\n    s = s + s", 2, "joining two of str would"),
    "join": ('print("".join(["a"] * 10**10))', 2, "list * 10,000,000,000 would have"),
    "percent-star": ('print("%*d" % (10**10, 1))', 2, "%-formatting with widths written out"),
    "str-call": ("print(str(x) * 10**10)", 2, "str * 10,000,000,000 would have"),
    "format-call": ('print(format(x.item(), ">10000000000"))', 2, "the spec '>10000000000'"),
    "ljust": ("print('a'.ljust(10**10))", 2, "str.ljust would have 10,000,000,000 items"),
    "format-method-width": ("print('{:>10000000000}'.format(1))", 2, "the spec '>10000000000'"),
    "list-of-range": ("y = list(range(10**12))", 2, "the script ran more than 100,000 steps"),
    "power": ("y = 10 ** 10 ** 10", 2, "10 ** 10000000000 would be an integer"),
    "shift": ("y = 1 << 10**10", 2, "1 << 10000000000 would be an integer"),
    "while-true": ("while True:\n    pass", 2, "the script ran more than 100,000 steps"),
    "recursion": ("def f(n):\n    return f(n + 1)\nf(0)", 2, "the script's calls nest more than"),
    "exponential-comprehension": (
        "y = [[[[[i for i in range(100)] for j in range(100)] for k in range(100)] "
        "for m in range(100)] for n in range(100)]",
        2,
        "the script ran more than 100,000 steps",
    ),
}

# Hostile scripts for ``gradcli run``, by kind: each is refused before it runs (exit 2), and
# ``{c}``, a canary file's path, would be created if any part of it ran.
HOSTILE_RUN = {
    "getattr-dunder": ("y = getattr(torch.ones(2), '__dict__')", "start with '__'"),
    "type-mro": ("y = type(torch.ones(2)).__mro__", "start with '__'"),
    "fstring-conversion": ("print(f'{torch.ones(2).__dict__!r}')", "start with '__'"),
    "decorator": ("@__import__('os').system\ndef f():\n    pass", "start with '__'"),
    "default-argument": ("def f(a=().__class__.__bases__):\n    return a", "start with '__'"),
    "builtins": ("__builtins__['open']('{c}', 'w')", "start with '__'"),
    "dunder-import": ("__import__('os').system('touch {c}')", "start with '__'"),
    "import-os": ("import os\nos.system('touch {c}')", "it does not import 'os'"),
    "from-os": ("from os import system\nsystem('touch {c}')", "it does not import 'os'"),
    "subprocess": ("import subprocess", "it does not import 'subprocess'"),
    "importlib": ("import importlib", "it does not import 'importlib'"),
    "open": ("f = open('{c}', 'w')", "gradcli run does not take open()"),
    "eval": ("eval(\"open('{c}', 'w')\")", "gradcli run does not take eval()"),
    "exec": ("exec(\"open('{c}', 'w')\")", "gradcli run does not take exec()"),
    "compile": ("compile('1', 'f', 'eval')", "gradcli run does not take compile()"),
    "globals": ("globals()['x'] = 1", "gradcli run does not take globals()"),
    "format-method": ("print('{0.__class__}'.format(1))", "a format field by position or name"),
    "lambda-dunder": ("f = lambda: ().__class__.__base__\nf()", "start with '__'"),
    "comprehension-dunder": ("y = [i.__dict__ for i in range(3)]", "start with '__'"),
    "class-getattribute": (
        "class A:\n    def __getattribute__(self, n):\n        open('{c}', 'w')\nA().x",
        "does not honour __getattribute__",
    ),
    "class-mro": ("class A:\n    pass\ntype(A()).__mro__", "start with '__'"),
    "super-getattribute": (
        "class A:\n    def f(self):\n        return super().__getattribute__('x')\nA().f()",
        "start with '__'",
    ),
    "class-dict": ("class A:\n    pass\nA().__dict__", "start with '__'"),
    "torch-internals": ("torch._C._set_grad_enabled(False)", "has no attribute '_C'"),
}
