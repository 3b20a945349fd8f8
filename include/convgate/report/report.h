// Rendering gate results: report.json, verify_result.json (OpenVINO verify-conversion's schema),
// junit.xml and the console table. Rendering never fails; writing files returns a Status.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/gate/bench.h"
#include "convgate/gate/reduce.h"
#include "convgate/gate/results.h"
#include "convgate/gate/verify.h"
#include "convgate/graph/onnx_model.h"
#include "convgate/hub/hub.h"
#include "convgate/pipeline/results.h"

namespace convgate::report {

// Bumped whenever a field changes meaning or disappears (adding fields does not bump it). 2: the
// error summary is a frontier, quantile ladders and coarse joint cells instead of whole histograms;
// stats.comparison_failures is left out when it equals the result's failures, and
// stats.comparison_notes when empty; a result's policy when it repeats the previous result's of
// the same output. `convgate check` reads schema 1 reports too.
inline constexpr int kSchemaVersion = 2;
// The oldest schema `convgate check` reads.
inline constexpr int kOldestReadableSchema = 1;

// How the tool was invoked, for the report header.
struct Invocation {
  std::string command;  // "run", "compare"
  std::vector<std::string> argv;
  std::string started_at;  // ISO 8601 UTC
  double seconds = 0.0;
  // The hf:// models the command fetched (or converted), in the order it named them:
  // report.json's "model_origins", verify_result.json's too, and the console header.
  std::vector<hub::ModelOrigin> model_origins = {};
};

// hub::ModelOrigin records as report.json holds them ("model_origins": [{uri, repo_id, revision,
// commit, file, etag, size, how, converted_from, converter, converter_version}]); summary.json
// and the store hold the same. Reading: InvalidArgument naming the bad field.
nlohmann::json ModelOriginsJson(const std::vector<hub::ModelOrigin>& origins);
Result<std::vector<hub::ModelOrigin>> ModelOriginsFromJson(const nlohmann::json& array);
// One line: "hf://org/m/model.onnx: org/m at main = commit 1a2b..., downloaded now, etag ..." or
// "...: converted from config.json, model.safetensors of org/m at commit 1a2b... by optimum-onnx".
std::string ModelOriginText(const hub::ModelOrigin& origin);

nlohmann::json ReportJson(const gate::RunReport& report, const Invocation& invocation);
nlohmann::json ReportJson(const gate::CompareReport& report, const Invocation& invocation);
// verify: the conversion record, the task, the target's end-to-end run and the comparison.
nlohmann::json ReportJson(const gate::VerifyReport& report, const Invocation& invocation);
nlohmann::json ReportJson(const gate::ReduceReport& report, const Invocation& invocation);
// bench: the sides, the inputs and the benchmark (json/benchmark.h).
nlohmann::json ReportJson(const gate::BenchReport& report, const Invocation& invocation);
// pipeline: every node's source run, replay and swapped run, and the pipeline outputs.
nlohmann::json ReportJson(const pipeline::PipelineReport& report, const Invocation& invocation);

// verify_result.json, exactly the reference's fields:
// {"verify_passed", "e2e_passed", "conversion_path", "task", "e2e_detail", "error"}.
nlohmann::json VerifyResultJson(const gate::RunReport& report);
nlohmann::json VerifyResultJson(const gate::CompareReport& report);
nlohmann::json VerifyResultJson(const gate::VerifyReport& report);
// bench: verify_passed and e2e_passed are the speed verdict; e2e_detail the speed sentence.
nlohmann::json VerifyResultJson(const gate::BenchReport& report);
// verify's verify_result.json for a command line refused before any report existed (a usage
// error: nothing ran): verify_passed and e2e_passed false, `message` the error.
nlohmann::json VerifyUsageErrorJson(const std::string& message);

// JUnit XML: one <testcase> per output per sample; an error verdict is one <testcase> with
// <error>.
std::string JUnitXml(const gate::RunReport& report, const Invocation& invocation);
std::string JUnitXml(const gate::CompareReport& report, const Invocation& invocation);
std::string JUnitXml(const gate::VerifyReport& report, const Invocation& invocation);
// bench: one case per side (its figures in system-out) and the speed gate's.
std::string JUnitXml(const gate::BenchReport& report, const Invocation& invocation);

// Human-readable summary for the terminal. `color` adds ANSI colours (only on a TTY).
std::string ConsoleText(const gate::RunReport& report, bool color);
std::string ConsoleText(const gate::CompareReport& report, bool color);
std::string ConsoleText(const gate::VerifyReport& report, bool color);
std::string ConsoleText(const gate::ReduceReport& report, bool color);
std::string ConsoleText(const gate::BenchReport& report, bool color);
// pipeline: the interface and run order, then one row per node and per pipeline output saying
// which steps pass and fail.
std::string ConsoleText(const pipeline::PipelineReport& report, bool color);

// The one-line error for stderr: "convgate: error (load): target: model.onnx: ...".
std::string ErrorLine(const gate::GateError& error);

// Writes report.json, verify_result.json and junit.xml into `dir` (created if needed), each
// atomically and each whatever became of the others: the error, if any, names every file that
// could not be written. JSON goes through DumpJson (json_text.h), so any bytes in names and paths
// are written escaped, never refused. JSON is compact unless `pretty` (a report of hundreds of
// samples is several times larger indented).
Status WriteResultFiles(const std::filesystem::path& dir, const nlohmann::json& report,
                        const nlohmann::json& verify_result, const std::string& junit,
                        bool pretty = false);

// Writes only verify_result.json into `dir` (created if needed), atomically: what a usage error of
// verify leaves, since every outcome of verify writes one.
Status WriteVerifyResultFile(const std::filesystem::path& dir, const nlohmann::json& verify_result);

// Current UTC time as ISO 8601 ("2026-11-25T21:40:00Z").
std::string UtcNow();
// hostname, os, kernel, cpu model, logical cores, memory.
nlohmann::json HostJson();

}  // namespace convgate::report
