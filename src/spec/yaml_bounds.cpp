#include "spec/yaml_bounds.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <vector>

#include "util/input_bounds.hpp"
#include "util/text.hpp"

namespace preflight::spec {

namespace {

// A bound crossed while yaml-cpp parses: thrown from an event handler, which has no other way
// to stop the parse, and caught in check_yaml_bounds.
struct OutOfBounds {
  YAML::Mark mark;
  std::string message;
};

// What a node stands for with its aliases written out.
struct Extent {
  std::uint64_t nodes = 0;
  std::uint64_t bytes = 0;  // of its scalars
  int height = 0;           // levels of lists and maps, itself included
};

// Measures one document from the parser's events: an alias counts as its anchor's whole node
// again, at the depth where the alias stands.
class DocumentMeasure : public YAML::EventHandler {
 public:
  std::optional<YAML::Mark> start;  // the first node's

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnAnchor(const YAML::Mark&, const std::string& name) override { anchor_name_ = name; }
  void OnNull(const YAML::Mark& at, YAML::anchor_t anchor) override { add(at, anchor, Extent{1, 0, 0}); }
  void OnScalar(const YAML::Mark& at, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    add(at, anchor, Extent{1, value.size(), 0});
  }
  void OnAlias(const YAML::Mark& at, YAML::anchor_t anchor) override {
    const std::string name = anchor < names_.size() ? names_[anchor] : "";
    // yaml-cpp registers an anchor before its node's content, so `&a [*a]` loads as a node
    // that holds itself, which every reader would walk without end.
    if (anchor >= anchors_.size() || !anchors_[anchor])
      throw OutOfBounds{at, fmt::format("the alias *{0} is inside the node &{0} it names, so it would repeat "
                                        "without end; name a node that is complete",
                                        name)};
    const Extent& extent = *anchors_[anchor];
    begin(at, 0, extent.height, name);
    total_.nodes += extent.nodes;
    total_.bytes += extent.bytes;
    aliased_.nodes += extent.nodes;
    aliased_.bytes += extent.bytes;
    if (aliased_.nodes > kMaxAliasedNodes || aliased_.bytes > kMaxAliasedBytes)
      throw OutOfBounds{at,
                        fmt::format("the document's aliases, written out, add more than {} values or {} of "
                                    "text to it by here (*{} repeats {} values, {}); a job definition "
                                    "repeats far less",
                                    kMaxAliasedNodes, human_size(kMaxAliasedBytes), name, extent.nodes,
                                    human_size(extent.bytes))};
  }
  void OnSequenceStart(const YAML::Mark& at, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(at, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& at, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(at, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    YAML::anchor_t anchor;
    Extent before;   // the document's totals before this node
    int height = 1;  // its own level and its deepest child's
  };

  void add(const YAML::Mark& at, YAML::anchor_t anchor, const Extent& extent) {
    begin(at, anchor, extent.height);
    total_.nodes += extent.nodes;
    total_.bytes += extent.bytes;
    remember(anchor, extent);
  }

  void open(const YAML::Mark& at, YAML::anchor_t anchor) {
    Open node{anchor, total_};
    begin(at, anchor, 1);
    ++total_.nodes;
    open_.push_back(node);
  }

  void close() {
    const Open node = open_.back();
    open_.pop_back();
    const Extent extent{total_.nodes - node.before.nodes, total_.bytes - node.before.bytes, node.height};
    if (!open_.empty()) open_.back().height = std::max(open_.back().height, node.height + 1);
    remember(node.anchor, extent);
  }

  // What every node does first: notes the document's start, the anchor's name, and refuses
  // a level deeper than kMaxNesting (the readers recurse once per level).
  void begin(const YAML::Mark& at, YAML::anchor_t anchor, int height, const std::string& alias = "") {
    if (!start) start = at;
    if (anchor != 0) {
      names_.resize(std::max<std::size_t>(names_.size(), anchor + 1));
      names_[anchor] = anchor_name_;
    }
    if (static_cast<int>(open_.size()) + height > kMaxNesting)
      throw OutOfBounds{at,
                        fmt::format("lists and maps nested more than {} deep{}; a job definition needs a "
                                    "dozen levels at most",
                                    kMaxNesting, alias.empty() ? "" : " with *" + alias + " written out")};
    if (!open_.empty()) open_.back().height = std::max(open_.back().height, height + 1);
  }

  void remember(YAML::anchor_t anchor, const Extent& extent) {
    if (anchor == 0) return;
    anchors_.resize(std::max<std::size_t>(anchors_.size(), anchor + 1));
    anchors_[anchor] = extent;
  }

  Extent total_;    // the document's so far, aliases written out
  Extent aliased_;  // what the aliases added to it
  std::vector<Open> open_;
  std::vector<std::optional<Extent>> anchors_;  // by yaml-cpp's anchor number, once complete
  std::vector<std::string> names_;
  std::string anchor_name_;  // the last &name, for the node that follows it
};

}  // namespace

SourceLocation yaml_location(const std::filesystem::path& file, const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) return SourceLocation{file, 0, 0};
  return SourceLocation{file, mark.line + 1, mark.column + 1};
}

Status check_yaml_bounds(const std::string& text, const std::filesystem::path& file) {
  // Not YAML::LoadAll: on some invalid streams (a lone ",") it parses the same null document
  // over and over, keeping each, until memory runs out; here three documents at most are asked
  // for, and one that starts where the one before it did means the parser did not move.
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentMeasure first, second, third;
  try {
    if (!parser.HandleNextDocument(first) || !parser.HandleNextDocument(second) || !second.start) return Ok{};
    const auto same_start = [](const DocumentMeasure& a, const DocumentMeasure& b) {
      return a.start && a.start->pos == b.start->pos;
    };
    if (same_start(first, second) || (parser.HandleNextDocument(third) && same_start(third, second)))
      return Error::bad_input("invalid YAML: nothing can start here", yaml_location(file, *second.start));
    return Error::bad_input("expected one YAML document, found another here (remove the \"---\")",
                            yaml_location(file, *second.start));
  } catch (const OutOfBounds& e) {
    return Error::bad_input(e.message, yaml_location(file, e.mark));
  } catch (const YAML::Exception& e) {
    return Error::bad_input("invalid YAML: " + e.msg, yaml_location(file, e.mark));
  }
}

}  // namespace preflight::spec
