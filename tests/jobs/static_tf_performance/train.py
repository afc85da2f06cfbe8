"""A TensorFlow 1 training script with the three performance faults DeepPerf names."""
import tensorflow as tf


def pipeline(files):
    dataset = tf.data.TFRecordDataset(files)
    dataset = dataset.map(lambda record: tf.io.parse_single_example(record, {}))
    return dataset.map(lambda x: x).batch(64)


def train(session, loss, steps):
    for _step in range(steps):
        scale = tf.constant(0.5)
        session.run([loss, scale])
