# Overrides train.py's globals: `python train.py config/x.py --batch_size=8`. Run with
# exec(open("configurator.py").read()) from train.py, so it sees and sets train.py's globals.
import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    if "=" not in arg:
        assert not arg.startswith("--")
        config_file = arg
        print(f"Overriding config with {config_file}")
        exec(open(config_file).read())
    else:
        assert arg.startswith("--")
        key, val = arg.split("=", 1)
        key = key[2:]
        if key not in globals():
            raise ValueError(f"Unknown config key: {key}")
        try:
            attempt = literal_eval(val)
        except (SyntaxError, ValueError):
            attempt = val
        print(f"Overriding: {key} = {attempt}")
        globals()[key] = attempt
