// The dry run trains on sampled batches and checks each sampled loop's first iteration at the
// job's own batch size on shape-only tensors (docs/harness.md "Sampling the batch"). What the
// sampled run showed is weighed here against those checks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/events.hpp"
#include "model/finding.hpp"

namespace preflight::pipeline {

// Whether a failure of the category can come from the batch's size itself: a shape or an index
// that holds at one size and not at another, a loss that diverges on a tiny batch, an
// unclassified error. A missing path, module or permission cannot.
bool depends_on_batch(const std::string& category);

// Why the dry run has to run again at the job's own batch size: its first error, in a stage
// that ran on sampled batches, is of a category that depends on the batch, and no full-size
// check failed at the same line. None when the error stands or nothing was sampled.
std::optional<std::string> unconfirmed_at_full_size(const std::vector<model::Finding>& findings,
                                                    const harness::HarnessEvents& events,
                                                    const std::string& code_dir);

// What the report says of the full-size checks: a failure one confirmed, the values one had to
// make up, the checks that could not run, a PyTorch without shape-only tensors.
std::vector<std::string> full_size_notes(const std::vector<model::Finding>& findings,
                                         const harness::HarnessEvents& events, const std::string& code_dir);

// What the report says of a model that ran shape-only because its parameters passed the
// host's share (docs/harness.md "Models larger than the host"): from where, and which values
// were made up.
std::vector<std::string> shape_only_notes(const harness::HarnessEvents& events, const std::string& code_dir);

// A dry-run error that is a shape-only tensor's own limit (an operator it cannot run, a value
// it cannot give) in a process whose model ran shape-only says nothing of the job: it becomes
// a warning that the stages from there on were not executed here, and the outputs they would
// have written are not reported lost.
void soften_shape_only_limits(std::vector<model::Finding>& findings, const harness::HarnessEvents& events,
                              const std::string& code_dir);

}  // namespace preflight::pipeline
