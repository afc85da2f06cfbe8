// Requirement pins against the image's distributions.
#include <gtest/gtest.h>

#include "check/requirements.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

TEST(CheckRequirements, SpecifiersAsPipReadsThem) {
  EXPECT_TRUE(check::satisfies("1.13.1", ">=1.10,<2"));
  EXPECT_FALSE(check::satisfies("1.13.0a0+gitunknown", "==1.13.1"));
  EXPECT_TRUE(check::satisfies("1.13.1", "==1.13.*"));
  EXPECT_FALSE(check::satisfies("1.14.0", "==1.13.*"));
  EXPECT_TRUE(check::satisfies("1.4.5", "~=1.4.2"));
  EXPECT_FALSE(check::satisfies("1.5.0", "~=1.4.2"));
  EXPECT_TRUE(check::satisfies("2.0", "!=1.0"));
  EXPECT_TRUE(check::satisfies("2.0", "@ weird")) << "unreadable: taken as met";
}

TEST(CheckRequirements, PinsTheImageContradictsAreWarningsAtTheirLine) {
  testing::TempDir dir;
  dir.write("requirements.txt",
            "# training\ntorch==2.1.0\nnumpy>=1.20  # fine\nwandb==0.16\nPyYAML[libyaml]<6 ; python_version "
            ">= \"3.8\"\n");
  auto index = check::parse_module_index(
      R"({"modules": [], "distributions": [{"name": "torch", "version": "1.13.0a0+gitunknown"},
          {"name": "numpy", "version": "1.24.2"}, {"name": "PyYAML", "version": "6.0"}]})",
      "test");
  ASSERT_TRUE(index.ok());
  auto findings = check::requirement_findings(dir.path(), *index);
  ASSERT_EQ(findings.size(), 2u) << "wandb is not in the image: the import check speaks for it";
  EXPECT_EQ(findings[0].category, "Library Not Found");
  EXPECT_EQ(findings[0].severity, report::Severity::Warning);
  EXPECT_EQ(findings[0].location.str(), "requirements.txt:2");
  EXPECT_NE(findings[0].message.find("asks for torch==2.1.0, and the image has torch 1.13.0a0+gitunknown"),
            std::string::npos)
      << findings[0].message;
  EXPECT_EQ(findings[1].location.line, 5);
}

}  // namespace
}  // namespace preflight
