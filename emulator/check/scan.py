"""The job's Python code as the image's interpreter reads it (docs/static-checks.md "Code scan").

Preflight runs this program with the image's own interpreter, inside the image's root
filesystem, without site-packages: `python3 -I -S -B scan.py < request.json` (the program
text may also be given with `-c`). It sees nothing of the job but the request on stdin:

    {"files": [{"path": "train.py", "text": "...source..."}],
     "entry": {"script": "train.py", "args": ["--epochs", "3"]} or null}

and prints one JSON object (ASCII only) on stdout:

    {"python": "3.11.2",
     "files": [{"path", "syntax_error": null or {"line", "column", "message"},
                "imports": [{"module", "line", "guarded", "level", "scope", "conditional",
                             "names", "main"}],
                "dynamic": [{"line", "module", "exact"} or {"line", "file"}],
                "env": [{"name", "line", "how", "default", "guarded", "scope"}],
                "paths": [{"value", "line", "option", "use"}],
                "perf": [{"rule", "line", "detail"}],
                "main": bool, "parser": bool, "cuda": 0 or a line}],
     "argparse": null or {"file", "parse_known", "allow_abbrev", "dynamic",
                          "options": [{"line", "flags", "dest", "type", "required", "choices",
                                       "nargs", "action", "has_default", "default"}],
                          "positionals": [{"line", "dest", "nargs", "type", "choices"}]}}

An environment read has `default` when the code gives one (`os.environ.get("X", d)`,
`os.getenv("X", d)`, `... or d`), and `guarded` when the code makes sure the read cannot fail:
under `if "X" in os.environ:` (or `if os.environ.get("X"):`, `... is not None`, in either
branch of the negated test, and in an `and`/`or` chain after the test), after
`if "X" not in os.environ: return` (or raise, continue, break, sys.exit) in the same block, or
inside `try` with `except KeyError` (LookupError, Exception, BaseException or bare). `scope` is
"module" when the read runs as the file loads (class bodies too), "function" inside a def or
lambda. A path's `option` is the argparse option whose default it is; `use` is what the code
does with it, from the call it is given to: "write" (open(p, "w"), torch.save, makedirs,
save_*, to_csv, SummaryWriter...), "model" (from_pretrained, load_state_dict, load_model...),
"read" (open(p), load, read_csv, ImageFolder, listdir...) or "" when no call tells.

`argparse` describes the entry script's parser. A file the scanner itself fails on gets
"error": "<type>: <message>" and empty lists; the other files are unaffected. Environment
variables the job's code sets are not reported as reads. `main` says the file runs code under
`if __name__ == "__main__":`, an import's `conditional` that it sits under an `if` other than
that one, in a loop, in a `try` or `with` block or an `except` (it may not run), its `main` that
it sits under that test (it runs only when the file is the script Python runs, not when it is
imported), its `names` what `from M import a, b` takes from M (a may be a submodule).
`dynamic` lists the imports whose module is computed: `importlib.import_module(X)`,
`__import__(X)` and `runpy.run_module(X)` with `module` the literal name (`exact`) or the literal
start of a name built at run time ("models." in `"models." + name`, "" when none), and
`exec(open("F").read())` or `runpy.run_path("F")` with the literal `file` F. `parser` that it builds an
ArgumentParser, `cuda` the first line that names CUDA (`.cuda`, `"cuda"`, `"cuda:0"`); an
option's `default` is its literal text default, else null (`preflight init` reads them). Lines
and columns are 1-based.
Standard library only, Python 3.6 to 3.13; each tree is walked once."""

import ast
import gc
import json
import sys

# What an except clause must catch for the code in its try to survive the failure.
IMPORT_FAILURES = frozenset(["ImportError", "ModuleNotFoundError", "Exception", "BaseException", "*"])
KEY_FAILURES = frozenset(["KeyError", "LookupError", "Exception", "BaseException", "*"])
EXITS = frozenset(["exit", "quit", "_exit", "abort"])  # sys.exit(), exit(), os._exit()

# What a call does with a path given to it (by its name, the last part of a dotted callee).
WRITE_CALLS = frozenset([
    "save", "save_image", "savez", "savez_compressed", "save_pretrained", "save_model", "save_weights",
    "save_checkpoint", "save_state", "to_csv", "to_pickle", "to_json", "to_parquet", "to_hdf",
    "makedirs", "mkdir", "SummaryWriter", "ModelCheckpoint", "FileHandler", "imwrite", "imsave",
    "write_text", "write_bytes", "savefig", "export"])
MODEL_CALLS = frozenset([
    "from_pretrained", "load_state_dict", "load_model", "load_weights", "load_checkpoint",
    "load_from_checkpoint", "restore"])
READ_CALLS = frozenset([
    "open", "load", "loadtxt", "genfromtxt", "read_csv", "read_json", "read_parquet", "read_pickle",
    "read_table", "read_excel", "read_text", "read_bytes", "ImageFolder", "DatasetFolder",
    "load_dataset", "load_from_disk", "listdir", "scandir", "walk", "glob", "iglob", "imread",
    "File", "TFRecordDataset", "list_files", "exists", "isfile", "isdir"])
