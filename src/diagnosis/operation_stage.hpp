// The stage of a failure is the operation that failed, not the loop around it
// (docs/diagnosis.md "Stage of a failure"): a failing checkpoint write is `checkpoint`
// wherever it is called, reading or preparing data is `data`, loading a trained model to
// test it is `evaluate`.
#pragma once

#include <optional>
#include <string>

#include "harness/events.hpp"
#include "model/run_evidence.hpp"

namespace preflight::diagnosis {

// The stage the failing operation belongs to, from the exception's frames and path; nullopt
// when they tell nothing beyond the stage the job was in (`stage`). `trained`: a training
// step happened before the failure.
std::optional<std::string> stage_of_operation(const harness::ExceptionEvent& exception,
                                              const model::PlatformFacts& facts, const std::string& stage,
                                              bool trained);

}  // namespace preflight::diagnosis
