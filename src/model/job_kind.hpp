// The kind of definition a job was read from (formats/, docs/formats.md "Other platforms' job
// files"): the hints of its findings speak that definition's language.
#pragma once

namespace preflight::model {

enum class JobKind { JobYaml, PyTorchJob, TrainJob, VertexCustomJob, SageMakerEstimator, SlurmBatch };

}  // namespace preflight::model