# Calls that pass a path through: the call around them says what it is for.
PATH_WRAPPERS = frozenset(["join", "Path", "PurePath", "expanduser", "expandvars", "abspath",
                           "realpath", "normpath", "str", "format", "fspath"])

# `if` tests on the interpreter or the platform: imports under them are deliberate.
ENVIRONMENT_TESTS = frozenset([("sys", "version_info"), ("sys", "version"), ("sys", "platform"),
                               ("sys", "implementation"), ("os", "name"), ("platform", "system")])

# TensorFlow calls that add an operation to the graph (tf.<name>, or tf.<module>.<name>).
TF_OPS = frozenset([
    "constant", "Variable", "placeholder", "get_variable", "assign", "assign_add", "assign_sub",
    "add", "add_n", "subtract", "multiply", "divide", "matmul", "zeros", "ones", "zeros_like",
    "ones_like", "fill", "concat", "stack", "reshape", "cast", "transpose", "squeeze",
    "expand_dims", "gather", "where", "one_hot", "argmax", "argmin", "equal", "square", "sqrt",
    "exp", "log", "abs", "maximum", "minimum", "identity", "gradients", "group",
    "convert_to_tensor", "global_variables_initializer", "local_variables_initializer",
    "variables_initializer", "initialize_all_variables", "py_func", "Print"])
TF_OP_PREFIXES = ("reduce_", "random_")
TF_OP_MODULES = frozenset(["summary", "math", "nn", "random", "linalg", "image", "io"])

# Calls that import or run a module or file named by their first argument.
DYNAMIC_CALLS = frozenset(["import_module", "__import__", "run_module", "run_path", "exec"])

NARGS_CONSTANTS = {"REMAINDER": "...", "OPTIONAL": "?", "ZERO_OR_MORE": "*", "ONE_OR_MORE": "+"}
PARSER_MAKERS = frozenset(["ArgumentParser", "add_argument_group", "add_mutually_exclusive_group"])
MAX_PATH_LENGTH = 300

NOT_LITERAL = object()

if sys.version_info >= (3, 8):
    STRING_NODE = ast.Constant

    def string_value(node):
        value = node.value if node.__class__ is ast.Constant else None
        return value if isinstance(value, str) else None
else:  # ast.Str is deprecated from 3.8 on: touch it only where the parser still makes it
    STRING_NODE = ast.Str

    def string_value(node):
        return node.s if node.__class__ is ast.Str else None


def main():
    gc.disable()  # the trees hold no cycles, and collecting while they grow slows parsing by a third
    try:
        request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        files = request.get("files") or []
        entry = request.get("entry") or {}
    except (ValueError, AttributeError) as error:
        sys.stderr.write("scan.py: the request is not a JSON object: %s\n" % error)
        return 2
    script = normal_path(entry.get("script") or "")
    reports, parser, env_sets = [], None, set()
    for item in files:
        path = item.get("path") or ""
        is_entry = bool(script) and normal_path(path) == script
        report, sets, found = scan_safely(path, item.get("text") or "", is_entry)
        reports.append(report)
        env_sets.update(sets)
        parser = parser or found
    # A job that sets a variable itself may read it anywhere: the order files run in is unknown.
    for report in reports:
        report["env"] = [read for read in report["env"] if read["name"] not in env_sets]
    result = {"python": "%d.%d.%d" % sys.version_info[:3], "files": reports, "argparse": parser}
    sys.stdout.write(json.dumps(result, ensure_ascii=True) + "\n")
    return 0


def normal_path(path):
    return "/".join(part for part in path.replace("\\", "/").split("/") if part not in ("", "."))


def scan_safely(path, text, is_entry):
    """The file's report, the environment variables it sets, and its parser if it is the entry."""
    try:
        return scan_file(path, text, is_entry)
    except Exception as error:  # odd code must not cost the other files their scan
        report = empty_report(path)
        report["error"] = "%s: %s" % (type(error).__name__, error)
        return report, set(), None


def empty_report(path):
    return {"path": path, "syntax_error": None, "imports": [], "env": [], "paths": [], "perf": [],
            "dynamic": [], "main": False, "parser": False, "cuda": 0}


def scan_file(path, text, is_entry):
    report = empty_report(path)
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as error:
        report["syntax_error"] = syntax_problem(error, text)
        return report, set(), None
    except ValueError as error:  # null bytes, before Python 3.12
        if "\0" not in text:
            raise
        report["syntax_error"] = syntax_problem(error, text)
        return report, set(), None
    scan = FileScan(is_entry)
    scan.visit(tree)
    report.update(scan.results())
    return report, scan.env_sets, scan.argparse.results(path) if is_entry else None


def syntax_problem(error, text):
    line, column = getattr(error, "lineno", None), getattr(error, "offset", None)
    if line is None and "\0" in text:  # the null-byte error carries no position
        before = text[:text.index("\0")]
        line, column = before.count("\n") + 1, len(before) - before.rfind("\n")
    message = getattr(error, "msg", None) or str(error)
    return {"line": line, "column": column, "message": message}


class Loop(object):
    """A loop being read: the graph operations created in it, and whether it runs a session."""
    __slots__ = ("ops", "runs")

    def __init__(self):
        self.ops = []
        self.runs = False


