// The command's arguments read as the entry script's argparse would read them.
#include <gtest/gtest.h>

#include <set>

#include "check/argument_check.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

check::ArgParser parser() {
  check::ArgParser p;
  p.file = "train.py";
  p.options = {{10, {"--epochs", "-e"}, "epochs", "int", false, std::nullopt, "", "store", std::nullopt},
               {11, {"--lr"}, "lr", "float", false, std::nullopt, "", "store", std::nullopt},
               {12,
                {"--arch"},
                "arch",
                "",
                false,
                std::vector<std::string>{"resnet18", "resnet50"},
                "",
                "store",
                std::nullopt},
               {13, {"--save-dir"}, "save_dir", "", true, std::nullopt, "", "store", std::nullopt},
               {14, {"--amp"}, "amp", "", false, std::nullopt, "", "store_true", std::nullopt},
               {15, {"--gpus"}, "gpus", "int", false, std::nullopt, "+", "store", std::nullopt}};
  p.positionals = {{16, {}, "data", "", false, std::nullopt, "", "store", std::nullopt}};
  return p;
}

std::vector<std::string> messages(const check::ArgParser& p, std::vector<std::string> args,
                                  std::set<std::size_t> uncertain = {}) {
  std::vector<model::Finding> out;
  check::check_arguments(p, {"train.py", std::move(args), 1, std::move(uncertain)}, {"job.yaml", 2, 0}, out);
  std::vector<std::string> text;
  for (const auto& f : testing::completed(std::move(out))) {
    EXPECT_EQ(f.category, "Illegal Argument");
    EXPECT_EQ(f.location.str(), "job.yaml:2");
    text.push_back(f.message);
  }
  return text;
}

TEST(CheckArgumentCheck, AcceptsWhatArgparseAccepts) {
  EXPECT_TRUE(messages(parser(), {"/data", "--epochs", "3", "--lr=1e-3", "--arch", "resnet50", "--save-dir",
                                  "out", "--amp", "--gpus", "0", "1", "--save", "x"})
                  .empty())
      << "--save is a unique prefix of --save-dir";
  EXPECT_TRUE(messages(parser(), {"/data", "-e", "$EPOCHS", "--save-dir", "o"}, {2}).empty())
      << "left to the shell";
}

TEST(CheckArgumentCheck, ReportsWhatArgparseRefuses) {
  auto found =
      messages(parser(), {"/data", "--epochs", "3.5", "--arch", "vgg", "--learning-rate", "0.1", "--gpus"});
  ASSERT_EQ(found.size(), 5u);
  EXPECT_NE(found[0].find("--epochs 3.5: not an integer"), std::string::npos) << found[0];
  EXPECT_NE(found[1].find("--arch vgg: not one of its choices (resnet18, resnet50)"), std::string::npos)
      << found[1];
  EXPECT_NE(found[2].find("does not accept --learning-rate"), std::string::npos) << found[2];
  EXPECT_NE(found[3].find("--gpus expects 1 value"), std::string::npos) << found[3];
  EXPECT_NE(found[4].find("required option --save-dir"), std::string::npos) << found[4];
  EXPECT_NE(messages(parser(), {"--save-dir", "o"}).at(0).find("0 positional arguments"), std::string::npos);
}

TEST(CheckArgumentCheck, AFindingThatRestsOnAnUncertainWordIsAPrediction) {
  // `--save-dir $OUT --epochs`: $OUT may be two words, or none.
  std::vector<model::Finding> out;
  check::check_arguments(parser(), {"train.py", {"/data", "--save-dir", "$OUT", "--epochs"}, 1, {2}},
                         {"job.yaml", 2, 0}, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].message.find("--epochs expects 1 value"), std::string::npos) << out[0].message;
  EXPECT_NE(out[0].message.find("$OUT is known only when the shell runs it"), std::string::npos)
      << out[0].message;
  EXPECT_NE(out[0].prediction, model::Prediction::None) << "the dry run settles it; it stops nothing";
  EXPECT_EQ(out[0].subject, "--epochs") << "argparse's own error names it: the dry run confirms it";
  out.clear();
  check::check_arguments(parser(), {"train.py", {"/data", "--save-dir", "<b>", "--epochs"}, 1},
                         {"job.yaml", 2, 0}, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].prediction, model::Prediction::None) << "every word certain: argparse refuses it";
}

TEST(CheckArgumentCheck, ParseKnownArgsTakesAnyOption) {
  auto p = parser();
  p.parse_known = true;
  EXPECT_TRUE(messages(p, {"/data", "--save-dir", "o", "--local_rank=0"}).empty());
}

}  // namespace
}  // namespace preflight
