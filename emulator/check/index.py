"""The module index of an image: what its Python can import, and which distributions it has.

Preflight runs this with the image's own interpreter, inside the image's root filesystem
(`python3 -I -B -c <this file>`: site-packages stay on sys.path, nothing is written), and
caches the JSON it prints by image digest (docs/static-checks.md "Module index"):

    {"python": "3.11.2", "executable": "/usr/bin/python3", "path": [...],
     "builtin": [...], "stdlib": [...], "modules": [...],
     "distributions": [{"name", "version", "requires", "top_level", "location"}],
     "broken": [{"name", "version", "requirement", "problem"}]}

`modules` are the top-level names importable from sys.path; `broken` is what `pip check`
would report (a requirement missing or at a version its specifier excludes), judged from the
distributions' metadata alone. Standard library only, Python 3.6 to 3.13."""

import json
import os
import pkgutil
import re
import sys


def main():
    distributions = list(find_distributions())
    print(json.dumps({
        "python": "%d.%d.%d" % sys.version_info[:3],
        "executable": sys.executable,
        "path": [p for p in sys.path if p],
        "builtin": sorted(sys.builtin_module_names),
        "stdlib": sorted(stdlib_names()),
        "modules": sorted(set(m[1] for m in pkgutil.iter_modules())),
        "distributions": distributions,
        "broken": broken_requirements(distributions),
    }, sort_keys=True))


def stdlib_names():
    names = getattr(sys, "stdlib_module_names", None)  # Python 3.10+
    if names is not None:
        return set(names)
    stdlib = os.path.dirname(os.__file__)
    found = set(sys.builtin_module_names)
    for folder in (stdlib, os.path.join(stdlib, "lib-dynload")):
        for info in pkgutil.iter_modules([folder]):
            found.add(info[1])
    return found


# --- distributions -------------------------------------------------------------------------

def find_distributions():
    seen = set()
    for folder in sys.path:
        try:
            entries = sorted(os.listdir(folder or "."))
        except OSError:
            continue
        for entry in entries:
            if not (entry.endswith(".dist-info") or entry.endswith(".egg-info")):
                continue
            meta = read_distribution(os.path.join(folder, entry))
            if meta is None or normalize(meta["name"]) in seen:
                continue  # the first on sys.path wins, as it does for imports
            seen.add(normalize(meta["name"]))
            meta["location"] = folder
            yield meta


def read_distribution(path):
    if os.path.isdir(path):
        headers = read_text(os.path.join(path, "METADATA")) or read_text(os.path.join(path, "PKG-INFO"))
        top_level = read_text(os.path.join(path, "top_level.txt")) or ""
        requires_txt = read_text(os.path.join(path, "requires.txt"))
    else:  # an egg-info file: PKG-INFO content alone
        headers, top_level, requires_txt = read_text(path), "", None
    if not headers:
        return None
    name, version, requires = None, None, []
    for line in headers.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line; the description follows
        key, _, value = line.partition(":")
        key, value = key.strip().lower(), value.strip()
        if key == "name":
            name = value
        elif key == "version":
            version = value
        elif key == "requires-dist":
            requires.append(value)
    if requires_txt is not None and not requires:
        requires = egg_requirements(requires_txt)
    if not name or not version:
        return None
    return {"name": name, "version": version, "requires": requires,
            "top_level": [t.strip() for t in top_level.splitlines() if t.strip()]}


def egg_requirements(text):
    """requires.txt: plain lines, then [extra] or [extra:marker] or [:marker] sections."""
    requires, section = [], ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        extra, _, marker = section.partition(":")
        if extra:
            requires.append('%s; extra == "%s"' % (line, extra))
        elif marker:
            requires.append("%s; %s" % (line, marker))
        else:
            requires.append(line)
    return requires