class FileScan(object):
    """One walk over a file's tree, with the context each finding depends on: the enclosing
    functions, try blocks, guarding ifs and loops."""

    def __init__(self, is_entry):
        self.imports, self.env, self.paths, self.perf, self.dynamic = [], [], [], [], []
        self.env_sets = set()
        self.parallel_candidates = []  # map/interleave calls: findings only in TensorFlow code
        self.imports_tensorflow = False
        self.os_names, self.environ_names, self.getenv_names = set(["os"]), set(), set()
        self.tf_names = set(["tf"])
        self.scope_depth = 0  # enclosing def/class bodies
        self.if_guards = 0  # enclosing TYPE_CHECKING, version or platform tests
        self.branches = 0  # enclosing ifs (but the main guard), loops, try and with: may not run
        self.in_main = 0  # under `if __name__ == "__main__":` at module level
        self.try_guards = []  # what the enclosing try blocks of this function catch
        self.env_guards = []  # sets of variables the enclosing tests make sure are set
        self.env_flags = {}  # variable -> what the test it holds makes sure of, when true and false
        self.function_depth = 0  # enclosing def and lambda bodies
        self.calls = []  # enclosing calls: (callee's last name, open's mode is a write, keyword)
        self.loops = []  # enclosing loops of this function, comprehensions included
        self.with_fallback = set()  # ids of calls followed by `or fallback`
        self.argparse = ParserScan() if is_entry else None
        self.main_guard, self.builds_parser, self.cuda_line = False, False, 0
        self.handlers = dict((leaf, None) for leaf in leaf_classes())
        self.handlers.update({
            STRING_NODE: self.visit_string, ast.Expr: self.visit_expr,
            ast.JoinedStr: self.visit_joined_str, ast.Attribute: self.visit_attribute,
            ast.Import: self.visit_import, ast.ImportFrom: self.visit_import_from,
            ast.FunctionDef: self.visit_function, ast.AsyncFunctionDef: self.visit_function,
            ast.Lambda: self.visit_lambda, ast.ClassDef: self.visit_class,
            ast.Try: self.visit_try, ast.If: self.visit_if, ast.With: self.visit_with,
            ast.AsyncWith: self.visit_with,
            ast.For: self.visit_for, ast.AsyncFor: self.visit_for, ast.While: self.visit_while,
            ast.ListComp: self.visit_comprehension, ast.SetComp: self.visit_comprehension,
            ast.DictComp: self.visit_comprehension, ast.GeneratorExp: self.visit_comprehension,
            ast.Subscript: self.visit_subscript, ast.Compare: self.visit_compare,
            ast.BoolOp: self.visit_bool_op, ast.IfExp: self.visit_if_exp, ast.Module: self.visit_module,
            ast.Call: self.visit_call, ast.Assign: self.visit_assign,
        })
        if hasattr(ast, "TryStar"):  # except*, Python 3.11+
            self.handlers[ast.TryStar] = self.visit_try

    def results(self):
        if self.imports_tensorflow:
            self.perf.extend(self.parallel_candidates)
        self.perf.sort(key=lambda use: use["line"])
        return {"imports": self.imports, "env": self.env, "paths": self.paths, "perf": self.perf,
                "dynamic": self.dynamic, "main": self.main_guard, "parser": self.builds_parser,
                "cuda": self.cuda_line}

    # --- the walk ---------------------------------------------------------------------------

    # A handler of None skips the node; a node without a handler has its children visited.
    # visit_children is the hot loop of the scan, hence its locals.
    def visit(self, node):
        handler = self.handlers.get(node.__class__, self.visit_children)
        if handler is not None:
            handler(node)

    def visit_children(self, node):
        handlers, recurse = self.handlers, self.visit_children
        for field in getattr(node, "_fields", ()):
            value = getattr(node, field, None)
            for child in value if value.__class__ is list else (value,):
                handler = handlers.get(child.__class__, recurse)
                if handler is not None:
                    handler(child)

    def visit_attribute(self, node):
        if node.attr == "cuda" and not self.cuda_line:
            self.cuda_line = node.lineno
        self.visit(node.value)

    def visit_list(self, nodes):
        for node in nodes:
            self.visit(node)

    def visit_block(self, statements):
        """Statements in order: after `if "X" not in os.environ: return`, X is set."""
        pushed = 0
        for statement in statements:
            self.visit(statement)
            if isinstance(statement, ast.If) and not statement.orelse and leaves(statement.body):
                self.env_guards.append(self.env_tests(statement.test)[1])
                pushed += 1
        if pushed:
            del self.env_guards[-pushed:]

    def visit_module(self, node):
        self.visit_block(node.body)

    def env_tests(self, test):
        return env_tests(test, self.is_environ, self.os_names, self.getenv_names, self.env_flags)

    def visit_guarded(self, names, nodes):
        self.env_guards.append(names)
        if isinstance(nodes, list):
            self.visit_block(nodes)
        else:
            self.visit(nodes)
        self.env_guards.pop()

    def visit_scope(self, body, new_function):
        saved = self.try_guards, self.loops
        if new_function:  # a try or loop around a def does not run its body
            self.try_guards, self.loops = [], []
        self.scope_depth += 1
        self.function_depth += new_function
        if isinstance(body, list):
            self.visit_block(body)
        else:
            self.visit(body)
        self.function_depth -= new_function
        self.scope_depth -= 1
        self.try_guards, self.loops = saved

    def visit_function(self, node):
        if self.argparse is not None:
            self.argparse.defined.add(node.name)
        self.visit_list(node.decorator_list)
        self.visit(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        self.visit_scope(node.body, True)

    def visit_lambda(self, node):
        self.visit(node.args)
        self.visit_scope(node.body, True)

    def visit_class(self, node):
        self.visit_list(node.decorator_list)
        self.visit_list(node.bases)
        self.visit_list(node.keywords)
        self.visit_scope(node.body, False)  # a class body runs where it is defined

    def visit_try(self, node):
        # The body may stop at any line, a handler runs only on a failure, the else only without
        # one: each may not run. The finally block always does.
        self.branches += 1
        self.try_guards.append(caught_names(node.handlers))
        self.visit_block(node.body)
        self.try_guards.pop()
        self.visit_list(node.handlers)
        self.visit_block(node.orelse)
        self.branches -= 1
        self.visit_block(node.finalbody)

    def visit_with(self, node):
        """A with block may be left early; `with suppress(ImportError):` guards as a try does."""
        self.visit_list(node.items)
        suppressed = set()
        for item in node.items:
            call = item.context_expr
            if isinstance(call, ast.Call) and callee_name(call.func) == "suppress":
                suppressed.update(callee_name(arg) for arg in call.args)
        self.branches += 1
        self.try_guards.append(suppressed)
        self.visit_block(node.body)
        self.try_guards.pop()
        self.branches -= 1

    def visit_if(self, node):
        branch, main = 1, 0
        if self.scope_depth == 0 and is_main_test(node.test):
            self.main_guard = True
            branch, main = 0, 1  # runs whenever the file is the script Python runs
        when_true, when_false = self.visit_test(node.test)
        guard = condition_guard(node.test)
        if guard:
            self.if_guards += 1
        self.branches += branch
        self.in_main += main
        self.visit_guarded(when_true, node.body)
        self.in_main -= main
        if guard == "typing":  # the else branch is what runs
            self.if_guards -= 1
        self.branches += 1 - branch  # the main guard's else runs only when the file is imported
        self.visit_guarded(when_false, node.orelse)
        self.branches -= 1
        if guard == "environment":
            self.if_guards -= 1

    def visit_if_exp(self, node):
        when_true, when_false = self.visit_test(node.test)
        self.visit_guarded(when_true, node.body)
        self.visit_guarded(when_false, node.orelse)

    def visit_test(self, test):
        """Visits an if's or while's test; the variables it makes sure are set when it holds
        and when it does not. A get() that is only tested cannot fail."""
        when_true, when_false = self.env_tests(test)
        for call in tested_calls(test):
            self.with_fallback.add(id(call))
        self.visit(test)
        return when_true, when_false

    def visit_for(self, node):
        self.visit(node.target)
        self.visit(node.iter)
        self.loops.append(Loop())
        self.branches += 1
        self.visit_block(node.body)
        self.branches -= 1
        self.close_loop()
        self.visit_list(node.orelse)

    def visit_while(self, node):
        self.loops.append(Loop())
        when_true = self.visit_test(node.test)[0]
        self.branches += 1
        self.visit_guarded(when_true, node.body)
        self.branches -= 1
        self.close_loop()
        self.visit_list(node.orelse)

    def visit_comprehension(self, node):
        self.loops.append(Loop())
        self.visit_children(node)
        self.close_loop()

    def close_loop(self):
        loop = self.loops.pop()
        if loop.runs:
            self.perf.extend(loop.ops)
        elif self.loops:  # an outer loop that runs a session still rebuilds these ops
            self.loops[-1].ops.extend(loop.ops)
        if loop.runs and self.loops:
            self.loops[-1].runs = True

    # --- imports ----------------------------------------------------------------------------

    def visit_import(self, node):
        for alias in node.names:
            self.add_import(alias.name, 0, node.lineno)
            self.bind_module(alias.name, alias.asname)

    def visit_import_from(self, node):
        module, level = node.module or "", node.level or 0
        self.add_import(module, level, node.lineno, [alias.name for alias in node.names if alias.name != "*"])
        if level:
            return
        if module.split(".")[0] == "tensorflow":
            self.imports_tensorflow = True
        if module == "os":
            for alias in node.names:
                if alias.name == "environ":
                    self.environ_names.add(alias.asname or alias.name)
                elif alias.name == "getenv":
                    self.getenv_names.add(alias.asname or alias.name)

    def add_import(self, module, level, line, names=()):
        guarded = self.if_guards > 0 or self.guarded_against(IMPORT_FAILURES)
        self.imports.append({"module": module, "line": line, "guarded": guarded, "level": level,
                             "scope": "function" if self.scope_depth else "module",
                             "conditional": self.branches > 0, "names": list(names),
                             "main": self.in_main > 0})

    def check_dynamic_import(self, node, name):
        """importlib.import_module(X), __import__(X), runpy.run_module(X); exec(open("F").read())
        and runpy.run_path("F")."""
        if not node.args:
            return
        first = node.args[0]
        if name in ("import_module", "__import__", "run_module"):
            exact = string_value(first)
            module = exact if exact is not None else literal_start(first)
            self.dynamic.append({"line": node.lineno, "module": module, "exact": exact is not None})
        elif name == "run_path" and string_value(first) is not None:
            self.dynamic.append({"line": node.lineno, "file": string_value(first)})
        elif name == "exec" and is_method_call(first, "read") and is_call_of(first.func.value, "open"):
            opened = first.func.value.args
            if opened and string_value(opened[0]) is not None:
                self.dynamic.append({"line": node.lineno, "file": string_value(opened[0])})

    def bind_module(self, name, asname):
        if name.split(".")[0] == "tensorflow":
            self.imports_tensorflow = True
            self.tf_names.add(asname or "tensorflow")
        elif name == "os" or (name.startswith("os.") and not asname):
            self.os_names.add(asname if name == "os" and asname else "os")

    def guarded_against(self, failures):
        for caught in self.try_guards:
            if caught & failures:
                return True
        return False

    # --- environment variables ----------------------------------------------------------------

    def is_environ(self, node):
        if isinstance(node, ast.Attribute):
            return node.attr == "environ" and is_name(node.value, self.os_names)
        return is_name(node, self.environ_names)

    def visit_subscript(self, node):
        if self.is_environ(node.value):
            key = node.slice
            if key.__class__.__name__ == "Index":  # Python 3.8 and older wrap the key
                key = key.value
            name = string_value(key)
            if name is not None and isinstance(node.ctx, ast.Load):
                self.add_env_read(name, node.lineno, "subscript", False)
            elif name is not None and isinstance(node.ctx, ast.Store):
                self.env_sets.add(name)
        self.visit_children(node)

    def visit_compare(self, node):
        if (len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn))
                and self.is_environ(node.comparators[0])):
            name = string_value(node.left)
            if name is not None:  # a membership test guards the read it comes with
                self.add_env_read(name, node.lineno, "in", True)
        self.visit_children(node)

    def visit_bool_op(self, node):
        # `"X" in os.environ and os.environ["X"]`: each value runs only when the ones before
        # it were true (and), or false (or).
        if isinstance(node.op, ast.Or):  # os.environ.get("X") or "fallback"
            for value in node.values[:-1]:
                self.with_fallback.add(id(value))
        side = 0 if isinstance(node.op, ast.And) else 1
        pushed = 0
        for value in node.values:
            self.visit(value)
            self.env_guards.append(self.env_tests(value)[side])
            pushed += 1
        del self.env_guards[-pushed:]

    def env_call(self, node, how):
        name = string_value(node.args[0]) if node.args else None
        if name is None:
            return
        has_default = (len(node.args) > 1 or id(node) in self.with_fallback
                       or any(k.arg == "default" for k in node.keywords))
        self.add_env_read(name, node.lineno, how, has_default)

    def environ_method(self, node, method):
        if method == "get":
            self.env_call(node, "get")
        elif method == "setdefault" and node.args and string_value(node.args[0]) is not None:
            self.env_sets.add(string_value(node.args[0]))
        elif method == "update":
            self.env_sets.update(k.arg for k in node.keywords if k.arg)
            for arg in node.args:
                if isinstance(arg, ast.Dict):
                    names = [string_value(key) for key in arg.keys if key is not None]
                    self.env_sets.update(name for name in names if name is not None)

    def add_env_read(self, name, line, how, has_default):
        guarded = any(name in names for names in self.env_guards) or \
            (how == "subscript" and self.guarded_against(KEY_FAILURES))
        self.env.append({"name": name, "line": line, "how": how, "default": has_default,
                         "guarded": guarded, "scope": "function" if self.function_depth else "module"})

    # --- path literals ------------------------------------------------------------------------

    def visit_string(self, node, option=None):
        value = string_value(node)
        if value is not None and not self.cuda_line and (value == "cuda" or value.startswith("cuda:")):
            self.cuda_line = node.lineno
        if value is not None and looks_like_path(value):
            self.paths.append({"value": value, "line": node.lineno, "option": option,
                               "use": self.path_use()})

    def path_use(self):
        """What the innermost call that is not a mere wrapper does with its path argument."""
        for name, writes, _ in reversed(self.calls):
            if name in PATH_WRAPPERS:
                continue
            if writes or name in WRITE_CALLS:
                return "write"
            if name in MODEL_CALLS:
                return "model"
            return "read" if name in READ_CALLS else ""
        return ""

    def visit_expr(self, node):
        # A bare string statement is a docstring or a comment, never a path the job opens.
        if string_value(node.value) is None:
            self.visit(node.value)

    def visit_joined_str(self, node):
        for value in node.values:  # the literal pieces of an f-string are a template
            if isinstance(value, ast.FormattedValue):
                self.visit(value.value)

    # --- calls --------------------------------------------------------------------------------

    def visit_call(self, node):
        func = node.func
        if callee_name(func) in DYNAMIC_CALLS:
            self.check_dynamic_import(node, callee_name(func))
        if isinstance(func, ast.Attribute):
            self.method_call(node, func.attr, func.value)
        elif isinstance(func, ast.Name):
            self.function_call(node, func.id)
        self.visit(func)
        self.calls.append((callee_name(func), callee_name(func) == "open" and opens_for_writing(node), None))
        regex = isinstance(func, ast.Attribute) and is_name(func.value, ("re", "regex"))
        for arg in node.args:
            if not (regex and string_value(arg) is not None):
                self.visit(arg)
        for keyword in node.keywords:
            if keyword.arg == "default" and getattr(func, "attr", None) == "add_argument" and \
                    string_value(keyword.value) is not None:
                # An option's default, which the command line may replace (the C++ side checks).
                flags = [string_value(arg) for arg in node.args]
                self.visit_string(keyword.value, next((f for f in flags if f and f.startswith("-")), None))
            elif keyword.arg != "help":
                self.visit(keyword.value)
        self.calls.pop()

    def method_call(self, node, method, receiver):
        if method == "ArgumentParser":
            self.builds_parser = True
        if self.is_environ(receiver):
            self.environ_method(node, method)
        elif method == "getenv" and is_name(receiver, self.os_names):
            self.env_call(node, "getenv")
        elif method == "run":  # a TensorFlow 1 session's; subprocess.run and asyncio.run are not
            if self.loops and not is_name(receiver, ("subprocess", "asyncio")):
                self.loops[-1].runs = True
        elif method == "batch" and is_method_call(receiver, "map"):
            self.add_perf("tf-map-before-batch", method_line(receiver), "map before batch")
        elif method in ("map", "interleave"):
            self.check_parallel_calls(node, method)
        elif method == "DataLoader":
            self.check_data_loader(node)
        if self.loops:
            self.check_graph_op(node)
        if self.argparse is not None:
            self.argparse.call(node, method, bool(self.loops))

    def function_call(self, node, name):
        if name == "ArgumentParser":
            self.builds_parser = True
        if name in self.getenv_names:
            self.env_call(node, "getenv")
        elif name == "DataLoader":
            self.check_data_loader(node)
        if self.argparse is not None:
            self.argparse.call(node, name, bool(self.loops))

    def visit_assign(self, node):
        if self.argparse is not None and isinstance(node.value, ast.Call):
            if callee_name(node.value.func) in PARSER_MAKERS:
                names = [dotted_name(target) for target in node.targets]
                self.argparse.names.update(name for name in names if name)
        for target in node.targets:  # `ddp = int(os.environ.get("RANK", -1)) != -1`, tested later
            if isinstance(target, ast.Name):
                tests = self.env_tests(node.value) if len(node.targets) == 1 else None
                if tests and (tests[0] or tests[1]):
                    self.env_flags[target.id] = tests
                else:
                    self.env_flags.pop(target.id, None)
        self.visit_children(node)

    # --- performance --------------------------------------------------------------------------

    def add_perf(self, rule, line, detail):
        self.perf.append({"rule": rule, "line": line, "detail": detail})

    def check_graph_op(self, node):
        name = dotted_name(node.func)
        if name is None:
            return
        parts = name.split(".")
        if parts[0] in self.tf_names and is_graph_op(parts[1:]):
            self.loops[-1].ops.append({"rule": "tf-op-in-loop", "line": node.lineno, "detail": name})

    def check_parallel_calls(self, node, method):
        # num_parallel_calls is map's second parameter and interleave's fourth.
        position = 2 if method == "map" else 4
        if len(node.args) >= position:
            return
        if any(k.arg in ("num_parallel_calls", None) for k in node.keywords):
            return
        self.parallel_candidates.append(
            {"rule": "tf-map-without-parallel-calls", "line": method_line(node), "detail": method})

    def check_data_loader(self, node):
        keywords = dict((k.arg, k.value) for k in node.keywords)
        if None in keywords:  # **options may set num_workers
            return
        workers = keywords.get("num_workers")
        if workers is None and len(node.args) > 5:  # DataLoader's sixth parameter
            workers = node.args[5]
        if workers is not None and json_literal(workers) != 0:
            return
        # Only a loader that shuffles or samples feeds training: waiting for an evaluation
        # loader's batches holds no training step. DataLoader(dataset, batch_size, shuffle,
        # sampler, batch_sampler, num_workers, ...).
        def given(name, position):
            return keywords.get(name, node.args[position] if len(node.args) > position else None)

        feeds_training = any(value is not None and json_literal(value) not in (None, False, 0)
                             for value in (given("shuffle", 2), given("sampler", 3),
                                           given("batch_sampler", 4)))
        if feeds_training:
            self.add_perf("torch-dataloader-no-workers", node.lineno, "num_workers")


