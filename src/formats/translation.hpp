// A job definition of another platform as the job.yaml that stands for it: the text (what
// `preflight convert` prints and `preflight run` loads), where each of its lines came from,
// and what of the definition could not be mapped.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "spec/job_spec.hpp"
#include "spec/yaml_doc.hpp"
#include "util/error.hpp"

namespace preflight::formats {

// A value of job.yaml: a string (written quoted, or as a block when it has several lines), or
// an unquoted number or boolean, which job.yaml reads as typed (a literal input, a typed
// hyperparameter).
struct Scalar {
  std::string text;
  bool typed = false;
  // For a block, where each line came from (a script's lines); else the field's origin.
  std::vector<SourceLocation> line_origins = {};
};

class Translation {
 public:
  explicit Translation(std::filesystem::path source) : source_(std::move(source)) {}

  // "# text" (a comment line, of no origin).
  void comment(std::string_view text);
  // `key: value` at `depth` (two spaces each), after a comment that names the origin and the
  // field of the source ("# pytorchjob.yaml:14 spec...containers[0].image").
  void field(int depth, std::string_view key, const Scalar& value, const SourceLocation& from,
             std::string_view said);
  // `key:` opening a map at `depth`; an empty map is written `key: {}`.
  void open(int depth, std::string_view key, const SourceLocation& from, std::string_view said = {});
  void empty_map(int depth, std::string_view key, const SourceLocation& from, std::string_view said);

  // Something of the source the job.yaml does not hold, and why: a note in the report and a
  // comment at the end of the text.
  void unmapped(const SourceLocation& where, std::string_view field, std::string_view why);

  const std::filesystem::path& source() const { return source_; }
  // The job.yaml text, the notes of what was not mapped at its end.
  std::string text() const;
  const std::vector<spec::SpecNote>& notes() const { return notes_; }
  // Where line `line` (1-based) of text() came from; unknown for comments and blank lines.
  SourceLocation origin(int line) const;

 private:
  void line(std::string text, SourceLocation from);
  std::string said_of(const SourceLocation& from, std::string_view said) const;

  std::filesystem::path source_;
  std::vector<std::string> lines_;
  std::vector<SourceLocation> origins_;
  std::vector<spec::SpecNote> notes_;
};

}  // namespace preflight::formats
