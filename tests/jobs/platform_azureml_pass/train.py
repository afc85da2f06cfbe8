import json
import os
import sys

out = sys.argv[2]
assert os.environ["AZURE_ML_OUTPUT_model"] == out
assert os.getcwd() == os.environ["AZUREML_CR_EXECUTION_WORKING_DIR_PATH"]
with open(os.path.join(out, "run.json"), "w") as f:
    json.dump({"run": os.environ["AZUREML_RUN_ID"], "workspace": os.environ["AZUREML_ARM_WORKSPACE_NAME"]}, f)
