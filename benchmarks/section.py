"""What the benchmark scripts share: the machine a run measured, and writing a script's section
of docs/benchmarks.md.

    python3 benchmarks/section.py machine        prints "CPU model, N cores, Linux RELEASE"
    python3 benchmarks/section.py write FILE     puts FILE, whose first line is its "## " heading,
        in docs/benchmarks.md in place of the section under that heading, up to the section's
        hand-written "### Reading these figures" (kept with what follows); appended if new
"""
import os
import platform
import sys

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "benchmarks.md")
READING = "### Reading these figures\n"


def machine():
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return "{}, {} cores, Linux {}".format(cpu, os.cpu_count(), platform.release())


def write(section_file):
    section = open(section_file).read()
    heading = section.split("\n", 1)[0] + "\n"
    text = open(DOC).read()
    start = text.find(heading)
    if start < 0:
        text = text.rstrip("\n") + "\n\n"
        start = len(text)
    end = text.find(READING, start)
    following = text.find("\n## ", start + len(heading))
    if end < 0 or (0 <= following < end):
        end = following + 1 if following >= 0 else len(text)  # a section without a reading
    with open(DOC, "w") as f:
        f.write(text[:start] + section + text[end:])


if __name__ == "__main__":
    if sys.argv[1:] == ["machine"]:
        print(machine())
    elif len(sys.argv) == 3 and sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        sys.exit(__doc__)
