"""Uses a metrics package the job installs itself at start-up."""
import tinymetrics

print("f1", tinymetrics.f1(0.5, 0.25))
