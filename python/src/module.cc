// convgate._convgate: the C++ engine as the Python package (python/convgate) calls it.
//
//   compare_arrays  outputs the caller holds, judged without a copy: each array is viewed where it
//                   lies (numpy's buffer, a CPU torch tensor's DLPack capsule) as a Tensor that
//                   adopts its memory (core/tensor.h Tensor::Adopt), for the call only
//   run_command     any command line, run in this process (cli RunInProcess), what it prints
//                   captured
//   write_npz       arrays into an .npz (inputs a model-based comparison loads)
//   render_*        the HTML page and the Markdown summary of a report.json document
//
// The GIL is released while tensors are compared and while commands run: other Python threads go
// on, and nothing here touches Python objects in that time.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "cli/command_line.h"
#include "cli/flag.h"
#include "cli/flag_groups.h"
#include "convgate/gate/workflows.h"
#include "convgate/io/npz.h"
#include "convgate/report/html.h"
#include "convgate/report/json_text.h"
#include "convgate/report/render.h"
#include "convgate/report/report.h"
#include "convgate/version.h"

namespace nb = nanobind;

namespace convgate::python {
namespace {

// Read-only, C-contiguous, in host memory: numpy arrays and CPU torch tensors as they are;
// anything else nanobind converts (a copy) or refuses with a TypeError naming the argument.
using Array = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

// Makes the package's exception for an exit code (convgate._errors.error_for: UsageError,
// CannotRunError or InternalError). Set when the package is imported.
nb::object g_make_error;

[[noreturn]] void Raise(int exit_code, const std::string& message) {
  if (!g_make_error.is_valid()) throw std::runtime_error(message);
  nb::object error = g_make_error(message, exit_code);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw nb::python_error();
}

Result<DType> DTypeOf(const nb::dlpack::dtype& type) {
  using Code = nb::dlpack::dtype_code;
  if (type.lanes == 1) {
    switch (static_cast<Code>(type.code)) {
      case Code::Float:
        if (type.bits == 16) return DType::kFloat16;
        if (type.bits == 32) return DType::kFloat32;
        if (type.bits == 64) return DType::kFloat64;
        break;
      case Code::Bfloat:
        if (type.bits == 16) return DType::kBFloat16;
        break;
      case Code::Int:
        if (type.bits == 8) return DType::kInt8;
        if (type.bits == 16) return DType::kInt16;
        if (type.bits == 32) return DType::kInt32;
        if (type.bits == 64) return DType::kInt64;
        break;
      case Code::UInt:
        if (type.bits == 8) return DType::kUInt8;
        if (type.bits == 16) return DType::kUInt16;
        if (type.bits == 32) return DType::kUInt32;
        if (type.bits == 64) return DType::kUInt64;
        break;
      case Code::Bool:
        if (type.bits == 8) return DType::kBool;
        break;
      default:
        break;
    }
  }
  return Status::InvalidArgument("an array of " + std::to_string(type.bits) +
                                 "-bit elements of DLPack type code " + std::to_string(type.code) +
                                 " (convgate takes float16/32/64, bfloat16, int8-64, uint8-64 "
                                 "and bool)");
}

// A view of `array` (no copy); valid while the array lives, which the caller's call guarantees.
Result<Tensor> View(const Array& array) {
  CONVGATE_ASSIGN_OR_RETURN(const DType dtype, DTypeOf(array.dtype()));
  std::vector<int64_t> dims;
  for (size_t i = 0; i < array.ndim(); ++i) dims.push_back(static_cast<int64_t>(array.shape(i)));
  CONVGATE_ASSIGN_OR_RETURN(Shape shape, Shape::Make(std::move(dims)));
  auto* data = const_cast<std::byte*>(static_cast<const std::byte*>(array.data()));
  return Tensor::Adopt(dtype, std::move(shape), std::span<std::byte>(data, array.nbytes()),
                       std::shared_ptr<void>());
}

using Sample = std::vector<std::pair<std::string, Array>>;

Result<std::vector<TensorMap>> ViewSamples(const std::vector<Sample>& samples,
                                           const std::string& side) {
  std::vector<TensorMap> maps;
  for (size_t i = 0; i < samples.size(); ++i) {
    TensorMap map;
    for (const auto& [name, array] : samples[i]) {
      Result<Tensor> tensor = View(array);
      if (!tensor.ok()) {
        return tensor.status().WithContext(side + " sample " + std::to_string(i) + " '" + name +
                                           "'");
      }
      if (Status added = map.Insert(name, std::move(tensor).value()); !added.ok()) {
        return added.WithContext(side + " sample " + std::to_string(i));
      }
    }
    maps.push_back(std::move(map));
  }
  return maps;
}

// The tolerance and agreement flags, exactly as `convgate compare` parses them.
Status ParseJudgingFlags(const std::vector<std::string>& args, gate::HeldOutputsOptions& options) {
  cli::FlagSet flags;
  cli::AddToleranceFlags(flags, options.policy);
  cli::AddAgreementFlags(flags, options.agreement);
  CLI::App app("convgate.compare_arrays");
  flags.Register(app);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& error) {
    return Status::InvalidArgument(error.what());
  }
  return flags.Apply();
}

// (exit code, report.json, verify_result.json, junit.xml, console text)
using Rendered = std::tuple<int, std::string, std::string, std::string, std::string>;

Rendered CompareArrays(const std::vector<Sample>& expected, const std::vector<Sample>& actual,
                       const std::vector<std::string>& flags, const std::string& expected_name,
                       const std::string& actual_name) {
  gate::HeldOutputsOptions options;
  options.source_name = expected_name;
  options.target_name = actual_name;
  if (Status parsed = ParseJudgingFlags(flags, options); !parsed.ok()) {
    Raise(ToInt(ExitCode::kUsage), parsed.message());
  }
  Result<std::vector<TensorMap>> source = ViewSamples(expected, expected_name);
  if (!source.ok()) Raise(ToInt(ExitCode::kUsage), source.status().message());
  Result<std::vector<TensorMap>> target = ViewSamples(actual, actual_name);
  if (!target.ok()) Raise(ToInt(ExitCode::kUsage), target.status().message());
  report::Rendering rendering;
  {
    nb::gil_scoped_release unlocked;
    const gate::CompareReport result = gate::CompareHeldOutputs(options, *source, *target);
    report::Invocation invocation;
    invocation.command = "compare";
    invocation.argv = {"convgate.compare_arrays"};
    invocation.argv.insert(invocation.argv.end(), flags.begin(), flags.end());
    invocation.started_at = report::UtcNow();
    rendering = report::Render(result, invocation, /*color=*/false);
  }
  return {ToInt(rendering.exit_code), report::DumpJson(rendering.report),
          report::DumpJson(rendering.verify_result), rendering.junit, rendering.console};
}

std::tuple<int, std::string, std::string> RunCommand(const std::vector<std::string>& args) {
  cli::CapturedRun run;
  {
    nb::gil_scoped_release unlocked;
    run = cli::RunInProcess(args);
  }
  return {run.exit_code, run.out, run.err};
}

void WriteNpz(const std::string& path, const Sample& arrays) {
  TensorMap map;
  for (const auto& [name, array] : arrays) {
    Result<Tensor> tensor = View(array);
    if (!tensor.ok()) Raise(ToInt(ExitCode::kUsage), tensor.status().WithContext(name).message());
    if (Status added = map.Insert(name, std::move(tensor).value()); !added.ok()) {
      Raise(ToInt(ExitCode::kUsage), added.message());
    }
  }
  Status written;
  {
    nb::gil_scoped_release unlocked;
    written = io::WriteNpz(path, map, io::NpzWriteOptions{.sync = false});
  }
  if (!written.ok()) Raise(ToInt(ExitCode::kCannotRun), written.message());
}

nlohmann::json ParseReport(const std::string& text) {
  nlohmann::json document = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) Raise(ToInt(ExitCode::kUsage), "not a report.json document");
  return document;
}

