// The rule ids that Preflight's own code emits: the checks it detects (classified by
// policies/rules/checks.yaml) and the failures it recognises during a run without a rule's
// pattern (defined in failures.yaml). load_policies refuses a rules folder that lacks one, so
// a trimmed table fails when it is loaded instead of when the finding is made. A unit test
// (tests/unit/diagnosis_check_rules_test.cpp) keeps these lists equal to what src/ emits.
#pragma once

#include <array>
#include <string_view>

namespace preflight::diagnosis {

inline constexpr std::array<std::string_view, 25> kEmittedCheckRules = {
    "argument-not-accepted",
    "conda-needs-network",
    "download-needs-network",
    "env-maybe-unset",
    "env-not-set",
    "image-without-python",
    "import-not-in-image",
    "input-bound",
    "output-left-empty",
    "path-not-on-platform",
    "pip-needs-network",
    "pip-not-in-image",
    "pip-system-install",
    "requirement-not-in-image",
    "shell-env-not-set",
    "sudo-on-platform",
    "syntax-error-in-image",
    "system-package-install",
    "tf-map-before-batch",
    "tf-map-without-parallel-calls",
    "tf-op-in-loop",
    "time-limit",
    "torch-dataloader-no-workers",
    "unmatched",
    "written-outside-outputs",
};

inline constexpr std::array<std::string_view, 2> kEmittedFailureRules = {"loss-nan", "cuda-out-of-memory"};

}  // namespace preflight::diagnosis
