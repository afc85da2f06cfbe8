#!/bin/sh
set -e
mkdir -p /tmp/data
wget -q https://example.org/mnist.tar.gz -O /tmp/data/mnist.tar.gz
tar -xzf /tmp/data/mnist.tar.gz -C /tmp/data
python train.py --data /tmp/data --cache "$DATA_CACHE"
