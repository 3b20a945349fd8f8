#include "report/json/side.h"

#include <string>
#include <vector>

namespace convgate::report::internal {
namespace {

const Absent<std::string> kEmptyText = OrElse<std::string>("");
const Absent<std::string> kOmittedWhenEmpty = Default<std::string>("");

template <typename Io, typename Side>
void SideFields(Io& io, Side& side) {
  io.Text("role", side.role);
  io.Text("path", side.path);
  io.Text("kind", side.kind, kEmptyText);
  io.Text("format", side.format, kEmptyText);
  io.Text("backend", side.backend, kEmptyText);
  io.Text("backend_version", side.backend_version, kEmptyText);
  io.Text("backend_settings", side.backend_settings, kOmittedWhenEmpty);
  io.Text("sha256", side.sha256, kEmptyText);
  io.Number("load_seconds", side.load_seconds, OrElse(0.0));
  io.Number("run_seconds", side.run_seconds, OrElse(0.0));
  io.Texts("outputs", side.output_names);
  io.Derived("outputs_saved_to", side.outputs_saved_to);
  io.Texts("notes", side.notes, OrElse(std::vector<std::string>{}));
  // compare only: "name", or "position" with the renaming (a TorchScript side, saved outputs
  // that name nothing).
  io.Text("output_matching", side.output_matching, kOmittedWhenEmpty);
  io.Texts("output_renames", side.output_renames, Default(std::vector<std::string>{}));
  // exec only: the command and the end of its stderr.
  io.Text("backend_command", side.backend_command, kOmittedWhenEmpty);
  io.Text("backend_log", side.backend_log, kOmittedWhenEmpty);
}

template <typename Io, typename Dataset>
void DatasetFields(Io& io, Dataset& dataset) {
  io.Text("origin", dataset.origin);
  io.Count("samples", dataset.samples);
  io.Objects("tensors", dataset.tensors, [](auto& part, auto& tensor) {
    part.Text("name", tensor.name);
    part.Text("dtype", tensor.dtype);
    part.Ints("shape", tensor.shape);
  });
  io.Texts("notes", dataset.notes);
  io.Text("saved_to", dataset.saved_to, kOmittedWhenEmpty);
  // --data: every file read, in the order read, so a run on a folder can be repeated exactly.
  io.Objects(
      "files", dataset.files,
      [](auto& part, auto& file) {
        part.Text("input", file.input);
        part.Text("path", file.path);
        part.Text("sha256", file.sha256);
      },
      Presence::kOmittedWhenEmpty);
}

const auto kSideFields = [](auto& io, auto& side) { SideFields(io, side); };
const auto kDatasetFields = [](auto& io, auto& dataset) { DatasetFields(io, dataset); };

}  // namespace

nlohmann::json SideJson(const gate::SideRecord& side) {
  return JsonWriter::Write(side, kSideFields);
}

gate::SideRecord SideFromJson(const JsonFields& json) {
  return JsonReader::Read<gate::SideRecord>(json, kSideFields);
}

nlohmann::json DatasetJson(const gate::DatasetRecord& dataset) {
  return JsonWriter::Write(dataset, kDatasetFields);
}

gate::DatasetRecord DatasetFromJson(const JsonFields& json) {
  return JsonReader::Read<gate::DatasetRecord>(json, kDatasetFields);
}

}  // namespace convgate::report::internal
