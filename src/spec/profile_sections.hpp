// The sections of a platform profile (internal to load_platform): each reads one key's map
// strictly and checks its templates against the documented variables.
#pragma once

#include <vector>

#include "spec/platform_profile.hpp"
#include "spec/yaml_doc.hpp"

namespace preflight::spec {

Status read_user(const YamlDoc& doc, const YamlField& section, PlatformUser& user);
Status read_mounts(const YamlDoc& doc, const YamlField& section, MountLayout& mounts);
Status read_limits(const YamlDoc& doc, const YamlField& section, ResourceLimits& limits);
Status read_gpu(const YamlDoc& doc, const YamlField& section, GpuModel& gpu);
Status read_retry(const YamlDoc& doc, const YamlField& section, int& attempts);
// environment: (no `entry` variables), input_environment: / output_environment:
// (entry_template_variables()) or hyperparameters.environment:; names may be templates too:
// PHILLY_INPUT_{{NAME}}.
Result<std::vector<EnvTemplate>> read_environment(const YamlDoc& doc, const YamlField& section,
                                                  const std::vector<std::string>& entry);
// hyperparameters: {arguments: BOOL, environment: {SM_HP_{{NAME}}: "{{value}}"}}.
Status read_hyperparameter_delivery(const YamlDoc& doc, const YamlField& section,
                                    HyperparameterDelivery& delivery);
// files: {/absolute/path: template}.
Result<std::vector<PlatformFile>> read_files(const YamlDoc& doc, const YamlField& section);
// input_config: {KEY: VALUE} as a JSON object of strings.
Result<std::string> read_input_config(const YamlDoc& doc, const YamlField& section);

}  // namespace preflight::spec
