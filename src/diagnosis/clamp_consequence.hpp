// A failure the dry run's own clamps caused (docs/diagnosis.md "Consequences of a clamp"): a
// later step asks for what the unclamped run would have written, such as a file named by the
// last epoch (model_epoch_30.pth after --nEpochs 30 became 2). A clamp must never fail a
// working job, so such a failure is a warning that says so.
#pragma once

#include "harness/events.hpp"
#include "model/finding.hpp"

namespace preflight::diagnosis {

// Turns `failure` into a warning about the clamp behind it, when there is one: the failure is
// a missing path that names a clamped epoch or step count by its original value.
void soften_clamp_consequence(model::Finding& failure, const harness::HarnessEvents& events,
                              const std::string& code_dir);

}  // namespace preflight::diagnosis
