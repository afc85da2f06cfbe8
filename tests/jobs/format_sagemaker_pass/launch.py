"""Launches the training job as the SageMaker Python SDK's guide writes it
(sagemaker.readthedocs.io, "Use PyTorch with the SageMaker Python SDK": prepare a training
script, create an estimator, call fit): a PyTorch estimator in script mode, hyperparameters
passed to the script as arguments, two S3 channels."""
import sagemaker
from sagemaker.pytorch import PyTorch

session = sagemaker.Session()
role = sagemaker.get_execution_role()

estimator = PyTorch(
    entry_point="train.py",
    source_dir="src",
    role=role,
    framework_version="2.1",
    py_version="py310",
    instance_count=1,
    instance_type="ml.g4dn.xlarge",
    hyperparameters={
        "epochs": 4,
        "batch-size": 16,
        "learning-rate": 0.05,
    },
    sagemaker_session=session,
)

estimator.fit({"train": "s3://team-sentiment/train", "test": "s3://team-sentiment/test"})
