// How a platform hands job.yaml's hyperparameters: to the job, in the encodings of
// SageMaker's script mode (docs/platforms.md): the typed value the training toolkit decodes,
// the string it exports, the argument it appends, the file the service writes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spec/job_spec.hpp"

namespace preflight::plan {

// The value as the toolkit decodes it: a number or boolean when written unquoted, else a string.
nlohmann::json hyperparameter_value(const spec::Hyperparameter& hp);

// SM_HP_<NAME>: a string as it is, anything else as JSON ("true", "0.1").
std::string hyperparameter_env_value(const spec::Hyperparameter& hp);

// {"epochs": 2, "optimizer": "adam"}: the typed values (SM_HPS).
nlohmann::json hyperparameters_object(const std::vector<spec::Hyperparameter>& hps);

// hyperparameters.json: every value a string holding its JSON, as the SageMaker Python SDK's
// framework estimators send them ({"epochs": "2", "optimizer": "\"adam\""}).
nlohmann::json hyperparameters_strings(const std::vector<spec::Hyperparameter>& hps);

// ["--epochs", "2", "--flag", "True"]: sorted by name, each value as Python's str() prints
// it, as the toolkit appends them to the entry point (SM_USER_ARGS).
std::vector<std::string> hyperparameter_arguments(const std::vector<spec::Hyperparameter>& hps);

}  // namespace preflight::plan