class ParserScan(object):
    """The entry script's argparse parser, as its add_argument calls build it."""

    def __init__(self):
        self.parsers = 0
        self.allow_abbrev = True
        self.parse_known = False
        self.dynamic = False
        self.options, self.positionals = [], []
        self.names = set()  # variables holding a parser or one of its groups
        self.defined = set()  # functions the script defines
        self.handed_to = []  # functions a parser is passed to: they may add arguments

    def results(self, path):
        if not self.parsers:
            return None
        handed_out = any(name not in self.defined for name in self.handed_to)
        return {"file": path, "parse_known": self.parse_known, "allow_abbrev": self.allow_abbrev,
                "options": self.options, "positionals": self.positionals,
                "dynamic": self.dynamic or self.parsers > 1 or handed_out}

    def call(self, node, name, in_loop):
        if name == "ArgumentParser":
            self.construct(node)
        elif name == "add_argument":
            self.add_argument(node, in_loop)
        elif name == "add_subparsers":
            self.dynamic = True
        elif name in ("parse_known_args", "parse_known_intermixed_args"):
            self.parse_known = True
        for value in node.args + [k.value for k in node.keywords]:
            if isinstance(value, (ast.Name, ast.Attribute)) and dotted_name(value) in self.names:
                self.handed_to.append(name)

    def construct(self, node):
        self.parsers += 1
        for keyword in node.keywords:
            if keyword.arg == "allow_abbrev" and json_literal(keyword.value) is False:
                self.allow_abbrev = False
            elif keyword.arg in ("parents", "prefix_chars"):  # options defined elsewhere, or not "-"
                self.dynamic = True

    def add_argument(self, node, in_loop):
        names = [string_value(arg) for arg in node.args]
        keywords = dict((k.arg, k.value) for k in node.keywords)
        nargs = nargs_value(keywords["nargs"]) if "nargs" in keywords else None
        # Flags, or a count of values, that only running the script would tell.
        if in_loop or not names or None in names or None in keywords or nargs is NOT_LITERAL:
            self.dynamic = True
            return
        kind, choices = type_name(keywords.get("type")), literal_list(keywords.get("choices"))
        if not names[0].startswith("-"):
            self.positionals.append({"line": node.lineno, "dest": names[0], "nargs": nargs,
                                     "type": kind, "choices": choices})
            return
        dest = string_value(keywords["dest"]) if "dest" in keywords else None
        action = "store"
        if "action" in keywords:  # an Action class, or a name for one, is opaque
            action = string_value(keywords["action"]) or "custom"
        required = "required" in keywords and json_literal(keywords["required"]) is True
        self.options.append({"line": node.lineno, "flags": names, "dest": dest or option_dest(names),
                             "type": kind, "required": required, "choices": choices, "nargs": nargs,
                             "action": action, "has_default": "default" in keywords,
                             "default": string_value(keywords["default"]) if "default" in keywords else None})


