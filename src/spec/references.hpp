// ${{inputs.NAME}} / ${{outputs.NAME}} in a job's command and setup, as AzureML writes them.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace preflight::spec {

struct Reference {
  std::string kind;  // "inputs" or "outputs"
  std::string name;
  std::size_t offset;  // of the "${{"
  std::size_t length;  // through the "}}"
};

// The references in `text`, in order. An unclosed "${{" or one that is not inputs.NAME or
// outputs.NAME is an error at `where`, moved into the text when `exact` (column arithmetic
// holds for this scalar).
Result<std::vector<Reference>> find_references(const std::string& text, const SourceLocation& where,
                                               bool exact);

// Checks every reference names a declared input or output (did-you-mean otherwise).
Status check_references(const std::string& text, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const SourceLocation& where, bool exact);

}  // namespace preflight::spec
