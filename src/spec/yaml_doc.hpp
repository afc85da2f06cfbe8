// Reading the user's YAML files (job.yaml, platform profiles) strictly: every node knows its
// 1-based file:line:column, maps reject unknown and duplicate keys with a did-you-mean, and
// scalars are converted with errors that name the key ("resources.gpus: expected an integer").
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.hpp"

namespace preflight::spec {

// One entry of a YAML map, with the dotted path used in messages ("resources.gpus").
struct YamlField {
  std::string key;
  std::string path;
  YAML::Node key_node;
  YAML::Node value;
};

// The text of a job file, a profile or another platform's job definition: a regular file of at
// most kMaxDefinitionBytes (util/input_bounds.hpp), else bad input saying so.
Result<std::string> read_definition(const std::filesystem::path& file);

class YamlDoc {
 public:
  // Reads (read_definition) and parses `file`: one document within check_yaml_bounds'
  // bounds (a shipped file, util/data_dir.hpp is_shipped, is not measured). A missing file, a
  // parse error or a second document is bad input at its place.
  static Result<YamlDoc> load(const std::filesystem::path& file);
  // Parses `text` as if read from `file` (for tests and embedded documents).
  static Result<YamlDoc> parse(const std::string& text, const std::filesystem::path& file);

  const YAML::Node& root() const { return root_; }
  const std::filesystem::path& file() const { return file_; }

  // Where `node` starts (a quoted or block scalar: at its quote or indicator).
  SourceLocation at(const YAML::Node& node) const;
  // Where the entry's value is, or its key when the value is empty (null).
  SourceLocation at(const YamlField& field) const;
  // Where the text of a one-line plain or quoted scalar starts, so that column + offset
  // points at a character inside it; `exact` is false when that arithmetic would be wrong
  // (block scalars, escapes, several lines): then the location is the scalar's start.
  SourceLocation text_at(const YAML::Node& node, bool* exact) const;

  // The map's entries in order. Not a map, a non-scalar key, a duplicate key, or a key
  // outside `allowed` (when not empty) is an error; `path` names the map ("" at the top).
  Result<std::vector<YamlField>> fields(const YAML::Node& map, const std::string& path,
                                        const std::vector<std::string>& allowed) const;
  // The same for an entry whose value must be a map; an empty value gives no entries.
  Result<std::vector<YamlField>> fields(const YamlField& field,
                                        const std::vector<std::string>& allowed) const;

  // Scalar conversions; errors say `<path>: expected ..., got ...` at the value.
  Result<std::string> string(const YamlField& field) const;  // any scalar, as written
  Result<long long> integer(const YamlField& field) const;
  Result<double> number(const YamlField& field) const;
  Result<bool> boolean(const YamlField& field) const;
  Result<std::uint64_t> size(const YamlField& field) const;  // "64Mi", "16Gi", "512M" (parse_size)
  Result<std::vector<std::string>> string_list(const YamlField& field) const;

  // The field's text when it is one of `allowed`, else `<path>: unknown <what> "x"; did you
  // mean "y"? (one of a, b, c)` (the list is left out when it is long and a suggestion fits).
  Result<std::string> one_of(const YamlField& field, const std::vector<std::string>& allowed,
                             std::string_view what = "value") const;
  // The value that `options` (name, value) pairs with the field's text, with one_of's errors.
  template <typename T>
  Result<T> choice(const YamlField& field, const std::vector<std::pair<std::string, T>>& options,
                   std::string_view what = "value") const {
    std::vector<std::string> names;
    names.reserve(options.size());
    for (const auto& option : options) names.push_back(option.first);
    auto index = index_of(field, names, what);
    if (!index) return std::move(index).error();
    return options[*index].second;
  }

  // A bad_input error at the field's value: "<path>: <message>".
  Error error(const YamlField& field, const std::string& message) const;

 private:
  Result<std::size_t> index_of(const YamlField& field, const std::vector<std::string>& allowed,
                               std::string_view what) const;

  std::filesystem::path file_;
  std::string text_;
  YAML::Node root_;
};

// "a list", "a map", "nothing" or the scalar in quotes, for "expected X, got Y".
std::string describe(const YAML::Node& node);
// Whether `text` is an identifier: a letter or '_', then letters, digits and '_'.
bool is_identifier(const std::string& text);

}  // namespace preflight::spec