# --- small readings of expressions -------------------------------------------------------------

def leaf_classes():
    """What holds nothing to report: names, operators, expression contexts, and the plain
    values of fields (identifiers, numbers, absent children)."""
    classes = [ast.Name, str, int, bool, type(None)]
    for base in (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop):
        classes.extend(base.__subclasses__())
    return classes


def is_name(node, names):
    return isinstance(node, ast.Name) and node.id in names


def is_method_call(node, method):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method


def is_call_of(node, name):
    return isinstance(node, ast.Call) and callee_name(node.func) == name


def method_line(call):
    """The line of a method's name: in a chain split over lines, the call starts lines earlier."""
    return getattr(call.func, "end_lineno", None) or call.lineno


def literal_start(node):
    """The literal text a string built at run time starts with: "models." for `"models." + x`,
    `"models.%s" % x`, `"models.{}".format(x)` and `f"models.{x}"`; "" when none."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        text = string_value(node.left)
        if text is None:
            return literal_start(node.left) if isinstance(node.op, ast.Add) else ""
        return text.split("%")[0] if isinstance(node.op, ast.Mod) else text
    if is_method_call(node, "format") and string_value(node.func.value) is not None:
        return string_value(node.func.value).split("{")[0]
    if isinstance(node, ast.JoinedStr) and node.values:
        return string_value(node.values[0]) or ""
    return ""


def callee_name(func):
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def dotted_name(node):
    """`a.b.c` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def caught_names(handlers):
    names = set()
    for handler in handlers:
        if handler.type is None:
            names.add("*")
            continue
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for kind in kinds:
            name = callee_name(kind)
            if name:
                names.add(name)
    return names