def read_text(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except (OSError, IOError):
        return None


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


# --- pip check ------------------------------------------------------------------------------

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*\(?([^;()]*)\)?\s*(?:;(.*))?$")


def broken_requirements(distributions):
    installed = dict((normalize(d["name"]), d) for d in distributions)
    broken = []
    for dist in distributions:
        for requirement in dist["requires"]:
            match = _REQUIREMENT.match(requirement)
            if not match or not marker_applies(match.group(4)):
                continue
            name, specifier = match.group(1), match.group(3).strip()
            other = installed.get(normalize(name))
            if other is None:
                problem = "missing"
            elif specifier and not satisfies(other["version"], specifier):
                problem = "has %s %s" % (other["name"], other["version"])
            else:
                continue
            broken.append({"name": dist["name"], "version": dist["version"],
                           "requirement": requirement.split(";")[0].strip(), "problem": problem})
    return broken


def marker_applies(marker):
    """Environment markers of the usual forms; an extra, or a marker this cannot read, is
    taken not to apply, so that nothing is reported broken that pip would accept."""
    if not marker or not marker.strip():
        return True
    if "extra" in marker:
        return False
    env = {
        "python_version": "%d.%d" % sys.version_info[:2],
        "python_full_version": "%d.%d.%d" % sys.version_info[:3],
        "sys_platform": sys.platform,
        "platform_system": "Linux" if sys.platform.startswith("linux") else sys.platform,
        "os_name": os.name,
        "implementation_name": sys.implementation.name,
        "platform_python_implementation": "CPython" if sys.implementation.name == "cpython" else "PyPy",
    }
    clause = re.compile(r"""^\s*(\w+)\s*(==|!=|<=|>=|<|>|~=|in|not in)\s*["']([^"']*)["']\s*$""")
    try:
        for alternative in re.split(r"\bor\b", marker):
            if all(_clause_holds(clause.match(part), env) for part in re.split(r"\band\b", alternative)):
                return True
        return False
    except (KeyError, AttributeError, ValueError):
        return False


def _clause_holds(match, env):
    name, op, value = match.group(1), match.group(2), match.group(3)
    actual = env[name]
    if op == "in":
        return actual in value
    if op == "not in":
        return actual not in value
    if name.endswith("version"):
        return satisfies(actual, op + value)
    return {"==": actual == value, "!=": actual != value}[op]


def satisfies(version, specifier):
    for part in specifier.split(","):
        part = part.strip()
        if part and not _one(version, part):
            return False
    return True


_SPEC = re.compile(r"^(===|==|!=|<=|>=|<|>|~=)\s*(\S+)$")


def _one(version, part):
    match = _SPEC.match(part)
    if not match:
        return True  # unreadable: do not report
    op, wanted = match.groups()
    if op == "===":
        return version == wanted
    if wanted.endswith(".*"):
        prefix = release(wanted[:-2])
        equal = release(version)[:len(prefix)] == prefix
        return equal if op == "==" else not equal
    have, want = key(version), key(wanted)
    if op == "~=":
        floor = release(wanted)
        return have >= want and release(version)[:len(floor) - 1] == floor[:-1]
    return {"==": have == want, "!=": have != want, "<=": have <= want, ">=": have >= want,
            "<": have < want, ">": have > want}[op]


def release(version):
    numbers = re.match(r"^\s*v?(?:\d+!)?(\d+(?:\.\d+)*)", version)
    parts = [int(n) for n in numbers.group(1).split(".")] if numbers else [0]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def key(version):
    """PEP 440 order, roughly: release, then dev < pre-release < final < post-release.
    A local part (+gitunknown) is ignored."""
    public = version.split("+")[0].lower()
    rank = 2
    if re.search(r"(a|b|c|rc|alpha|beta|pre|preview)\d*", public[len(".".join(map(str, release(public)))):]):
        rank = 1
    if "dev" in public:
        rank = 0
    if "post" in public:
        rank = 3
    return release(public) + (0,) * (8 - len(release(public))), rank


if __name__ == "__main__":
    main()
