// Fields of untrusted JSON: a missing field, one of another type, or a document that is not an
// object reads as the empty value (or the fallback), and never throws.
#include <gtest/gtest.h>

#include "util/json_fields.hpp"

namespace preflight {
namespace {

using nlohmann::json;
namespace jf = json_fields;

TEST(UtilJsonFields, ReadsFieldsOfTheirType) {
  const json object = json::parse(
      R"({"name": "loss", "line": 12, "t": 1.5, "user": true, "paths": ["a", 3, "b"], "items": [1, 2]})");
  EXPECT_EQ(jf::text(object, "name"), "loss");
  EXPECT_EQ(jf::integer(object, "line"), 12);
  EXPECT_DOUBLE_EQ(jf::number(object, "t"), 1.5);
  EXPECT_DOUBLE_EQ(jf::number(object, "line"), 12.0) << "an integer is a number";
  EXPECT_TRUE(jf::flag(object, "user"));
  EXPECT_EQ(jf::strings(object, "paths"), (std::vector<std::string>{"a", "b"})) << "other items skipped";
  EXPECT_EQ(jf::list(object, "items").size(), 2u);
}

TEST(UtilJsonFields, AnotherTypeOrNoFieldReadsAsEmpty) {
  const json object = json::parse(R"({"name": 7, "line": "12", "t": null, "user": "yes", "paths": "a"})");
  EXPECT_EQ(jf::text(object, "name"), "");
  EXPECT_EQ(jf::integer(object, "line", -1), -1);
  EXPECT_EQ(jf::integer(object, "missing"), 0);
  EXPECT_DOUBLE_EQ(jf::number(object, "t"), 0.0);
  EXPECT_FALSE(jf::flag(object, "user"));
  EXPECT_TRUE(jf::strings(object, "paths").empty());
  EXPECT_TRUE(jf::list(object, "paths").is_array());
  EXPECT_TRUE(jf::list(object, "paths").empty());
}

TEST(UtilJsonFields, ADocumentThatIsNotAnObjectHasNoFields) {
  for (const json& value : {json::parse("[1, 2]"), json("text"), json(), json(3)}) {
    EXPECT_EQ(jf::text(value, "name"), "") << value.dump();
    EXPECT_EQ(jf::integer(value, "line", 5), 5) << value.dump();
    EXPECT_TRUE(jf::strings(value, "paths").empty()) << value.dump();
  }
}

TEST(UtilJsonFields, NestingBeyondTheDepthIsFoundOutsideStrings) {
  EXPECT_EQ(jf::nesting_beyond(R"({"a": [[1], {"b": [2]}]})", 4), std::nullopt);
  EXPECT_EQ(jf::nesting_beyond(R"({"a": [[1], {"b": [2]}]})", 3), 18u) << "the [ of [2]";
  // Brackets in strings, and quotes escaped in them, are text.
  EXPECT_EQ(jf::nesting_beyond(R"(["[[[{{", "\"[[[", "\\"])", 1), std::nullopt);
  EXPECT_EQ(jf::nesting_beyond(R"(["\\", [0]])", 1), 7u) << "a string ending in a backslash";
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  EXPECT_EQ(jf::nesting_beyond(deep, 64), 64u);
  EXPECT_TRUE(jf::parse_bounded(deep).is_discarded());
  EXPECT_TRUE(jf::parse_bounded("{\"a\": ").is_discarded());
  EXPECT_EQ(jf::parse_bounded(R"({"a": [1]})"), json::parse(R"({"a": [1]})"));
}

}  // namespace
}  // namespace preflight
