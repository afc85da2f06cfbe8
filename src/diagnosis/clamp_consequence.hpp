// A failure the dry run's own sampling caused (docs/diagnosis.md "Consequences of a clamp"): a
// later step asks for what the full run would have written, such as a file named by the last
// epoch (model_epoch_30.pth after the epoch loop of --nEpochs 30 was ended after 2). A clamp
// must never fail a working job, nor excuse a failing one: the failure becomes a warning only
// when the job's own evidence shows the chain, and the warning names that evidence.
#pragma once

#include "harness/events.hpp"
#include "model/finding.hpp"
#include "model/run_evidence.hpp"

namespace preflight::diagnosis {

// Turns `failure`, a missing path, into a warning about the clamp or cut loop behind it when
// both hold: the path names the count the clamp or cut changed (its original value, or the
// last value of a cut loop's variable), and the job itself wrote the same path with another
// number in its place (a torch.save, or a file left in a folder the job writes) after the
// clamp took effect and before it failed. Anything else leaves the failure as it is.
void soften_clamp_consequence(model::Finding& failure, const harness::HarnessEvents& events,
                              const model::PlatformFacts& facts);

}  // namespace preflight::diagnosis
