#include <gtest/gtest.h>

#include "harness/events.hpp"
#include "test_support.hpp"

namespace preflight::harness {
namespace {

using preflight::testing::TempDir;

TEST(HarnessEvents, MissingFileMeansTheHarnessNeverLoaded) {
  TempDir dir;
  HarnessEvents events = read_events(dir.path() / "events.jsonl");
  EXPECT_FALSE(events.started);
  EXPECT_TRUE(events.stages.empty());
  EXPECT_TRUE(events.exceptions.empty());
  EXPECT_TRUE(events.processes.empty());
  EXPECT_EQ(events.main_pid, -1);
}

TEST(HarnessEvents, ReadsStartStagesCapsAndExit) {
  HarnessEvents events = parse_events(
      R"j({"ev":"start","t":0.0,"pid":10,"python":"3.11.2","argv":["main.py"],"phase":"command","stage":"init"})j"
      "\n"
      R"j({"ev":"stage","t":1.5,"pid":10,"stage":"data","why":"DataLoader iterated","where":{"file":"/job/code/main.py","line":21,"function":"train","user":true}})j"
      "\n"
      R"j({"ev":"cap","t":1.6,"pid":10,"what":"DataLoader","limit":2,"where":{"file":"/job/code/main.py","line":21,"function":"train","user":true}})j"
      "\n"
      R"j({"ev":"stage","t":1.7,"pid":10,"stage":"train","why":"loss.backward()","where":null})j"
      "\n"
      R"j({"ev":"exit","t":2.0,"pid":10,"code":0})j"
      "\n");
  EXPECT_TRUE(events.started);
  EXPECT_EQ(events.python_version, "3.11.2");
  ASSERT_EQ(events.stages.size(), 2u);
  EXPECT_EQ(events.stages[0].stage, "data");
  EXPECT_DOUBLE_EQ(events.stages[0].t, 1.5);
  EXPECT_EQ(events.stages[0].pid, 10);
  EXPECT_EQ(events.stages[0].why, "DataLoader iterated");
  ASSERT_TRUE(events.stages[0].where.has_value());
  EXPECT_EQ(events.stages[0].where->file, "/job/code/main.py");
  EXPECT_EQ(events.stages[0].where->line, 21);
  EXPECT_EQ(events.stages[0].where->function, "train");
  EXPECT_TRUE(events.stages[0].where->user);
  EXPECT_FALSE(events.stages[1].where.has_value());
  ASSERT_EQ(events.caps.size(), 1u);
  EXPECT_EQ(events.caps[0].what, "DataLoader");
  EXPECT_EQ(events.caps[0].limit, 2);
  ASSERT_EQ(events.processes.size(), 1u);
  EXPECT_EQ(events.processes[0].exited, 2.0);
}

TEST(HarnessEvents, ReadsAnExceptionWithErrnoPathAndFrames) {
  HarnessEvents events = parse_events(
      R"j({"ev":"exception","t":3.2,"pid":7,"type":"FileNotFoundError","message":"[Errno 2] No such file or directory: '/data/x.csv'","errno":2,"path":"/data/x.csv","stage":"data","frames":[{"file":"/job/code/main.py","line":60,"function":"<module>","user":true},{"file":"/job/code/data.py","line":5,"function":"__init__","user":true},{"file":"/usr/lib/python3.11/codecs.py","line":9,"function":"open","user":false}],"origin":"excepthook"})j"
      "\n");
  ASSERT_EQ(events.exceptions.size(), 1u);
  const ExceptionEvent& e = events.exceptions[0];
  EXPECT_EQ(e.type, "FileNotFoundError");
  EXPECT_EQ(e.errno_value, 2);
  EXPECT_EQ(e.path, "/data/x.csv");
  EXPECT_EQ(e.stage, "data");
  EXPECT_EQ(e.pid, 7);
  ASSERT_EQ(e.frames.size(), 3u);
  ASSERT_NE(e.user_frame(), nullptr);
  EXPECT_EQ(e.user_frame()->file, "/job/code/data.py");
  EXPECT_EQ(e.user_frame()->line, 5);
}

TEST(HarnessEvents, NullErrnoAndNoUserFrame) {
  HarnessEvents events = parse_events(
      R"j({"ev":"exception","t":1,"pid":7,"type":"RuntimeError","message":"File /out/m.pt cannot be opened.","errno":null,"path":"/out/m.pt","stage":"checkpoint","frames":[{"file":"/usr/lib/python3/dist-packages/torch/serialization.py","line":422,"function":"save","user":false}]})j"
      "\n");
  ASSERT_EQ(events.exceptions.size(), 1u);
  EXPECT_FALSE(events.exceptions[0].errno_value.has_value());
  EXPECT_EQ(events.exceptions[0].user_frame(), nullptr);
}

TEST(HarnessEvents, SkipsMalformedAndPartialLines) {
  HarnessEvents events = parse_events(
      "not json\n"
      "[1,2,3]\n"
      R"j({"ev":"start","t":0,"pid":1,"python":"3.6.15","argv":[],"phase":"command"})j"
      "\n"
      "\n"
      R"j({"ev":"unknown_future_event","t":0,"pid":1})j"
      "\n"
      R"j({"ev":"stage","t":0.1,"pid":1,"stage":"model","why":"model created: Net","where":{"file":"/job/code/m)j");
  EXPECT_TRUE(events.started);
  EXPECT_EQ(events.python_version, "3.6.15");
  EXPECT_TRUE(events.stages.empty());
  ASSERT_EQ(events.processes.size(), 1u);
  EXPECT_FALSE(events.processes[0].exited.has_value());
}

TEST(HarnessEvents, ALineNestedFarTooDeepIsSkipped) {
  // The job writes its events file: 500,000 brackets in one line crashed nlohmann's parser.
  HarnessEvents events =
      parse_events(R"j({"ev":"start","t":0,"pid":1,"python":"3.11.4","argv":[],"phase":"command"})j"
                   "\n" +
                   std::string(500'000, '[') + std::string(500'000, ']') + "\n" +
                   R"j({"ev":"exit","t":1,"pid":1,"code":0})j"
                   "\n");
  EXPECT_EQ(events.python_version, "3.11.4");
  ASSERT_EQ(events.processes.size(), 1u);
  EXPECT_TRUE(events.processes[0].exited.has_value()) << "the line after it is read";
}

TEST(HarnessEvents, TheMainProcessIsTheCommandsFirstThatTrained) {
  // pip in setup, then `python make_corpus.py && python train.py && python predict.py`.
  HarnessEvents events = parse_events(
      R"j({"ev":"start","t":0,"pid":5,"started":100,"python":"3.11.2","argv":["-m","pip"],"phase":"setup","stage":"setup"})j"
      "\n"
      R"j({"ev":"exit","t":1,"pid":5,"code":0})j"
      "\n"
      R"j({"ev":"start","t":0,"pid":20,"started":102,"python":"3.11.2","argv":["make_corpus.py"],"phase":"command","stage":"init"})j"
      "\n"
      R"j({"ev":"exit","t":2,"pid":20,"code":0})j"
      "\n"
      R"j({"ev":"start","t":0,"pid":21,"started":104.5,"python":"3.11.2","argv":["train.py"],"phase":"command","stage":"init"})j"
      "\n"
      R"j({"ev":"stage","t":1,"pid":21,"stage":"train","why":"loss.backward()","where":null})j"
      "\n"
      R"j({"ev":"exit","t":3,"pid":21,"code":0})j"
      "\n"
      R"j({"ev":"start","t":0,"pid":22,"started":108,"python":"3.11.2","argv":["predict.py"],"phase":"command","stage":"init"})j"
      "\n");
  EXPECT_EQ(events.main_pid, 21);
  ASSERT_EQ(events.processes.size(), 4u);
  EXPECT_TRUE(events.processes[0].setup);
  EXPECT_FALSE(events.processes[3].exited.has_value());  // killed, or still running
  EXPECT_EQ(events.wall_time(21, 1.0), 105.5);
  EXPECT_FALSE(events.wall_time(99, 1.0).has_value());
  std::vector<int> timeline;
  for (const ProcessRun* process : timeline_processes(events)) timeline.push_back(process->pid);
  EXPECT_EQ(timeline, (std::vector<int>{20, 21, 22}));
}

TEST(HarnessEvents, ALauncherAndOtherRanksRunBesideTheMainProcess) {
  HarnessEvents events = parse_events(
      R"j({"ev":"start","t":0,"pid":20,"started":100,"python":"3.11.2","argv":["-m","torch.distributed.run"],"phase":"command","stage":"init"})j"
      "\n"
      R"j({"ev":"start","t":0,"pid":30,"started":101,"python":"3.11.2","argv":["train.py"],"phase":"command","stage":"init"})j"
      "\n"
      R"j({"ev":"start","t":0,"pid":31,"started":101,"python":"3.11.2","argv":["train.py"],"phase":"command","stage":"init"})j"
      "\n"
      R"j({"ev":"rank","t":0.5,"pid":31,"rank":0,"world":2,"started":101})j"
      "\n"
      R"j({"ev":"exit","t":4,"pid":30,"code":0})j"
      "\n"
      R"j({"ev":"exit","t":4,"pid":31,"code":0})j"
      "\n"
      R"j({"ev":"exit","t":6,"pid":20,"code":0})j"
      "\n");
  EXPECT_EQ(events.main_pid, 31);
  std::vector<int> timeline;
  for (const ProcessRun* process : timeline_processes(events)) timeline.push_back(process->pid);
  EXPECT_EQ(timeline, (std::vector<int>{31}));
}

TEST(HarnessEvents, FixtureFromARealRunReadsAsEvaluateFailure) {
  HarnessEvents events =
      read_events(preflight::testing::source_dir() / "tests/harness/fixtures/mnist_evaluate_keyerror.jsonl");
  ASSERT_TRUE(events.started);
  ASSERT_EQ(events.exceptions.size(), 1u);
  EXPECT_EQ(events.exceptions[0].type, "KeyError");
  EXPECT_EQ(events.exceptions[0].stage, "evaluate");
  ASSERT_NE(events.exceptions[0].user_frame(), nullptr);
  EXPECT_EQ(events.exceptions[0].user_frame()->function, "evaluate");
  bool validated = false;
  for (const auto& s : events.stages) validated = validated || s.stage == "validate";
  EXPECT_TRUE(validated);
  EXPECT_FALSE(events.caps.empty());
}

TEST(HarnessEvents, FixtureFromARealRunCarriesTheCheckpointPath) {
  HarnessEvents events =
      read_events(preflight::testing::source_dir() / "tests/harness/fixtures/save_readonly.jsonl");
  ASSERT_EQ(events.exceptions.size(), 1u);
  EXPECT_EQ(events.exceptions[0].type, "RuntimeError");
  EXPECT_EQ(events.exceptions[0].stage, "checkpoint");
  EXPECT_EQ(events.exceptions[0].path, "/outputs/ro/model.pt");
  EXPECT_FALSE(events.exceptions[0].errno_value.has_value());
}

TEST(HarnessEvents, ReadsClampsOncePerDistinctValue) {
  HarnessEvents events = parse_events(
      R"j({"ev":"clamp","t":0.1,"pid":10,"what":"argparse --epochs","original":14,"value":2,"where":{"file":"/job/code/main.py","line":9,"function":"<module>","user":true}})j"
      "\n"
      // Another rank parsing the same arguments.
      R"j({"ev":"clamp","t":0.1,"pid":11,"what":"argparse --epochs","original":14,"value":2,"where":{"file":"/job/code/main.py","line":9,"function":"<module>","user":true}})j"
      "\n"
      R"j({"ev":"clamp","t":0.2,"pid":10,"what":"lightning Trainer limit_train_batches","original":null,"value":2,"where":null})j"
      "\n"
      R"j({"ev":"clamp","t":0.2,"pid":10,"what":"argparse --lr","original":0.5,"value":"0.1"})j"
      "\n"
      R"j({"ev":"clamp","t":0.3,"pid":10,"original":3,"value":2})j"
      "\n");
  ASSERT_EQ(events.clamps.size(), 3u);
  EXPECT_EQ(events.clamps[0].what, "argparse --epochs");
  EXPECT_EQ(events.clamps[0].original, "14");
  EXPECT_EQ(events.clamps[0].value, "2");
  ASSERT_TRUE(events.clamps[0].where.has_value());
  EXPECT_EQ(events.clamps[0].where->line, 9);
  EXPECT_FALSE(events.clamps[1].original.has_value());
  EXPECT_FALSE(events.clamps[1].where.has_value());
  EXPECT_EQ(events.clamps[2].original, "0.5");
  EXPECT_EQ(events.clamps[2].value, "\"0.1\"");
}

TEST(HarnessEvents, ReadsLoopsEndedAsClampsAndLoopsLeftInFull) {
  HarnessEvents events = parse_events(
      R"j({"ev":"cut","t":0.5,"pid":10,"what":"for loop","kind":"epochs","after":2,"original":150,"how":"exhausted its iterator","where":{"file":"/job/code/main.py","line":57,"function":"main","user":true}})j"
      "\n"
      R"j({"ev":"cut","t":0.5,"pid":10,"what":"for loop","kind":"batches","after":2,"original":null,"how":"exhausted its iterator","where":{"file":"/job/code/main.py","line":30,"function":"train","user":true}})j"
      "\n"
      // The same loop ended in another rank.
      R"j({"ev":"cut","t":0.6,"pid":11,"what":"for loop","kind":"batches","after":2,"original":null,"where":{"file":"/job/code/main.py","line":30,"function":"train","user":true}})j"
      "\n"
      R"j({"ev":"uncut","t":0.7,"pid":10,"what":"while loop","why":"it is the last statement of its function","after":4,"where":{"file":"/job/code/main.py","line":80,"function":"fit","user":true}})j"
      "\n");
  ASSERT_EQ(events.clamps.size(), 2u);
  EXPECT_TRUE(events.clamps[0].cut);
  EXPECT_EQ(events.clamps[0].what, "for loop");
  EXPECT_EQ(events.clamps[0].kind, "epochs");
  EXPECT_EQ(events.clamps[0].original, "150");
  EXPECT_EQ(events.clamps[0].value, "2");
  EXPECT_FALSE(events.clamps[1].original.has_value());
  EXPECT_EQ(events.clamps[1].where->line, 30);
  ASSERT_EQ(events.uncut_loops.size(), 1u);
  EXPECT_EQ(events.uncut_loops[0].what, "while loop");
  EXPECT_EQ(events.uncut_loops[0].why, "it is the last statement of its function");
  EXPECT_EQ(events.uncut_loops[0].where->line, 80);
}

TEST(HarnessEvents, ReadsAJobEndedForHavingNoEndOfItsOwn) {
  HarnessEvents events = parse_events(
      R"j({"ev":"endless","t":20.0,"pid":1,"after":150,"quiet":50,"where":{"file":"/job/code/trainer.py","line":54,"function":"train_step","user":true},"loop":{"file":"/job/code/trainer.py","line":65,"function":"run","user":true,"what":"while loop"}})j"
      "\n"
      R"j({"ev":"endless","t":9.0,"pid":2,"after":100,"quiet":50,"where":null,"loop":null})j"
      "\n");
  ASSERT_EQ(events.endless.size(), 2u);
  EXPECT_EQ(events.endless[0].after, 150);
  EXPECT_EQ(events.endless[0].quiet, 50);
  EXPECT_EQ(events.endless[0].pid, 1);
  EXPECT_EQ(events.endless[0].where->line, 54);
  EXPECT_EQ(events.endless[0].loop->line, 65);
  EXPECT_EQ(events.endless[0].loop_what, "while loop");
  EXPECT_FALSE(events.endless[1].loop.has_value());  // a library's loop
  EXPECT_EQ(events.endless[1].loop_what, "");
}

TEST(HarnessEvents, ReadsAMeasuredStepAndEpochEnds) {
  HarnessEvents events = parse_events(
      R"j({"ev":"step_measure","t":1.2,"pid":10,"seconds":0.03,"flops":119749781,"ops":43,"live_bytes":1205408,"step_bytes":9283592,"replicas":4,"batch_size":64,"batches_per_epoch":null,"stage":"train","where":{"file":"/job/code/train.py","line":40,"function":"train","user":true}})j"
      "\n"
      R"j({"ev":"epoch_end","t":1.3,"pid":10,"batches":2,"of":32})j"
      "\n");
  ASSERT_EQ(events.steps.size(), 1u);
  const StepMeasure& step = events.steps[0];
  EXPECT_DOUBLE_EQ(step.seconds, 0.03);
  EXPECT_DOUBLE_EQ(step.flops, 119749781);
  EXPECT_EQ(step.ops, 43);
  EXPECT_EQ(step.live_bytes, 1205408u);
  EXPECT_EQ(step.step_bytes, 9283592u);
  EXPECT_EQ(step.replicas, 4);
  EXPECT_EQ(step.batch_size, 64);
  EXPECT_FALSE(step.batches_per_epoch.has_value());
  ASSERT_TRUE(step.where.has_value());
  EXPECT_EQ(step.where->line, 40);
  ASSERT_EQ(events.epochs.size(), 1u);
  EXPECT_EQ(events.epochs[0].batches, 2);
  EXPECT_EQ(events.epochs[0].pid, 10);
}

TEST(HarnessEvents, ReadsSavesAndLocatesThemInTheCode) {
  HarnessEvents events = parse_events(
      R"j({"ev":"save","t":2.0,"pid":10,"path":"/home/job/runs/e0.pt","where":{"file":"/job/code/train.py","line":26,"function":"main","user":true}})j"
      "\n"
      R"j({"ev":"save","t":2.1,"pid":10,"path":"","where":null})j"
      "\n");
  ASSERT_EQ(events.saves.size(), 1u) << "a save without a path is dropped";
  EXPECT_EQ(events.saves[0].path, "/home/job/runs/e0.pt");
  auto location = location_in_code(events.saves[0].where, "/job/code");
  EXPECT_EQ(location.file, "train.py");
  EXPECT_EQ(location.line, 26);
  auto library =
      location_in_code(Frame{"/usr/lib/python3/dist-packages/torch/x.py", 3, "f", false}, "/job/code");
  EXPECT_TRUE(library.file.empty()) << "only the job's own frames are locations";
}

TEST(HarnessEvents, ReadsTheStackFaulthandlerWroteWhenTheTimeWasUp) {
  const std::string dump =
      "Stack (most recent call first):\n"
      "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
      "  File \"/job/code/main.py\", line 4 in wait_for_peers\n"
      "  File \"/job/code/main.py\", line 6 in <module>\n"
      "\n"
      "Stack (most recent call first):\n"
      "  File \"/job/code/main.py\", line 99 in later\n";
  auto frames = parse_stack_dump(dump, "/job/code");
  ASSERT_EQ(frames.size(), 3u) << "the first stack only";
  EXPECT_EQ(frames[0].line, 6) << "outermost first";
  EXPECT_EQ(frames[1].function, "wait_for_peers");
  EXPECT_TRUE(frames[1].user);
  EXPECT_FALSE(frames[2].user);
  EXPECT_EQ(frames[2].file, "/usr/lib/python3.11/threading.py");
  EXPECT_TRUE(parse_stack_dump("", "/job/code").empty());
}

TEST(HarnessEvents, ReadsANonfiniteLoss) {
  HarnessEvents events = parse_events(
      R"j({"ev":"start","t":0.0,"pid":10,"python":"3.11.2","argv":["main.py"],"phase":"command","stage":"init"})j"
      "\n"
      R"j({"ev":"nonfinite","t":1.25,"pid":10,"step":3,"value":"nan","stage":"train","where":{"file":"/job/code/train.py","line":31,"function":"train","user":true}})j"
      "\n"
      R"j({"ev":"exit","t":2.0,"pid":10,"code":0})j"
      "\n");
  ASSERT_EQ(events.nonfinite.size(), 1u);
  const NonfiniteEvent& n = events.nonfinite[0];
  EXPECT_EQ(n.step, 3);
  EXPECT_EQ(n.value, "nan");
  EXPECT_EQ(n.stage, "train");
  EXPECT_EQ(n.pid, 10);
  EXPECT_DOUBLE_EQ(n.t, 1.25);
  ASSERT_TRUE(n.where.has_value());
  EXPECT_EQ(n.where->file, "/job/code/train.py");
  EXPECT_EQ(n.where->line, 31);
}

TEST(HarnessEvents, ReadsFullSizeChecksAndASampledStep) {
  HarnessEvents events = parse_events(
      R"j({"ev":"full_size","t":2.0,"pid":10,"reached":"exception","batch":32,"sampled":2,"where":{"file":"/job/code/train.py","line":48,"function":"main","user":true},"seconds":0.2,"made_up":[{"what":"a value read (bool)","where":{"file":"/job/code/train.py","line":52,"function":"main","user":true}},"junk"],"exception":{"type":"RuntimeError","message":"\u001b[31mshapes\u001b[0m differ","stage":"train","frames":[{"file":"/job/code/train.py","line":37,"function":"forward","user":true}]},"shape_only":false})j"
      "\n"
      R"j({"ev":"full_size","t":2.1,"pid":10,"reached":"unavailable","why":"PyTorch 1.13.1 has no shape-only tensors","batch":64,"sampled":null,"where":null})j"
      "\n"
      R"j({"ev":"step_measure","t":3.0,"pid":10,"seconds":0.01,"flops":1e9,"ops":9,"live_bytes":1,"step_bytes":2,"batch_size":32,"sampled_batch":2})j"
      "\n");
  ASSERT_EQ(events.full_size.size(), 2u);
  const FullSizeCheck& check = events.full_size[0];
  EXPECT_EQ(check.reached, "exception");
  EXPECT_EQ(check.batch, 32);
  EXPECT_EQ(check.sampled, 2);
  EXPECT_EQ(check.where->line, 48);
  ASSERT_EQ(check.made_up.size(), 1u) << "an entry that is not an object is skipped";
  EXPECT_EQ(check.made_up[0].where->line, 52);
  ASSERT_TRUE(check.exception.has_value());
  EXPECT_EQ(check.exception->message, "shapes differ") << "escapes are stripped";
  EXPECT_EQ(check.exception->user_frame()->line, 37);
  EXPECT_EQ(check.exception->pid, 10);
  EXPECT_FALSE(check.shape_only_limit);
  EXPECT_EQ(events.full_size[1].reached, "unavailable");
  EXPECT_FALSE(events.full_size[1].sampled.has_value());
  EXPECT_EQ(events.full_size[1].why, "PyTorch 1.13.1 has no shape-only tensors");
  ASSERT_EQ(events.steps.size(), 1u);
  EXPECT_EQ(events.steps[0].batch_size, 32);
  EXPECT_EQ(events.steps[0].sampled_batch, 2);
}

TEST(HarnessEvents, ReadsAShapeOnlyModelAndTheValuesItsProcessMadeUp) {
  std::string lines =
      R"j({"ev":"made_up","t":0.5,"pid":10,"what":"a value read (item)","where":null})j"
      "\n"
      R"j({"ev":"shape_only","t":1.0,"pid":10,"parameters":201326592,"bytes":805306368,"limit":805306368,"where":{"file":"/job/code/train.py","line":141,"function":"main","user":true}})j"
      "\n"
      R"j({"ev":"step_measure","t":3.0,"pid":10,"seconds":0.4,"flops":1e12,"ops":9,"live_bytes":1,"step_bytes":2,"shape_only":true})j"
      "\n";
  for (int i = 0; i < 25; ++i)
    lines +=
        R"j({"ev":"made_up","t":2.0,"pid":10,"what":"a value read (item)","where":{"file":"/job/code/train.py","line":)j" +
        std::to_string(170 + i) + R"j(,"function":"main","user":true}})j" + "\n";
  lines += R"j({"ev":"made_up","t":2.0,"pid":11,"what":"torch.nonzero","where":null})j"
           "\n";
  HarnessEvents events = parse_events(lines);
  ASSERT_EQ(events.shape_only.size(), 1u);
  const ShapeOnlyModel& model = events.shape_only[0];
  EXPECT_EQ(model.parameters, 201326592);
  EXPECT_EQ(model.bytes, 805306368u);
  EXPECT_EQ(model.limit, 805306368u);
  EXPECT_EQ(model.where->line, 141);
  ASSERT_EQ(model.made_up.size(), 20u) << "at most 20, and none from before the switch or another process";
  EXPECT_EQ(model.made_up[0].where->line, 170);
  ASSERT_EQ(events.steps.size(), 1u);
  EXPECT_TRUE(events.steps[0].shape_only);
}

}  // namespace
}  // namespace preflight::harness