def is_main_test(test):
    """`__name__ == "__main__"`, either way round."""
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return False
    sides = [test.left, test.comparators[0]]
    return any(is_name(side, ("__name__",)) for side in sides) and \
        any(string_value(side) == "__main__" for side in sides)


def condition_guard(test):
    """"typing" for `if TYPE_CHECKING:`, "environment" for a test on the interpreter or the
    platform, else None."""
    if callee_name(test) == "TYPE_CHECKING":
        return "typing"
    for node in ast.walk(test):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in ENVIRONMENT_TESTS:
                return "environment"
    return None


def leaves(body):
    """Whether a block always ends by leaving: return, raise, continue, break, sys.exit()."""
    last = body[-1] if body else None
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    return isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and \
        callee_name(last.value.func) in EXITS


def env_tests(test, is_environ, os_names, getenv_names, flags=None):
    """The variables a test makes sure are set when it is true, and when it is false. `flags`:
    what the variables holding an earlier test make sure of (`ddp = ... != -1` then `if ddp:`)."""
    if isinstance(test, ast.Name) and flags and test.id in flags:
        return flags[test.id]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        when_true, when_false = env_tests(test.operand, is_environ, os_names, getenv_names, flags)
        return when_false, when_true
    if isinstance(test, ast.BoolOp):
        parts = [env_tests(value, is_environ, os_names, getenv_names, flags) for value in test.values]
        if isinstance(test.op, ast.And):
            return frozenset().union(*[part[0] for part in parts]), frozenset()
        return frozenset(), frozenset().union(*[part[1] for part in parts])
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, right = test.ops[0], test.comparators[0]
        if isinstance(op, (ast.In, ast.NotIn)) and is_environ(right) and string_value(test.left) is not None:
            names = frozenset([string_value(test.left)])
            return (names, frozenset()) if isinstance(op, ast.In) else (frozenset(), names)
        name = env_get_name(test.left, is_environ, os_names, getenv_names)
        if name is not None and is_none(right) and isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
            names = frozenset([name])
            return (names, frozenset()) if isinstance(op, (ast.IsNot, ast.NotEq)) else (frozenset(), names)
        name = env_default_compared(test.left, right, is_environ, os_names, getenv_names)
        if name is not None and isinstance(op, (ast.Eq, ast.NotEq)):
            names = frozenset([name])
            return (names, frozenset()) if isinstance(op, ast.NotEq) else (frozenset(), names)
    name = env_get_name(test, is_environ, os_names, getenv_names)
    if name is not None:  # `if os.environ.get("X"):`
        return frozenset([name]), frozenset()
    return frozenset(), frozenset()


