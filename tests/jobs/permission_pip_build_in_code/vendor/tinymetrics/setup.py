from setuptools import setup
setup(name="tinymetrics", version="0.1", packages=["tinymetrics"])
