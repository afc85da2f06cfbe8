#include <gtest/gtest.h>

#include "spec/template.hpp"
#include "util/did_you_mean.hpp"

namespace preflight::spec {
namespace {

const SourceLocation kWhere{"philly.yaml", 40, 9};

TEST(SpecTemplate, ExpandsVariables) {
  const TemplateVars vars = {{"job.id", "application_1_0001"},
                             {"gpus.list", "0,1,2,3"},
                             {"NAME", "MNIST"},
                             {"path", "/hdfs/data/mnist"}};
  EXPECT_EQ(*expand_template("{{gpus.list}}", vars, kWhere), "0,1,2,3");
  EXPECT_EQ(*expand_template("PHILLY_INPUT_{{ NAME }}", vars, kWhere), "PHILLY_INPUT_MNIST");
  EXPECT_EQ(*expand_template("run-{{job.id}}:{{path}}", vars, kWhere),
            "run-application_1_0001:/hdfs/data/mnist");
  EXPECT_EQ(*expand_template("no variables, ${HOME} {x}", vars, kWhere), "no variables, ${HOME} {x}");
  EXPECT_EQ(*expand_template("", vars, kWhere), "");
}

TEST(SpecTemplate, UnknownVariableIsAnErrorInsideTheString) {
  const TemplateVars vars = {{"job.id", "1"}, {"job.name", "mnist"}};
  auto text = expand_template("run-{{job.nmae}}", vars, kWhere);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().exit_status(), 2);
  EXPECT_EQ(text.error().str(),
            "philly.yaml:40:13: unknown template variable \"{{job.nmae}}\"; did you mean "
            "\"job.name\"?");
  // Several lines: the location stays at the scalar.
  auto lines = expand_template("a\n{{nope}}", vars, kWhere);
  ASSERT_FALSE(lines.ok());
  EXPECT_EQ(lines.error().where.column, 9);
}

TEST(SpecTemplate, MalformedTemplates) {
  auto unclosed = expand_template("x{{job.id", {{"job.id", "1"}}, kWhere);
  ASSERT_FALSE(unclosed.ok());
  EXPECT_EQ(unclosed.error().str(),
            "philly.yaml:40:10: unclosed \"{{\" in template \"x{{job.id\" (add \"}}\")");
  auto empty = expand_template("{{ }}", {}, kWhere);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "empty \"{{}}\" in template \"{{ }}\"");
}

TEST(SpecTemplate, ListsVariablesAndChecksThemForProfiles) {
  auto variables = template_variables("{{a}}-{{ b.c }}", kWhere);
  ASSERT_TRUE(variables.ok());
  ASSERT_EQ(variables->size(), 2u);
  EXPECT_EQ((*variables)[1].name, "b.c");
  EXPECT_EQ((*variables)[1].offset, 6u);
  EXPECT_TRUE(check_template("{{job.name}} {{inputs.mnist}} {{outputs.model}}", false, kWhere).ok());
  EXPECT_TRUE(check_template("{{NAME}}={{path}}", true, kWhere).ok());
  EXPECT_FALSE(check_template("{{path}}", false, kWhere).ok());
  EXPECT_FALSE(check_template("{{inputs.}}", false, kWhere).ok());
  for (const std::string& name : job_template_variables()) {
    EXPECT_TRUE(check_template("{{" + name + "}}", false, kWhere).ok()) << name;
  }
}

TEST(SpecDidYouMean, SuggestsCloseNamesOnly) {
  const std::vector<std::string> keys = {"gpus", "nodes", "instance_count"};
  EXPECT_EQ(did_you_mean("gpu", keys), "; did you mean \"gpus\"?");
  EXPECT_EQ(did_you_mean("GPUS", keys), "; did you mean \"gpus\"?");
  EXPECT_EQ(did_you_mean("ndoes", keys), "; did you mean \"nodes\"?");
  EXPECT_EQ(did_you_mean("instance_cnt", keys), "; did you mean \"instance_count\"?");
  EXPECT_EQ(did_you_mean("memory", keys), "");
  EXPECT_EQ(did_you_mean("x", keys), "");
  EXPECT_EQ(closest_match("phily", {"philly", "slurm"}), "philly");
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("stpes", "steps"), 1u);
}

}  // namespace
}  // namespace preflight::spec