_NO_VALUE = object()
_CONVERSIONS = ("int", "float", "str")


def literal(node):
    """The value of a literal (`-1`, `"0"`), else _NO_VALUE."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO_VALUE


def env_default_compared(node, other, is_environ, os_names, getenv_names):
    """X for `os.environ.get("X", d)` (or int(...) of it) compared with its own default d:
    different from d, X is set (`int(os.environ.get("RANK", -1)) != -1`)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CONVERSIONS \
            and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    name = env_get_name(node, is_environ, os_names, getenv_names)
    if name is None or len(node.args) < 2:
        return None
    default, compared = literal(node.args[1]), literal(other)
    if default is _NO_VALUE or compared is _NO_VALUE:
        return None
    return name if default == compared or str(default) == str(compared) else None


def env_get_name(node, is_environ, os_names, getenv_names):
    """X for os.environ.get("X"), os.getenv("X") or getenv("X"), else None."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    if isinstance(func, ast.Attribute):
        if not ((func.attr == "get" and is_environ(func.value)) or
                (func.attr == "getenv" and is_name(func.value, os_names))):
            return None
    elif not is_name(func, getenv_names):
        return None
    return string_value(node.args[0])


def tested_calls(test):
    """The calls whose value a test only checks for truth or None: get() and getenv() there
    cannot fail."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return tested_calls(test.operand)
    if isinstance(test, ast.BoolOp):
        return [call for value in test.values for call in tested_calls(value)]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and is_none(test.comparators[0]):
        return [test.left] if isinstance(test.left, ast.Call) else []
    return [test] if isinstance(test, ast.Call) else []


