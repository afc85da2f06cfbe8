// Profile templates: "{{job.name}}", "PHILLY_INPUT_{{NAME}}", "{{ gpus.list }}". The variables
// (docs/formats.md) are provided by the planner; an unknown one is an error with a did-you-mean.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace preflight::spec {

// Variable name → value, e.g. {"job.name": "mnist", "gpus.list": "0,1"}.
using TemplateVars = std::map<std::string, std::string>;

struct TemplateVariable {
  std::string name;    // trimmed: "job.name"
  std::size_t offset;  // of the "{{" in the text
};

// The variables `text` uses, in order. An unclosed "{{" or an empty "{{}}" is an error at
// `where` (the column moved to the offending place when `text` is one line).
Result<std::vector<TemplateVariable>> template_variables(const std::string& text,
                                                         const SourceLocation& where);

// Replaces every {{NAME}} with vars[NAME]. An unknown NAME is an error at `where` naming the
// variable, with a did-you-mean over `vars`.
Result<std::string> expand_template(const std::string& text, const TemplateVars& vars,
                                    const SourceLocation& where);

// The variables a profile may use anywhere (docs/formats.md), besides inputs.NAME and
// outputs.NAME: job.name, job.id, code, scratch, gpus.count, gpus.list, nodes, node.rank,
// host.name, user.*, cpus.count and the JSON-valued *.json ones. The planner provides them all.
const std::vector<std::string>& job_template_variables();
// The extra variables of a per-input or per-output entry: name, NAME (upper-case), path.
const std::vector<std::string>& entry_template_variables();
// The extra variables of a per-hyperparameter entry: name, NAME (upper-case), value.
const std::vector<std::string>& hyperparameter_template_variables();

// Checks that `text` uses only known variables: job_template_variables(), inputs.NAME and
// outputs.NAME, and `entry` (the extra variables of the entry the text belongs to). For
// loading profiles, where the job (and so the input names) is not known yet.
Status check_template(const std::string& text, const std::vector<std::string>& entry,
                      const SourceLocation& where);
// The same with entry_template_variables() when `per_entry`, none otherwise.
Status check_template(const std::string& text, bool per_entry, const SourceLocation& where);

// `where` moved `offset` characters into `text`, when `text` is a single line and `where` has
// a column; otherwise `where` unchanged (best effort for multi-line and escaped scalars).
SourceLocation location_in(const SourceLocation& where, const std::string& text, std::size_t offset);

}  // namespace preflight::spec
