// Reading Python tracebacks from stderr, for runs where the harness did not load.
#include <gtest/gtest.h>

#include "diagnosis/rule_match.hpp"
#include "diagnosis/traceback.hpp"

namespace preflight::diagnosis {
namespace {

TEST(DiagnosisTraceback, ReadsFramesTypeAndMessage) {
  auto event = parse_traceback(
      {"epoch 1", "Traceback (most recent call last):", "  File \"/job/code/main.py\", line 42, in <module>",
       "    train(args)", "  File \"/job/code/lib/train.py\", line 7, in train", "    open(args.data)",
       "FileNotFoundError: [Errno 2] No such file or directory: '/data/mnist'"},
      "/job/code");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->type, "FileNotFoundError");
  EXPECT_EQ(event->message, "[Errno 2] No such file or directory: '/data/mnist'");
  EXPECT_EQ(event->errno_value, 2);
  EXPECT_EQ(event->path, "/data/mnist");
  ASSERT_EQ(event->frames.size(), 2u);
  EXPECT_EQ(event->frames[1].file, "/job/code/lib/train.py");
  EXPECT_EQ(event->frames[1].line, 7);
  EXPECT_EQ(event->frames[1].function, "train");
  EXPECT_TRUE(event->frames[1].user);
}

TEST(DiagnosisTraceback, TakesTheLastTracebackOfAChain) {
  auto event = parse_traceback(
      {"Traceback (most recent call last):", "  File \"/job/code/a.py\", line 1, in <module>",
       "KeyError: 'x'", "", "During handling of the above exception, another exception occurred:", "",
       "Traceback (most recent call last):",
       "  File \"/usr/lib/python3/dist-packages/torch/nn/modules/module.py\", line 3, in f", "    ~~~~^^^^",
       "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB", "next unrelated line"},
      "/job/code");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->type, "torch.cuda.OutOfMemoryError");
  EXPECT_EQ(event->message, "CUDA out of memory. Tried to allocate 2 GiB");
  ASSERT_EQ(event->frames.size(), 1u);
  EXPECT_FALSE(event->frames[0].user);
}

TEST(DiagnosisTraceback, KeepsIndentedContinuationLines) {
  auto event =
      parse_traceback({"Traceback (most recent call last):", "  File \"/job/code/m.py\", line 9, in <module>",
                       "RuntimeError: Error(s) in loading state_dict for Net:",
                       "\tMissing key(s) in state_dict: \"fc.weight\".", "done"},
                      "/job/code");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->message,
            "Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: \"fc.weight\".");
}

TEST(DiagnosisTraceback, ReadsSyntaxErrorsAndBareTypes) {
  auto syntax = parse_traceback(
      {"Traceback (most recent call last):", "  File \"/job/code/main.py\", line 1, in <module>",
       "  File \"/job/code/model.py\", line 3", "    def f(:", "          ^", "SyntaxError: invalid syntax"},
      "/job/code");
  ASSERT_TRUE(syntax);
  EXPECT_EQ(syntax->type, "SyntaxError");
  EXPECT_EQ(syntax->frames.back().file, "/job/code/model.py");
  EXPECT_EQ(syntax->frames.back().line, 3);
  EXPECT_EQ(syntax->frames.back().function, "");

  auto bare =
      parse_traceback({"Traceback (most recent call last):", "  File \"/job/code/m.py\", line 2, in <module>",
                       "NotImplementedError"},
                      "/job/code");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->type, "NotImplementedError");
  EXPECT_EQ(bare->message, "");
}

TEST(DiagnosisTraceback, NoTracebackNoException) {
  EXPECT_FALSE(parse_traceback({"Killed"}, "/job/code"));
  EXPECT_FALSE(parse_traceback({"Traceback (most recent call last):"}, "/job/code"));
}

TEST(DiagnosisTraceback, ExceptionNamesMatchQualifiedAndShortForms) {
  EXPECT_TRUE(exception_type_matches("JSONDecodeError", "json.decoder.JSONDecodeError"));
  EXPECT_TRUE(exception_type_matches("json.JSONDecodeError", "json.decoder.JSONDecodeError"));
  EXPECT_TRUE(exception_type_matches("pickle.UnpicklingError", "_pickle.UnpicklingError"));
  EXPECT_TRUE(exception_type_matches("torch.cuda.OutOfMemoryError", "torch.cuda.OutOfMemoryError"));
  EXPECT_TRUE(exception_type_matches("*", "Anything"));
  EXPECT_FALSE(exception_type_matches("KeyError", "KeyErrorX"));
  EXPECT_FALSE(exception_type_matches("torch.cuda.OutOfMemoryError", "jax.OutOfMemoryError"));
  EXPECT_FALSE(exception_type_matches("OSError", "FileNotFoundError"));  // no hierarchy
}

}  // namespace
}  // namespace preflight::diagnosis