def is_none(node):
    return node.__class__.__name__ in ("Constant", "NameConstant") and getattr(node, "value", 0) is None


def opens_for_writing(call):
    mode = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    text = string_value(mode) if mode is not None else None
    return bool(text) and any(c in text for c in "wax+")


def is_graph_op(path):
    if len(path) > 2 and path[0] == "compat":  # tf.compat.v1.placeholder
        path = path[2:]
    if len(path) == 1:
        return path[0] in TF_OPS or path[0].startswith(TF_OP_PREFIXES)
    if len(path) == 2:
        module, name = path
        if module == "train":
            return name.endswith("Optimizer") or name == "Saver"
        return module in TF_OP_MODULES
    return False


def looks_like_path(value):
    """A path the platform is unlikely to have: absolute with two components or more, Windows,
    under a home folder (~), or leaving the code folder (../)."""
    first = value[:1]
    if first == "/":
        candidate = len([part for part in value.split("/") if part]) >= 2
    elif first == "~":
        candidate = value.find("/") > 0
    elif first == ".":
        candidate = value.startswith("../") and len(value) > 3
    else:
        candidate = (len(value) > 2 and value[1] == ":" and value[2] in "\\/"
                     and "a" <= value[0].lower() <= "z")
    if not candidate or len(value) > MAX_PATH_LENGTH or "://" in value:
        return False
    return "{" not in value and "%" not in value and value.split() == [value]


def json_literal(node):
    """The value of a literal JSON can carry, else NOT_LITERAL."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return NOT_LITERAL
    if value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float) and value - value == 0:  # JSON has no inf or nan
        return value
    return NOT_LITERAL


def literal_list(node):
    if not isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return None
    values = [json_literal(item) for item in node.elts]
    return None if any(value is NOT_LITERAL for value in values) else values


def nargs_value(node):
    if isinstance(node, ast.Attribute) and node.attr in NARGS_CONSTANTS:  # argparse.REMAINDER
        return NARGS_CONSTANTS[node.attr]
    value = json_literal(node)
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return NOT_LITERAL


def type_name(node):
    """`int`, `float`, `Path` for pathlib.Path: the name of a simple callable, else None."""
    return callee_name(node) if node is not None else None


def option_dest(flags):
    long_flags = [flag for flag in flags if flag.startswith("--")]
    return (long_flags or flags)[0].lstrip("-").replace("-", "_")


if __name__ == "__main__":
    sys.exit(main())