void WriteResults(const std::string& dir, const std::string& report, const std::string& verify,
                  const std::string& junit) {
  Status written = report::WriteResultFiles(dir, ParseReport(report), ParseReport(verify), junit,
                                            /*pretty=*/true);
  if (!written.ok()) Raise(ToInt(ExitCode::kCannotRun), written.message());
}

}  // namespace
}  // namespace convgate::python

NB_MODULE(_convgate, m) {
  using namespace convgate::python;
  m.doc() = "convgate's C++ engine; use the convgate package, not this module.";
  m.def("set_error_factory", [](nb::object make) { g_make_error = std::move(make); });
  m.def("compare_arrays", &CompareArrays, nb::arg("expected"), nb::arg("actual"), nb::arg("flags"),
        nb::arg("expected_name"), nb::arg("actual_name"));
  m.def("run_command", &RunCommand, nb::arg("args"));
  m.def("write_npz", &WriteNpz, nb::arg("path"), nb::arg("arrays"));
  m.def("write_results", &WriteResults, nb::arg("dir"), nb::arg("report"), nb::arg("verify_result"),
        nb::arg("junit"));
  m.def("render_html", [](const std::string& report) {
    return convgate::report::RenderHtml({ParseReport(report)});
  });
  m.def("render_markdown", [](const std::string& report) {
    return convgate::report::RenderMarkdown({ParseReport(report)});
  });
  m.def("version",
        [] { return std::string(convgate::kVersion) + " (" + convgate::kBuildCommit + ")"; });
}
