// ONNX (or any format OpenVINO's frontends read) -> IR in-process: what ovc does, without the
// Python start-up and imports (ov_model.h).
#include <openvino/openvino.hpp>

#include "backends/openvino/ov_common.h"
#include "backends/openvino/ov_model.h"

namespace convgate::backends {

namespace fs = std::filesystem;

Status SaveOpenVinoIr(const fs::path& source, const fs::path& out_xml, bool compress_to_fp16) {
  std::error_code error;
  if (!fs::is_regular_file(source, error)) {
    return Status::NotFound(source.string() + ": no such file");
  }
  CONVGATE_ASSIGN_OR_RETURN(std::shared_ptr<ov::Model> model, ReadOpenVinoModel(source));
  // Staged beside the output, the .bin moved first: OUT.xml never names weights not yet there.
  const fs::path staging = out_xml.parent_path() / (".staging-" + out_xml.filename().string());
  fs::remove_all(staging, error);
  fs::create_directories(staging, error);
  if (error) {
    return Status::Unavailable("cannot create " + staging.string() + ": " + error.message());
  }
  const fs::path staged_xml = staging / out_xml.filename();
  try {
    ov::save_model(model, staged_xml.string(), compress_to_fp16);
  } catch (const std::exception& e) {
    fs::remove_all(staging, error);
    return Status::Unavailable(source.string() + ": OpenVINO cannot save the IR " +
                               out_xml.string() + ": " + CleanMessage(e.what()));
  }
  fs::path staged_bin = staged_xml, out_bin = out_xml;
  staged_bin.replace_extension(".bin");
  out_bin.replace_extension(".bin");
  fs::rename(staged_bin, out_bin, error);
  if (!error) fs::rename(staged_xml, out_xml, error);
  const std::string problem = error ? error.message() : "";
  fs::remove_all(staging, error);
  if (!problem.empty()) {
    return Status::Unavailable("cannot move the IR into " + out_xml.string() + ": " + problem);
  }
  return Status::OK();
}

}  // namespace convgate::backends
