// Every category of the taxonomy, from the exception a job would raise to the finding the
// user sees: the category, its dimension, the root cause, the rule and where in the code.
#include <gtest/gtest.h>

#include <set>

#include "diagnosis_fixtures.hpp"

namespace preflight::diagnosis {
namespace {

using namespace fixtures;

struct ExceptionCase {
  std::string type;
  std::string message;
  std::string category;
  std::string rule;
};

class DiagnosisCategories : public ::testing::TestWithParam<ExceptionCase> {};

TEST_P(DiagnosisCategories, ExceptionIsClassified) {
  const ExceptionCase& c = GetParam();
  model::Finding finding = only_finding(crashed(c.type, c.message));
  EXPECT_EQ(finding.category, c.category) << c.type << ": " << c.message;
  EXPECT_EQ(finding.rule, c.rule) << c.type << ": " << c.message;
  EXPECT_EQ(finding.stage, "train");
  EXPECT_EQ(finding.phase, model::Phase::Dryrun);
  EXPECT_FALSE(finding.dimension.empty());
  EXPECT_FALSE(finding.root_cause.empty());
  EXPECT_FALSE(finding.hint.empty());
  for (const std::string* text : {&finding.message, &finding.hint}) {
    for (auto at = text->find("{{"); at != std::string::npos; at = text->find("{{", at + 2)) {
      EXPECT_TRUE(at > 0 && (*text)[at - 1] == '$') << "unfilled variable in: " << *text;
    }
  }
  EXPECT_TRUE(contains(finding.message, c.type)) << finding.message;
}

const ExceptionCase kCases[] = {
    {"torch.cuda.OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB", "GPU Out of Memory",
     "cuda-out-of-memory"},
    {"RuntimeError", "CUDA error: out of memory", "GPU Out of Memory", "cuda-out-of-memory"},
    {"MemoryError", "", "CPU Out of Memory", "memory-error"},
    {"RuntimeError",
     "Expected all tensors to be on the same device, but found at least two "
     "devices, cuda:0 and cpu!",
     "Framework API Misuse", "framework-api-misuse"},
    {"RuntimeError", "element 0 of tensors does not require grad and does not have a grad_fn",
     "Framework API Misuse", "framework-api-misuse"},
    {"RuntimeError", "mat1 and mat2 shapes cannot be multiplied (64x9216 and 9200x128)", "Tensor Mismatch",
     "tensor-shape-mismatch"},
    {"ValueError", "Expected input batch_size (64) to match target batch_size (32).", "Tensor Mismatch",
     "tensor-shape-mismatch"},
    {"RuntimeError",
     "Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "
     "\"fc.weight\"",
     "Tensor Mismatch", "state-dict-mismatch"},
    {"RuntimeError", "Function 'LogBackward0' returned nan values in its 0th output.", "Loss NaN",
     "loss-nan"},
    {"ValueError", "Loss is NaN at step 3", "Loss NaN", "loss-nan"},
    {"FileNotFoundError", "[Errno 2] No such file or directory: 'data/train.csv'", "Path Not Found",
     "path-not-found"},
    {"ModuleNotFoundError", "No module named 'timm'", "Library Not Found", "module-not-found"},
    {"ImportError", "libcudnn.so.8: cannot open shared object file: No such file or directory",
     "Library Not Found", "shared-library-not-found"},
    {"PermissionError", "[Errno 13] Permission denied: '/job/code/out.txt'", "Permission Denied",
     "permission-denied"},
    {"OSError", "[Errno 30] Read-only file system: '/job/code/log.txt'", "Permission Denied",
     "read-only-file-system"},
    {"RuntimeError", "File /job/code/model.pt cannot be opened.", "Permission Denied",
     "torch-save-cannot-open"},
    {"ValueError", "learning rate must be positive", "Illegal Argument", "illegal-argument"},
    {"TypeError", "unsupported operand type(s) for +: 'int' and 'str'", "Type Mismatch", "type-mismatch"},
    {"KeyError", "'label'", "Key Not Found", "key-not-found"},
    {"AttributeError", "'NoneType' object has no attribute 'shape'", "Null Reference", "null-reference"},
    {"TypeError", "'NoneType' object is not subscriptable", "Null Reference", "null-reference"},
    {"AttributeError", "'Net' object has no attribute 'fc3'", "Attribute Not Found", "attribute-not-found"},
    {"AttributeError", "module 'torch' has no attribute 'compile'", "Attribute Not Found",
     "module-attribute-not-found"},
    {"AttributeError", "`np.float_` was removed in the NumPy 2.0 release. Use `np.float64` instead.",
     "Attribute Not Found", "numpy-2-removed-name"},
    {"SyntaxError", "invalid syntax (model.py, line 3)", "Syntax Error", "syntax-error"},
    {"IndentationError", "unexpected indent (main.py, line 7)", "Syntax Error", "syntax-error"},
    {"IndexError", "list index out of range", "Illegal Index", "illegal-index"},
    {"NameError", "name 'acc' is not defined", "Undefined Variable", "undefined-variable"},
    {"UnboundLocalError", "local variable 'best' referenced before assignment", "Undefined Variable",
     "undefined-variable"},
    {"NotImplementedError", "", "Not Implemented", "not-implemented"},
    {"ZeroDivisionError", "division by zero", "Division by Zero", "division-by-zero"},
    {"json.decoder.JSONDecodeError", "Expecting value: line 1 column 1 (char 0)", "Corrupt Data",
     "corrupt-data"},
    {"_pickle.UnpicklingError", "invalid load key, 'x'.", "Corrupt Data", "corrupt-data"},
    {"PIL.UnidentifiedImageError", "cannot identify image file 'x.png'", "Corrupt Data", "corrupt-data"},
    {"RuntimeError", "invalid load key, '<'.", "Corrupt Data", "corrupt-data-message"},
    {"_pickle.UnpicklingError",
     "Weights only load failed. This file can still be loaded, to do so you have two options, do "
     "those steps only if you trust the source of the checkpoint. WeightsUnpickler error: Unsupported "
     "global: GLOBAL model.RNNModel was not an allowed global by default.",
     "Framework API Misuse", "torch-load-weights-only"},
    {"UnicodeDecodeError", "'utf-8' codec can't decode byte 0xff in position 0", "Unexpected Encoding",
     "unexpected-encoding"},
    {"UnicodeDecodeError", "'ascii' codec can't decode byte 0xc3 in position 10", "Unexpected Encoding",
     "ascii-locale-encoding"},
    {"RuntimeError",
     "DataLoader worker (pid 123) is killed by signal: Bus error. It is "
     "possible that dataloader's workers are out of shared memory.",
     "Shared Memory Exhausted", "shm-bus-error"},
    {"RuntimeError", "DataLoader worker (pid(s) 4242) exited unexpectedly", "CPU Out of Memory",
     "dataloader-worker-killed"},
    {"urllib.error.URLError", "<urlopen error [Errno -3] Temporary failure in name resolution>",
     "Path Not Found", "network-unavailable"},
    {"AssertionError", "Torch not compiled with CUDA enabled", "Library Not Found", "torch-without-cuda"},
    {"RuntimeError", "CUDA error: device-side assert triggered", "Illegal Index", "device-side-assert"},
    {"mylib.ConfigError", "bad config", "Unclassified", "uncaught-exception"},
};

INSTANTIATE_TEST_SUITE_P(DiagnosisShipped, DiagnosisCategories, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ExceptionCase>& info) {
                           std::string name = info.param.rule + "_" + std::to_string(info.index);
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// Every category in the shipped file is reached by at least one case here or in the
// precedence and attribution tests (which cover those needing more than an exception).
TEST(DiagnosisCategoriesCoverage, EveryCategoryHasACase) {
  std::set<std::string> covered = {"Timeout/Hang",          // diagnosis_precedence_test.cpp
                                   "Disk Full",             // diagnosis_precedence_test.cpp
                                   "Output Lost",           // pipeline_outputs_test.cpp
                                   "Time Limit Exceeded",   // pipeline_estimate_test.cpp
                                   "Slow Input Pipeline"};  // static only: check_code_findings_test.cpp
  for (const ExceptionCase& c : kCases) covered.insert(c.category);
  for (const model::Category& category : shipped_rules().categories()) {
    EXPECT_TRUE(covered.count(category.name)) << category.name;
  }
}

TEST(DiagnosisCategoriesDetails, LocatesTheInnermostUserFrameRelativeToTheCode) {
  model::RunOutcome outcome =
      crashed("KeyError", "'label'", "data",
              {user_frame("/job/code/main.py", 80), user_frame("/job/code/data/dataset.py", 17),
               library_frame("/usr/lib/python3.11/collections/__init__.py")});
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.location.file, "data/dataset.py");
  EXPECT_EQ(finding.location.line, 17);
  EXPECT_EQ(finding.stage, "data");
  EXPECT_EQ(finding.root_cause, "Common Programming Error");
  EXPECT_EQ(finding.dimension, "General Code Error");
  EXPECT_EQ(finding.retry, model::Retry::Useless);
}

TEST(DiagnosisCategoriesDetails, SyntaxErrorIsLocatedAtTheBrokenFile) {
  model::RunOutcome outcome =
      crashed("SyntaxError", "invalid syntax (model.py, line 3)", "init",
              {user_frame("/job/code/main.py", 1), user_frame("/job/code/nets/model.py", 1)});
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.location.file, "nets/model.py");
  EXPECT_EQ(finding.location.line, 3);
}

TEST(DiagnosisCategoriesDetails, UnexpectedKeywordFromAFrameworkIsApiMisuse) {
  const std::string message = "softmax() got an unexpected keyword argument 'axis'";
  model::Finding in_library = only_finding(
      crashed("TypeError", message, "model",
              {user_frame(), library_frame("/usr/lib/python3/dist-packages/keras/activations.py")}));
  EXPECT_EQ(in_library.category, "Framework API Misuse");
  EXPECT_EQ(in_library.root_cause, "API Misunderstanding");
  EXPECT_TRUE(contains(in_library.hint,
                       "softmax() in the image's library version takes no "
                       "argument axis"))
      << in_library.hint;

  // Raised at the user's own call: nothing says it is a framework's function.
  EXPECT_EQ(only_finding(crashed("TypeError", message)).category, "Type Mismatch");
}

TEST(DiagnosisCategoriesDetails, BuiltinsPrefixIsIgnored) {
  EXPECT_EQ(only_finding(crashed("builtins.KeyError", "'x'")).category, "Key Not Found");
}

}  // namespace
}  // namespace preflight::diagnosis
