"""Runs a command with its output discarded and prints "WALL CPU" in seconds: the wall time,
and the user + system time of the command and everything it reaped (a container's processes
included), which a busy machine stretches less than the wall time. Exits with the command's
status. Usage: python3 benchmarks/timed.py COMMAND [ARGS...]"""
import resource
import subprocess
import sys
import time

start = time.monotonic()
status = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.monotonic() - start, used.ru_utime + used.ru_stime)
sys.exit(status)
